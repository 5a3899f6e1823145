"""Creating a library: the path holds nothing or a whole seeded library, even when the
creator is killed; two creators at once both succeed with one library seeded once."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.library import files
from engine.library.store import Library

from .conftest import SEED_NAMES, folder_state, run_unprivileged, small_seed

ROOT = Path(__file__).resolve().parents[3]
SLOW_SEEDS = 20

# A child that creates the library at argv[1] with a slow seed (so a kill lands mid-way), after
# waiting for the file argv[2] to appear when one is given; argv[3] == "nolock" takes away the
# folder lock, leaving only the move that never replaces a library.
CREATOR = f"""
import os, sys, time
from engine.library import creation
from engine.library.store import Library
from engine.presets.scenarios import load_preset

def seed(library):
    scenario = load_preset("rail-only-h100-1k")
    for i in range({SLOW_SEEDS}):
        scenario.metadata.name = f"slow-{{i:02d}}"
        library.save(scenario, note=f"seeded by {{os.getpid()}}")
        time.sleep(0.006)

if len(sys.argv) > 3 and sys.argv[3] == "nolock":
    creation.fcntl = None
print("ready", flush=True)
if len(sys.argv) > 2:
    while not os.path.exists(sys.argv[2]):
        time.sleep(0.002)
Library(sys.argv[1], seed=seed).close()
print("done", flush=True)
"""


def _creator(*args: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", CREATOR, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


def _slow_names() -> list[str]:
    return [f"slow-{i:02d}" for i in range(SLOW_SEEDS)]


def test_a_new_library_leaves_nothing_beside_it(tmp_path):
    path = tmp_path / "new" / "lib.fabriclab"
    with Library(path, seed=small_seed) as lib:
        assert sorted(lib.names()) == sorted(SEED_NAMES) and lib.message == ""
        assert [len(lib.versions(n)) for n in SEED_NAMES] == [1, 1, 1]
    assert os.listdir(path.parent) == ["lib.fabriclab"]
    assert path.read_bytes()[18:20] == b"\x02\x02"  # WAL, so two apps can share it


def test_a_seed_that_fails_leaves_no_library(tmp_path):
    path = tmp_path / "lib.fabriclab"

    def broken(library: Library) -> None:
        small_seed(library)
        raise RuntimeError("the seed broke")

    with pytest.raises(RuntimeError, match="the seed broke"):
        Library(path, seed=broken)
    assert os.listdir(tmp_path) == []


def test_leftovers_of_a_dead_creator_and_orphan_journals_are_cleared(tmp_path):
    path = tmp_path / "lib.fabriclab"
    for name in (".lib.fabriclab.0badc0de.creating", ".lib.fabriclab.0badc0de.creating-journal"):
        (tmp_path / name).write_bytes(b"half a library")
    files.sidecar(path, "-wal").write_bytes(b"a log of a file that is gone")
    (tmp_path / "notes.txt").write_text("mine")
    with Library(path, seed=small_seed) as lib:
        assert sorted(lib.names()) == sorted(SEED_NAMES)
    assert sorted(os.listdir(tmp_path)) == ["lib.fabriclab", "notes.txt"]


def test_creating_in_a_read_only_folder_is_a_clear_error(shared_folder):
    folder = shared_folder / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    run_unprivileged(
        "from pathlib import Path\nfrom engine.library.store import Library, LibraryError\n",
        f"""
folder = Path({str(folder)!r})
try:
    Library(folder / "lib.fabriclab")
except LibraryError as exc:
    assert "folder is read-only for you" in str(exc), exc
else:
    raise AssertionError("a library was created in a read-only folder")
assert os.listdir(folder) == [], os.listdir(folder)
print("ok")
""",
        shared_folder,
    )
    assert os.listdir(folder) == []


def test_killed_while_creating_leaves_nothing_or_a_whole_library(tmp_path):
    rng = random.Random(17)
    killed = whole = 0
    for attempt in range(10):
        path = tmp_path / f"lib-{attempt}.fabriclab"
        proc = _creator(str(path))
        time.sleep(rng.uniform(0.0, 0.25))
        proc.kill()
        out, _ = proc.communicate(timeout=30)
        killed += "done" not in out
        found = files.look(path)
        assert found.kind in (files.ABSENT, files.FILE), f"attempt {attempt}: {found.kind}"
        if found.kind == files.FILE:
            whole += 1
            with Library(path, create=False) as lib:
                assert lib.names() == _slow_names()
    assert killed >= 2, "too few kills landed during creation to test anything"
    for attempt in range(10):  # each path can be created now, clearing what the dead left
        with Library(tmp_path / f"lib-{attempt}.fabriclab", seed=small_seed) as lib:
            assert lib.names() in (_slow_names(), sorted(SEED_NAMES))
    assert sorted(os.listdir(tmp_path)) == sorted(f"lib-{i}.fabriclab" for i in range(10))


@pytest.mark.parametrize("lock", ["lock", "nolock"])
def test_two_creators_at_once_both_succeed_and_seed_once(tmp_path, lock):
    path, go = tmp_path / "shared.fabriclab", tmp_path / "go"
    procs = [_creator(str(path), str(go), lock) for _ in range(2)]
    go.write_text("")
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0 and "done" in out, err
    go.unlink()
    before = folder_state(tmp_path)
    with Library(path, create=False) as lib:
        assert lib.names() == _slow_names()
        versions = [lib.versions(name) for name in lib.names()]
    assert all(len(v) == 1 for v in versions)
    assert len({v[0]["note"] for v in versions}) == 1  # one creator's seed, all of it
    assert sorted(folder_state(tmp_path)) == sorted(before) == ["shared.fabriclab"]
