"""Damaged, foreign, locked and read-only library files: one clear `LibraryError`, never a
traceback, and the file left byte for byte as it was with nothing new beside it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine.library import files
from engine.library.schema import SCHEMA_VERSION
from engine.library.store import Library, LibraryError
from engine.presets.scenarios import load_preset

from .conftest import SEED_NAMES, folder_state, run_unprivileged, small_seed

ROOT = Path(__file__).resolve().parents[3]
FIXTURE_V0 = ROOT / "tests" / "fixtures" / "library-v0.sql"
QUICK = 0.3  # seconds to wait for a lock in these tests


def refused(path: Path, match: str, **options) -> str:
    """Open `path` (creating allowed unless `options` say otherwise) and expect a refusal
    matching `match` that leaves the folder exactly as it was; returns the message."""
    before = folder_state(path.parent)
    with pytest.raises(LibraryError, match=match) as info:
        Library(path, seed=small_seed, **{"timeout": QUICK, **options})
    assert folder_state(path.parent) == before
    assert "Traceback" not in str(info.value) and str(path) in str(info.value)
    return str(info.value)


def edit(path: Path, *statements: str) -> None:
    """Change a closed library with plain SQLite (the damage a test needs)."""
    conn = sqlite3.connect(path, isolation_level=None)
    for sql in statements:
        conn.execute(sql)
    conn.close()
    for suffix in files.SIDECARS:
        assert not files.sidecar(path, suffix).exists()


# -- not SQLite, cut short, overwritten ------------------------------------------------------
@pytest.mark.parametrize("keep", [50, 100, 4096 + 17, "half"])
def test_a_truncated_library_is_refused_as_damaged(library_path, keep):
    data = library_path.read_bytes()
    library_path.write_bytes(data[: len(data) // 2 if keep == "half" else keep])
    refused(library_path, r"is damaged \(truncated")


def test_random_bytes_are_not_a_library(tmp_path):
    path = tmp_path / "noise.fabriclab"
    path.write_bytes(os.urandom(8192))
    refused(path, r"not a FabricLab library \(not an SQLite file\)")


def test_random_pages_behind_a_good_header_are_damage(library_path):
    data = bytearray(library_path.read_bytes())
    data[4096:] = os.urandom(len(data) - 4096)
    library_path.write_bytes(bytes(data))
    refused(library_path, r"is damaged \(")


def test_an_sqlite_file_that_is_not_a_library_is_refused(tmp_path):
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("create table notes (body text)")
    conn.commit()
    conn.close()
    refused(path, r"not a FabricLab library \(an SQLite file with no scenarios table\)")


def test_an_sqlite_file_with_no_tables_is_not_a_library(tmp_path):
    path = tmp_path / "empty.db"
    conn = sqlite3.connect(path)
    conn.execute("create table t (x)")
    conn.execute("drop table t")
    conn.close()
    refused(path, r"not a FabricLab library \(an SQLite database with no tables\)")


# -- a library with parts missing or wrong ---------------------------------------------------
def test_a_library_missing_a_table_is_damaged(library_path):
    edit(library_path, "drop table versions")
    refused(library_path, r"is damaged \(it has no versions table\)")


def test_a_library_missing_a_column_is_damaged(library_path):
    # SQLite drops no column an index reads: the listing index goes first
    edit(
        library_path,
        "drop index idx_scenarios_listing",
        "alter table scenarios drop column deleted_at",
    )
    refused(library_path, r"is damaged \(table scenarios has no column deleted_at\)")


def test_tags_that_are_not_json_are_damage(library_path):
    edit(library_path, "update scenarios set tags = 'seed, not json' where name = 'seed-b'")
    refused(library_path, r"damaged \(the tags of scenario 'seed-b' are not a JSON list")


def test_a_null_scenario_time_is_damage(library_path):
    edit(library_path, "update scenarios set created = NULL where name = 'seed-a'")
    refused(library_path, r"damaged \(scenario 'seed-a' has no creation time\)")


def test_a_null_version_time_is_damage(library_path):
    edit(library_path, "update versions set created = NULL where id = 2")
    refused(library_path, r"damaged \(a saved version of scenario 'seed-b' has no time")


def test_a_damaged_schema_version_never_reruns_the_old_migration(library_path):
    edit(library_path, "PRAGMA user_version = 0")
    refused(
        library_path,
        rf"damaged \(its schema version says 0 but its tables are those of version {SCHEMA_VERSION}",
    )


def test_a_newer_file_claiming_version_1_is_not_migrated_again(library_path):
    # a version 2 file (it has the measurements table) whose user_version says 1
    edit(library_path, "PRAGMA user_version = 1")
    refused(
        library_path, r"damaged \(its schema version says 1 but its tables are those of version 2"
    )


def test_a_negative_schema_version_is_damage(library_path):
    edit(library_path, "PRAGMA user_version = -3")
    refused(library_path, r"damaged \(its schema version -3 is not valid\)")


def test_a_schema_0_body_that_cannot_migrate_is_damage(tmp_path):
    path = tmp_path / "old.fabriclab"
    conn = sqlite3.connect(path)
    conn.executescript(FIXTURE_V0.read_text())
    conn.execute("insert into scenarios values ('broken', 'not json', NULL)")
    conn.commit()
    conn.close()
    refused(path, r"damaged \(scenario 'broken' is not a JSON object, so it cannot be migrated")


# -- from a newer FabricLab ------------------------------------------------------------------
def test_a_newer_library_is_read_but_never_written(library_path):
    edit(library_path, "PRAGMA user_version = 7")
    before = folder_state(library_path.parent)
    lib = Library(library_path, timeout=QUICK)
    assert lib.read_only and "written by a newer FabricLab" in lib.message
    assert sorted(lib.names()) == sorted(SEED_NAMES)
    with pytest.raises(LibraryError, match="written by a newer FabricLab"):
        lib.save(load_preset("rail-only-h100-1k"))
    lib.autosave(load_preset("rail-only-h100-1k"))  # quietly skipped, as before
    lib.close()
    assert folder_state(library_path.parent) == before


def test_a_newer_library_this_code_cannot_read_is_refused(library_path):
    edit(library_path, "PRAGMA user_version = 7", "drop table autosave")
    refused(library_path, r"written by a newer FabricLab .* cannot read it \(it has no autosave")


# -- not a file at all -----------------------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_is_refused_without_blocking(tmp_path):
    path = tmp_path / "pipe.fabriclab"
    os.mkfifo(path)
    refused(path, r"not a FabricLab library \(it is a named pipe, not a file\)")
    refused(path, "named pipe", read_only=True)


def test_a_folder_is_refused(tmp_path):
    path = tmp_path / "folder.fabriclab"
    path.mkdir()
    refused(path, r"not a FabricLab library \(it is a folder, not a file\)")


def test_a_broken_link_is_refused(tmp_path):
    path = tmp_path / "link.fabriclab"
    path.symlink_to(tmp_path / "gone.fabriclab")
    refused(path, "a link to a file that does not exist")


# -- nothing there -----------------------------------------------------------------------------
@pytest.mark.parametrize("options", [{"create": False}, {"read_only": True}])
def test_reading_a_missing_library_never_creates_one(tmp_path, options):
    path = tmp_path / "sub" / "missing.fabriclab"
    with pytest.raises(LibraryError, match=f"no library at {path}"):
        Library(path, **options)
    assert os.listdir(tmp_path) == []


def test_an_empty_file_is_no_library_yet(tmp_path):
    path = tmp_path / "empty.fabriclab"
    path.write_bytes(b"")
    refused(path, r"no library at .*\(the file is empty\)", create=False)
    with Library(path, seed=small_seed) as lib:  # what an interrupted old version left
        assert sorted(lib.names()) == sorted(SEED_NAMES)


# -- locked, busy, read-only --------------------------------------------------------------------
def _hold(path: Path, journal: str) -> sqlite3.Connection:
    """Another connection holding `path` locked in an exclusive write transaction."""
    conn = sqlite3.connect(path, isolation_level=None)
    if journal == "wal":
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")  # readers are shut out too
    else:
        conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("BEGIN EXCLUSIVE")
    conn.execute("update scenarios set description = 'being edited'")
    return conn


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_a_locked_library_is_busy_not_damaged(library_path, journal):
    holder = _hold(library_path, journal)
    try:
        message = refused(library_path, r"is locked by another process \(busy\)")
        assert "damaged" not in message
        refused(library_path, r"locked by another process \(busy\)", read_only=True)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with Library(library_path) as lib:
        assert sorted(lib.names()) == sorted(SEED_NAMES)


def test_a_save_that_waits_too_long_says_the_library_is_busy(library_path):
    lib = Library(library_path, timeout=QUICK)
    other = sqlite3.connect(library_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(LibraryError, match="library busy: another FabricLab is writing to"):
            lib.save(load_preset("rail-only-h100-1k"))
        assert sorted(lib.names()) == sorted(SEED_NAMES)  # reading goes on meanwhile
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert lib.save(load_preset("rail-only-h100-1k")) == 1
    lib.close()


def test_the_default_wait_has_margin_over_a_slow_save(library_path):
    with Library(library_path) as lib:
        assert lib.timeout >= 30
        assert lib.db.execute("PRAGMA busy_timeout").fetchone()[0] >= 30_000


def test_a_read_only_file_opens_for_reading(shared_folder):
    path = shared_folder / "lib.fabriclab"
    Library(path, seed=small_seed).close()
    path.chmod(0o444)
    before = folder_state(shared_folder)
    run_unprivileged(
        "from pathlib import Path\n"
        "from engine.library.store import Library, LibraryError\n"
        "from engine.presets.scenarios import load_preset\n"
        "preset = load_preset('rail-only-h100-1k')\n",
        f"""
with Library(Path({str(path)!r})) as lib:
    assert lib.read_only and "read-only for you" in lib.message, lib.message
    assert sorted(lib.names()) == {sorted(SEED_NAMES)!r}, lib.names()
    try:
        lib.save(preset)
    except LibraryError as exc:
        assert "read-only for you" in str(exc), exc
    else:
        raise AssertionError("a read-only library took a save")
print("ok")
""",
        shared_folder,
    )
    assert folder_state(shared_folder) == before


def test_a_file_you_may_not_write_opens_for_reading(library_path, monkeypatch):
    """The same as above for any user: the permission check says no, SQLite opens read-only."""
    monkeypatch.setattr(files, "write_refusal", lambda p: f"{p} is read-only for you; reading")
    before = folder_state(library_path.parent)
    with Library(library_path) as lib:
        assert lib.read_only and "read-only for you" in lib.message
        assert sorted(lib.names()) == sorted(SEED_NAMES)
        assert lib.load("seed-a").metadata.name == "seed-a"
        with pytest.raises(LibraryError, match="read-only for you"):
            lib.delete("seed-a")
    assert folder_state(library_path.parent) == before


def test_read_only_shows_an_older_library_migrated_and_leaves_it_alone(tmp_path):
    path = tmp_path / "old.fabriclab"
    conn = sqlite3.connect(path)
    conn.executescript(FIXTURE_V0.read_text())
    conn.close()
    before = folder_state(tmp_path)
    with Library(path, read_only=True) as lib:
        assert lib.names() == ["old-leaf-spine"] and "the file is unchanged" in lib.message
        assert lib.load("old-leaf-spine").groups[0].count == 2
    assert folder_state(tmp_path) == before


# -- trouble that appears after opening ---------------------------------------------------------
def test_damage_met_after_opening_is_a_library_error(library_path):
    lib = Library(library_path)
    edit_live = sqlite3.connect(library_path, isolation_level=None)
    edit_live.execute("update scenarios set tags = '{oops' where name = 'seed-c'")
    with pytest.raises(LibraryError, match="tags of scenario 'seed-c' are not a JSON list"):
        lib.list()
    edit_live.execute("drop table versions")
    edit_live.close()
    with pytest.raises(LibraryError, match=r"is damaged \(no such table: versions\)"):
        lib.versions("seed-a")
    lib.close()


def test_text_that_is_not_utf8_is_damage_on_opening_or_reading(library_path):
    lib = Library(library_path)
    other = sqlite3.connect(library_path, isolation_level=None)
    other.execute("update scenarios set description = cast(x'c3ff' as text)")
    other.close()
    with pytest.raises(LibraryError, match=r"is damaged \(it holds text that is not valid UTF-8"):
        lib.list()
    lib.close()
    refused(library_path, r"is damaged \(it holds text that is not valid UTF-8\)")


def test_a_library_left_half_written_is_put_right_and_opened(tmp_path):
    """A schema 0 file (rollback journal) whose writer was killed mid-transaction."""
    path = tmp_path / "old.fabriclab"
    conn = sqlite3.connect(path)
    conn.executescript(FIXTURE_V0.read_text())
    conn.close()
    writer = (
        "import os, sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('PRAGMA cache_size = 1')\n"
        "c.execute('BEGIN')\n"
        "for i in range(200):\n"
        "    c.execute('insert into scenarios values (?, ?, NULL)', (f'x{i}', 'y' * 5000))\n"
        "os.kill(os.getpid(), 9)\n"
    )
    subprocess.run([sys.executable, "-c", writer, str(path)], timeout=60)
    assert files.sidecar(path, "-journal").exists()
    with Library(path) as lib:
        assert lib.names() == ["old-leaf-spine"] and "migrated" in lib.message
