"""FabricLab engine: everything that runs without Qt.

``__version__`` is the project version from ``pyproject.toml`` (its one place). From a
source checkout it is read there, so an edit shows up without reinstalling; an installed
copy or a bundled app reads the package metadata that was built from the same file.
Cached results in a library are keyed on it.
"""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

DIST_NAME = "fabriclab"
UNKNOWN_VERSION = "0+unknown"


def project_version(root: Path | None = None) -> str:
    """The FabricLab version: ``root/pyproject.toml`` if it is FabricLab's, else the metadata.

    `root` defaults to the folder above this package (the checkout). Without either source
    the answer is ``0+unknown`` rather than an error, so the app still starts.
    """
    root = root if root is not None else Path(__file__).resolve().parent.parent
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            project = {}
        if project.get("name") == DIST_NAME and project.get("version"):
            return str(project["version"])
    try:
        return importlib.metadata.version(DIST_NAME)
    except importlib.metadata.PackageNotFoundError:
        return UNKNOWN_VERSION


__version__ = project_version()

# Before any kernel is defined: where numba may keep them (engine.runtime.numba_cache).
from engine.runtime.numba_cache import configure as _configure_kernel_cache  # noqa: E402

KERNEL_CACHE = _configure_kernel_cache(__version__)
