"""Shared helpers of the library tests: a small seeded library and a folder's exact contents.

`folder_state` records every entry of a folder (bytes of regular files, the kind of anything
else), so a test can say a refused file was left byte for byte as it was and that nothing
(``-wal``, ``-shm``, a temporary file) appeared beside it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from engine.library.store import Library
from engine.presets.scenarios import load_preset

SEED_NAMES = ("seed-a", "seed-b", "seed-c")


def small_seed(library: Library) -> None:
    """Three copies of one preset under their own names (fast to write)."""
    scenario = load_preset("rail-only-h100-1k")
    for name in SEED_NAMES:
        scenario.metadata.name = name
        scenario.metadata.tags = ["seed", name]
        library.save(scenario, note="seed")


def folder_state(folder: Path) -> dict[str, object]:
    """Each entry of `folder`: a regular file's bytes, else its kind (and a folder's listing)."""
    state: dict[str, object] = {}
    for entry in sorted(os.listdir(folder)):
        mode = os.lstat(folder / entry).st_mode
        if stat.S_ISREG(mode):
            state[entry] = (folder / entry).read_bytes()
        elif stat.S_ISDIR(mode):
            state[entry] = ("folder", sorted(os.listdir(folder / entry)))
        else:
            state[entry] = ("special", stat.S_IFMT(mode))
    return state


@pytest.fixture()
def library_path(tmp_path: Path) -> Path:
    """A closed, seeded library alone in its folder."""
    path = tmp_path / "lib.fabriclab"
    Library(path, seed=small_seed).close()
    assert sorted(os.listdir(tmp_path)) == ["lib.fabriclab"]
    return path
