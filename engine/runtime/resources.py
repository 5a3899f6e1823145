"""One lookup for the files the engine and app ship with (catalog, presets, icons).

It works the same from a source checkout and from a bundled app (PyInstaller puts data
under ``sys._MEIPASS``), so no other module builds resource paths itself.
"""

from __future__ import annotations

import sys
from pathlib import Path


def resource_dir() -> Path:
    """The folder that holds resources/ contents for this installation."""
    bundle_root = getattr(sys, "_MEIPASS", None)
    if bundle_root is not None:
        return Path(bundle_root) / "resources"
    return Path(__file__).resolve().parents[2] / "resources"


def resource_path(*parts: str) -> Path:
    """The path of a shipped resource file, e.g. ``resource_path("catalog.json")``."""
    return resource_dir().joinpath(*parts)
