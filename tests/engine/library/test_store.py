"""The scenario library: round trips, history, search, trash, safety, migrations, sharing."""

from __future__ import annotations

import multiprocessing
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.analysis import open_library
from engine.library.plain_json import json_safe
from engine.library.scenario_diff import diff
from engine.library.store import PAGE_BYTES, Library, LibraryError, listing_sql
from engine.model.scenario import to_json
from engine.presets.scenarios import PRESETS, load_preset

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture()
def library(tmp_path):
    lib = open_library(tmp_path / "lib.fabriclab")
    yield lib
    lib.close()


def test_a_new_library_is_seeded_with_every_preset_unchanged(library):
    assert sorted(library.names()) == sorted(PRESETS)
    for name in PRESETS:
        assert library.load(name) == load_preset(name)
        assert to_json(library.load(name)) == to_json(load_preset(name))


def test_the_list_reads_an_index_not_every_scenarios_body(library):
    # A new library's pages hold a scenario's JSON without overflow, and the list reads
    # its own index in its order, not the table (benchmarks/run.py, library_open_10k_s).
    conn = library.db.conn
    assert conn.execute("PRAGMA page_size").fetchone()[0] == PAGE_BYTES
    for sort in ("modified", "name", "created"):
        sql = listing_sql(sort, trash=False)
        plan = " ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
        assert "COVERING INDEX idx_scenarios_listing" in plan, plan
    by_modified = [e.name for e in library.list()]
    assert by_modified == [
        row[0]
        for row in conn.execute(
            "select name from scenarios where deleted_at is null order by modified desc"
        )
    ]


def test_every_save_is_a_version_and_old_versions_load(library):
    s = library.load("dgx-h100-ib-ndr-1k")
    s.groups[0].count = 64
    assert library.save(s, note="half the servers") == 2
    versions = library.versions("dgx-h100-ib-ndr-1k")
    assert [v["note"] for v in versions] == ["preset shipped with FabricLab", "half the servers"]
    assert library.load("dgx-h100-ib-ndr-1k", version=1).groups[0].count == 128
    assert library.load("dgx-h100-ib-ndr-1k").groups[0].count == 64
    assert diff(library.load("dgx-h100-ib-ndr-1k", 1), library.load("dgx-h100-ib-ndr-1k")) == [
        {"path": "groups.servers.count", "a": 128, "b": 64}
    ]


def test_search_finds_by_tag_by_description_words_and_by_version_notes(library):
    assert set(library.search("spectrum-x")) == {
        "dgx-h100-roce-spectrumx-1k",
        "b300-spectrumx-2plane-1k",
    }
    assert "h100-ib-ndr-16k" in library.search("fat-tree")  # in the description
    assert set(library.search("rail-only")) == {"rail-only-h100-1k"}
    s = library.load("hgx-h100-roce-ecmp-1k")
    library.save(s, note="tried more queue pairs")
    assert library.search("queue pairs") == ["hgx-h100-roce-ecmp-1k"]


def test_rename_duplicate_delete_and_restore(library):
    library.rename("rail-only-h100-1k", "rail-only-study")
    assert (
        "rail-only-study" in library.names()
        and library.load("rail-only-study").metadata.name == "rail-only-study"
    )
    library.duplicate("rail-only-study", "rail-only-copy")
    library.delete("rail-only-study")
    assert "rail-only-study" not in library.names()
    assert [e.name for e in library.list(trash=True)] == ["rail-only-study"]
    library.restore("rail-only-study")
    assert {"rail-only-study", "rail-only-copy"} <= set(library.names())
    with pytest.raises(LibraryError, match="exists already"):
        library.rename("rail-only-copy", "rail-only-study")


def test_import_export_and_copy_between_libraries(library, tmp_path):
    out = tmp_path / "ib.json"
    library.export_json("dgx-h100-ib-ndr-1k", out)
    other = Library(tmp_path / "other.fabriclab")
    assert other.names() == []
    assert other.import_json(out) == "dgx-h100-ib-ndr-1k"
    library.copy_to(other, "h100-roce-128k")
    assert sorted(other.names()) == ["dgx-h100-ib-ndr-1k", "h100-roce-128k"]
    other.close()


def test_cached_results_follow_the_content(library):
    s = library.load("dgx-h100-ib-ndr-1k")
    library.cache_result(s, "collective", {"busbw_GBps": 300.0})
    assert library.cached_result(s, "collective") == {"busbw_GBps": 300.0}
    s.fabric.switch_latency_ns = 600
    assert library.cached_result(s, "collective") is None


def test_autosave_is_offered_back_until_the_next_save(library):
    s = load_preset("rail-only-h100-1k")
    s.metadata.name = "unsaved edit"
    library.autosave(s)
    assert library.recover() == s
    library.save(s)
    assert library.recover() is None


def test_clear_autosave_forgets_the_unsaved_scenario(library):
    s = load_preset("rail-only-h100-1k")
    assert library.autosaved_at() is None
    library.autosave(s)
    assert library.recover() == s and library.autosaved_at() is not None
    library.clear_autosave()
    assert library.recover() is None and library.autosaved_at() is None


def test_cached_results_may_hold_numpy_values(library):
    s = library.load("dgx-h100-ib-ndr-1k")
    report = {
        "util": np.array([0.25, 0.5]),
        "gpus": np.int64(1024),
        "ok": np.bool_(True),
        "pair": (1, 2.5),
        3: {"mean": np.float64(0.75)},
    }
    library.cache_result(s, "report", report)
    got = library.cached_result(s, "report")
    assert got == {
        "util": [0.25, 0.5],
        "gpus": 1024,
        "ok": True,
        "pair": [1, 2.5],
        "3": {"mean": 0.75},
    }
    assert type(got["gpus"]) is int and type(got["util"][0]) is float
    assert json_safe(report) == got


def test_a_file_that_is_not_a_library_is_refused_and_left_untouched(tmp_path):
    bad = tmp_path / "notes.fabriclab"
    bad.write_bytes(b"these are my notes, not a database")
    with pytest.raises(LibraryError, match="not a FabricLab library"):
        open_library(bad)
    assert bad.read_bytes() == b"these are my notes, not a database"


def test_a_damaged_library_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "lib.fabriclab"
    open_library(path).close()
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # wreck the schema page, keep the header
    path.write_bytes(bytes(data))
    before = path.read_bytes()
    with pytest.raises(LibraryError, match=r"damaged|not a FabricLab library"):
        open_library(path)
    assert path.read_bytes() == before


def test_a_library_from_a_newer_fabriclab_opens_read_only(tmp_path):
    path = tmp_path / "lib.fabriclab"
    open_library(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    lib = Library(path)
    assert lib.read_only and "newer FabricLab" in lib.message
    assert lib.load("dgx-h100-ib-ndr-1k") == load_preset("dgx-h100-ib-ndr-1k")
    with pytest.raises(LibraryError, match="read-only"):
        lib.save(load_preset("dgx-h100-ib-ndr-1k"))
    lib.close()


def test_an_older_library_is_migrated(tmp_path):
    path = tmp_path / "old.fabriclab"
    conn = sqlite3.connect(path)
    conn.executescript((ROOT / "tests" / "fixtures" / "library-v0.sql").read_text())
    conn.close()
    lib = Library(path)
    assert "migrated" in lib.message
    assert lib.names() == ["old-leaf-spine"]
    assert lib.load("old-leaf-spine").groups[0].count == 2
    assert lib.search("legacy") == ["old-leaf-spine"]
    assert lib.versions("old-leaf-spine")[0]["note"] == "migrated from format 0"
    lib.close()


def _writer(path: str, tag: str, count: int) -> None:
    lib = Library(path)
    s = load_preset("rail-only-h100-1k")
    for i in range(count):
        s.metadata.name = f"{tag}-{i % 3}"
        s.workload.seed = i
        lib.save(s, note=f"{tag} {i}")
    lib.close()


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    path = str(tmp_path / "shared.fabriclab")
    open_library(path).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, tag, 25)) for tag in ("alice", "bob")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    lib = Library(path)
    notes = [
        v["note"]
        for name in lib.names()
        if name.startswith(("alice", "bob"))
        for v in lib.versions(name)
    ]
    assert sorted(notes) == sorted(
        [f"alice {i}" for i in range(25)] + [f"bob {i}" for i in range(25)]
    )
    lib.close()


def test_cli_reads_library_scenarios_by_name(tmp_path):
    env = {"FABRICLAB_LIBRARY": str(tmp_path / "cli.fabriclab"), "PATH": "/usr/bin:/bin"}
    open_library(env["FABRICLAB_LIBRARY"]).close()  # reading verbs need not create one
    listing = subprocess.run(
        [sys.executable, "main.py", "library", "--path", env["FABRICLAB_LIBRARY"], "list"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert listing.returncode == 0, listing.stderr
    assert "dgx-h100-ib-ndr-1k" in listing.stdout
    proc = subprocess.run(
        [sys.executable, "main.py", "validate", "library:rail-only-h100-1k"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    missing = subprocess.run(
        [sys.executable, "main.py", "validate", "library:nope"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert missing.returncode == 2 and "no scenario named 'nope'" in missing.stderr
    assert "Traceback" not in missing.stderr
