"""Measured runs in the library: stored and read back whole, listed, deleted, refused when
they cannot be stored, and a schema 1 library migrated to hold them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine.analysis import (
    import_nccl_tests,
    measurement_run,
    read_nccl_tests,
    store_run,
)
from engine.library.measurements import Measurement
from engine.library.schema import SCHEMA_VERSION
from engine.library.store import Library, LibraryError

from .conftest import SEED_NAMES, folder_state

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nccl_tests"
ALL_REDUCE = FIXTURES / "all_reduce_perf_8xh100.txt"
SENDRECV = FIXTURES / "sendrecv_perf_16xb200.txt"


def user_version(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def as_version_1(path: Path) -> None:
    """Turn a closed library into the file schema 1 wrote: no measurements table."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("drop table measurements")
    conn.execute("PRAGMA user_version = 1")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()


def test_a_run_round_trips_through_the_library(library_path):
    run = read_nccl_tests(ALL_REDUCE)
    with Library(library_path) as lib:
        stored = store_run(lib, run, scenario=SEED_NAMES[0])
    assert stored.id is not None and stored.imported
    assert (stored.name, stored.source, stored.scenario) == (
        "all_reduce_perf_8xh100",
        "all_reduce_perf_8xh100.txt",
        SEED_NAMES[0],
    )
    with Library(library_path) as lib:
        again = lib.measurement("all_reduce_perf_8xh100")
        assert again == stored
        assert measurement_run(again) == run
        assert lib.measurements() == [stored]
        assert lib.measurements(scenario=SEED_NAMES[0]) == [stored]
        assert lib.measurements(scenario=SEED_NAMES[1]) == []


def test_every_column_is_kept(library_path):
    run = read_nccl_tests(SENDRECV)
    with Library(library_path) as lib:
        _, stored = import_nccl_tests(lib, SENDRECV, name="b200 p2p")
    conn = sqlite3.connect(library_path)
    conn.row_factory = sqlite3.Row
    row = dict(conn.execute("select * from measurements").fetchone())
    conn.close()
    assert row["name"] == "b200 p2p" and row["op"] == "send-recv" and row["ranks"] == 16
    assert (row["gpu"], row["nccl_version"], row["dtype"]) == ("NVIDIA B200", "2.29.7", "float")
    assert row["source"] == "sendrecv_perf_16xb200.txt" and row["scenario"] is None
    assert row["imported"] == stored.imported and row["points"].startswith("[{")
    assert stored.to_dict()["points"] == run.to_dict()["points"]


def test_names_are_unique_and_a_default_name_is_made_free(library_path):
    with Library(library_path) as lib:
        first = import_nccl_tests(lib, ALL_REDUCE)[1]
        second = import_nccl_tests(lib, ALL_REDUCE)[1]
        third = import_nccl_tests(lib, ALL_REDUCE)[1]
        assert [first.name, second.name, third.name] == [
            "all_reduce_perf_8xh100",
            "all_reduce_perf_8xh100 (2)",
            "all_reduce_perf_8xh100 (3)",
        ]
        with pytest.raises(
            LibraryError, match="a measurement named 'all_reduce_perf_8xh100' exists"
        ):
            import_nccl_tests(lib, ALL_REDUCE, name="all_reduce_perf_8xh100")
        assert len(lib.measurements()) == 3


def test_a_measurement_of_a_scenario_the_library_lacks_is_refused(library_path):
    with Library(library_path) as lib:
        with pytest.raises(LibraryError, match=r"no scenario named 'nowhere' in lib\.fabriclab"):
            import_nccl_tests(lib, ALL_REDUCE, scenario="nowhere")
        with pytest.raises(LibraryError, match="a measurement needs a name"):
            store_run(lib, read_nccl_tests(ALL_REDUCE), name="  ")
        assert lib.measurements() == []


def test_points_that_are_not_json_are_refused(library_path):
    bad = Measurement("x", "all-reduce", 2, "gpu", None, "float", "", (float("nan"),))
    with Library(library_path) as lib:
        with pytest.raises(LibraryError, match="the points of measurement 'x' are not JSON"):
            lib.add_measurement(bad)
        assert lib.measurements() == []


def test_delete_removes_one_measurement(library_path):
    with Library(library_path) as lib:
        import_nccl_tests(lib, ALL_REDUCE)
        import_nccl_tests(lib, SENDRECV)
        lib.delete_measurement("all_reduce_perf_8xh100")
        assert lib.measurement_names() == ["sendrecv_perf_16xb200"]
        with pytest.raises(LibraryError, match="no measurement named 'all_reduce_perf_8xh100'"):
            lib.delete_measurement("all_reduce_perf_8xh100")
        with pytest.raises(LibraryError, match="no measurement named 'gone'"):
            lib.measurement("gone")
        assert sorted(lib.names()) == sorted(SEED_NAMES)  # scenarios untouched


def test_damaged_points_are_named(library_path):
    with Library(library_path) as lib:
        import_nccl_tests(lib, ALL_REDUCE, name="good")
        import_nccl_tests(lib, SENDRECV, name="bad")
    conn = sqlite3.connect(library_path, isolation_level=None)
    conn.execute("update measurements set points = 'not json' where name = 'bad'")
    conn.close()
    with Library(library_path) as lib:
        assert lib.measurement("good").name == "good"
        with pytest.raises(
            LibraryError, match=r"damaged \(the points of measurement 'bad' are not a JSON list"
        ):
            lib.measurements()


def test_points_nested_past_reason_are_damage_not_a_recursion_error(library_path):
    with Library(library_path) as lib:
        import_nccl_tests(lib, ALL_REDUCE, name="deep")
    conn = sqlite3.connect(library_path, isolation_level=None)
    conn.execute("update measurements set points = ? where name = 'deep'", ["[" * 100_000])
    conn.close()
    with (
        Library(library_path) as lib,
        pytest.raises(LibraryError, match="measurement 'deep' are not a JSON list"),
    ):
        lib.measurements()


def test_text_that_cannot_be_unicode_is_a_refusal_not_a_traceback(library_path):
    """A command line's stray byte arrives as a lone surrogate; asked of the library, it is
    a clear refusal (it once reached SQLite and raised UnicodeEncodeError)."""
    with Library(library_path) as lib:
        for ask in (lib.search, lib.load, lib.versions):
            with pytest.raises(LibraryError, match="not text"):
                ask("seed\udcff")


def test_points_of_another_shape_are_a_library_error(library_path):
    with Library(library_path) as lib:
        import_nccl_tests(lib, ALL_REDUCE, name="odd")
    conn = sqlite3.connect(library_path, isolation_level=None)
    conn.execute("update measurements set points = '[{\"size\": 8}]' where name = 'odd'")
    conn.close()
    with Library(library_path) as lib:
        odd = lib.measurement("odd")
        with pytest.raises(LibraryError, match="measurement 'odd' in the library is malformed"):
            measurement_run(odd)


def test_a_read_only_library_lists_but_never_stores(library_path):
    with Library(library_path) as lib:
        import_nccl_tests(lib, ALL_REDUCE)
    before = folder_state(library_path.parent)
    with Library(library_path, read_only=True) as lib:
        assert lib.measurement_names() == ["all_reduce_perf_8xh100"]
        with pytest.raises(LibraryError, match="read-only"):
            import_nccl_tests(lib, SENDRECV)
        with pytest.raises(LibraryError, match="read-only"):
            lib.delete_measurement("all_reduce_perf_8xh100")
    assert folder_state(library_path.parent) == before


# ---- schema 1 files ----------------------------------------------------------------------------


def test_a_schema_1_library_is_migrated_to_hold_measurements(library_path):
    as_version_1(library_path)
    assert user_version(library_path) == 1
    with Library(library_path) as lib:
        assert lib.message == f"library migrated to schema {SCHEMA_VERSION}"
        assert sorted(lib.names()) == sorted(SEED_NAMES)
        assert lib.load(SEED_NAMES[1]).metadata.tags == ["seed", SEED_NAMES[1]]
        assert len(lib.versions(SEED_NAMES[0])) == 1
        assert lib.search(SEED_NAMES[2]) == [SEED_NAMES[2]]
        assert lib.measurements() == []
        stored = import_nccl_tests(lib, ALL_REDUCE, scenario=SEED_NAMES[0])[1]
    assert user_version(library_path) == SCHEMA_VERSION == 2
    with Library(library_path) as lib:
        assert lib.message == ""
        assert lib.measurements() == [stored]


def test_a_schema_1_library_opened_read_only_is_shown_migrated_and_left_alone(library_path):
    as_version_1(library_path)
    before = folder_state(library_path.parent)
    with Library(library_path, read_only=True) as lib:
        assert "schema 1, shown migrated to schema 2; the file is unchanged" in lib.message
        assert lib.measurements() == []
        assert sorted(lib.names()) == sorted(SEED_NAMES)
    assert folder_state(library_path.parent) == before
