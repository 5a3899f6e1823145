"""Keeping numba's on-disk cache honest when kernels are inlined across modules.

numba keys a cached kernel by its own source file. A kernel that inlines functions from
other modules (``inline="always"``) is not recompiled when only those modules change, and
runs the old code from the cache. `refresh` keeps a stamp of every source a package's
kernels are built from and, when the stamp no longer matches, drops the package's cached
kernels so they compile afresh (a fresh clone never has the problem; an edited or upgraded
install does).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

STAMP_NAME = "kernel-sources.stamp"


def sources_digest(package_dir: Path) -> str:
    """A digest of the package's Python sources."""
    h = hashlib.sha1()
    for path in sorted(package_dir.glob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def refresh(package_dir: str | Path) -> bool:
    """Drop the package's cached numba kernels when its sources changed since they were
    cached; True when it dropped them. Never fails: an unwritable cache is left alone."""
    package = Path(package_dir)
    cache = package / "__pycache__"
    stamp = cache / STAMP_NAME
    digest = sources_digest(package)
    try:
        if stamp.read_text(encoding="utf-8") == digest:
            return False
    except OSError:
        pass
    try:
        for pattern in ("*.nbi", "*.nbc"):
            for path in cache.glob(pattern):
                path.unlink()
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest, encoding="utf-8")
    except OSError:
        return False
    return True


def kernels_cached(engine_dir: str | Path, cache_dir: str | None = None) -> bool:
    """Whether compiled kernels are on disk already (an index file in numba's cache: the
    `cache_dir` given, as NUMBA_CACHE_DIR sets it, else beside the engine's modules). A
    first start without them compiles every kernel the first run meets."""
    root = Path(cache_dir) if cache_dir else Path(engine_dir)
    return any(True for _ in root.rglob("*.nbi"))
