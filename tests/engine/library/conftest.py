"""Shared helpers of the library tests: a small seeded library and a folder's exact contents.

`run_unprivileged` runs a check where file modes are in force (as `nobody` under root).
`folder_state` records every entry of a folder (bytes of regular files, the kind of anything
else), so a test can say a refused file was left byte for byte as it was and that nothing
(``-wal``, ``-shm``, a temporary file) appeared beside it.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
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


ROOT = Path(__file__).resolve().parents[3]
NOBODY = 65534  # the unprivileged account every Linux has
DROP_ROOT = f"""
import os
if os.geteuid() == 0:  # root ignores file modes: check as nobody (imports are done)
    os.setgroups([])
    os.setgid({NOBODY})
    os.setuid({NOBODY})
"""


def run_unprivileged(imports: str, check: str, folder: Path) -> None:
    """Run `check` (Python) where file permissions are in force: in a child that does its
    `imports` and then, when the tests run as root, drops to `nobody` (root ignores file
    modes, and the interpreter may live where `nobody` cannot reach). `folder` is the
    child's working folder; `check` fails the test by raising, and prints "ok" at its end."""
    done = subprocess.run(
        [sys.executable, "-c", imports + DROP_ROOT + check],
        cwd=folder,
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONPATH": str(ROOT),
            "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": str(folder),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("ok"), done.stdout


@pytest.fixture()
def shared_folder() -> Iterator[Path]:
    """A folder outside pytest's root-only temporary tree that an unprivileged child can
    reach and write, as `run_unprivileged` needs (removed afterwards)."""
    folder = Path(tempfile.mkdtemp(prefix="fabriclab-perm-"))
    folder.chmod(0o777)
    try:
        yield folder
    finally:
        for dirpath, dirnames, _ in os.walk(folder):
            for d in dirnames:
                os.chmod(os.path.join(dirpath, d), 0o755)
        shutil.rmtree(folder, ignore_errors=True)
