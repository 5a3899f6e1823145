"""Where numba keeps the engine's compiled kernels, chosen so that every install can run.

Every kernel is ``@njit(cache=True)``, and numba refuses to even define such a function when
it finds no writable place for its cache ("no locator available"), so an install whose
folder is read-only, under a home with no writable ``~/.cache``, would die at import. The
choice is made once, before numba is imported (it reads ``NUMBA_CACHE_DIR`` once):

1. an explicit ``NUMBA_CACHE_DIR`` is respected;
2. a checkout or installed package whose ``__pycache__`` is writable keeps numba's default
   (beside each module; `engine.runtime.jit_cache` keeps it honest);
3. otherwise (a bundled app, a system-wide or read-only install) the user's cache,
   ``$XDG_CACHE_HOME/fabriclab/numba-<version>``, per version so that a new version never
   loads an older one's code;
4. otherwise a folder in the system's temporary directory, per user and version;
5. otherwise nothing is cached: kernels compile in every process.

The last two are said once, in `CacheChoice.note`, which the app and the CLI print.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CacheChoice:
    """Where the kernels are cached: `directory` set as NUMBA_CACHE_DIR (None: numba's
    default, or nothing when `cached` is False), and `note`, a sentence for the user when
    the choice costs them something (empty otherwise)."""

    directory: Path | None
    cached: bool = True
    note: str = ""


def numba_cache_dir(version: str, environ: MutableMapping[str, str], home: Path) -> Path:
    """The user's cache folder for this version's kernels.

    ``$XDG_CACHE_HOME/fabriclab/numba-<version>`` (``~/.cache`` when XDG_CACHE_HOME is unset
    or not absolute, as the XDG spec asks), so a new version never loads an older one's code.
    """
    base = environ.get("XDG_CACHE_HOME", "")
    cache_home = Path(base) if base and os.path.isabs(base) else home / ".cache"
    return cache_home / "fabriclab" / f"numba-{version}"


def temporary_cache_dir(version: str, temp_root: Path) -> Path:
    """The fallback folder in the temporary directory, per user (where the platform has
    user ids) and version."""
    user = str(os.getuid()) if hasattr(os, "getuid") else "user"
    return temp_root / f"fabriclab-numba-{user}-{version}"


def writable(directory: Path) -> bool:
    """Whether a file can be created in `directory` (made if missing), tried for real as
    numba does: permission bits say nothing of read-only mounts or of root."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=directory).close()
    except OSError:
        return False
    return True


def owned_by_me(directory: Path) -> bool:
    """Whether `directory` belongs to this user: a folder in a shared temporary directory
    that someone else made could hand this process their compiled code."""
    if not hasattr(os, "getuid"):
        return True
    try:
        return directory.stat().st_uid == os.getuid()
    except OSError:
        return False


def choose_cache(
    package_dir: Path,
    version: str,
    environ: MutableMapping[str, str],
    frozen: bool,
    home: Path,
    temp_root: Path,
    can_write: Callable[[Path], bool] = writable,
) -> CacheChoice:
    """Decide where the kernels of the package in `package_dir` are cached (see the module
    docstring for the order); changes nothing but the folders `can_write` makes to try."""
    if environ.get("NUMBA_CACHE_DIR"):
        return CacheChoice(None)
    if not frozen and can_write(package_dir / "__pycache__"):
        return CacheChoice(None)
    user = numba_cache_dir(version, environ, home)
    if can_write(user):
        return CacheChoice(user)
    fallback = temporary_cache_dir(version, temp_root)
    if can_write(fallback) and owned_by_me(fallback):
        return CacheChoice(
            fallback,
            note=(
                f"note: compiled kernels are kept in {fallback} (neither the install nor "
                f"{user.parent.parent} is writable); they compile again when it is cleared"
            ),
        )
    return CacheChoice(
        None,
        cached=False,
        note=(
            "note: no writable folder for compiled kernels (the install, "
            f"{user.parent.parent} and {temp_root} are read-only); they compile in every run"
        ),
    )


def apply_cache_choice(choice: CacheChoice, environ: MutableMapping[str, str]) -> None:
    """Put `choice` into effect: set NUMBA_CACHE_DIR, or turn numba's caching off when no
    folder can take it. Must run before the first kernel is defined."""
    if choice.directory is not None:
        environ["NUMBA_CACHE_DIR"] = str(choice.directory)
    if not choice.cached:
        from numba.core.dispatcher import Dispatcher

        Dispatcher.enable_caching = _no_caching  # type: ignore[method-assign]


def _no_caching(self) -> None:
    """numba's `enable_caching` when nothing is writable: the kernel stays uncached."""


def configure(version: str, environ: MutableMapping[str, str] | None = None) -> CacheChoice:
    """Choose and apply the kernel cache for the engine package of `version` (this
    process's environment by default); called once when `engine` is imported."""
    environ = os.environ if environ is None else environ
    engine_dir = Path(__file__).resolve().parent.parent
    try:
        home = Path.home()
    except (RuntimeError, KeyError):  # no HOME and no password entry
        home = Path(os.sep) / "nonexistent"
    try:
        temp_root = Path(tempfile.gettempdir())
    except OSError:  # no usable temporary directory at all
        temp_root = Path(os.sep) / "tmp"
    frozen = bool(getattr(sys, "frozen", False))
    choice = choose_cache(engine_dir, version, environ, frozen, home, temp_root)
    apply_cache_choice(choice, environ)
    return choice
