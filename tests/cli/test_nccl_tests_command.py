"""``fabriclab import-nccl-tests`` and ``fabriclab measurements``: a measured run stored in the
library and listed, and every bad input a clear message with exit 2, never a traceback."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli.commands import EXIT_INVALID, EXIT_OK
from cli.main import main
from engine.analysis import open_library

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "nccl_tests"
ALL_REDUCE = FIXTURES / "all_reduce_perf_8xh100.txt"
BROADCAST = FIXTURES / "broadcast_oldest_out_of_place.txt"
SCENARIO = "dgx-h100-ib-ndr-1k"  # a preset, so in every new library


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    """A new library seeded with the presets, made once (seeding takes a few seconds)."""
    path = tmp_path_factory.mktemp("seeded") / "lib.fabriclab"
    open_library(path).close()
    return path


@pytest.fixture
def lib(seeded, tmp_path) -> Path:
    """A copy of the seeded library of this test's own."""
    path = tmp_path / "lib.fabriclab"
    shutil.copy(seeded, path)
    return path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def names(path: Path) -> list[str]:
    library = open_library(path, create=False)
    try:
        return library.measurement_names()
    finally:
        library.close()


def test_import_stores_the_run_and_prints_a_summary(capsys, lib):
    code, out, err = run(capsys, "import-nccl-tests", str(ALL_REDUCE), "--library", str(lib))
    assert code == EXIT_OK, err
    lines = out.splitlines()
    assert lines[0] == f"stored in {lib}"
    assert lines[1] == (
        "all_reduce_perf_8xh100: all-reduce over 8 ranks of NVIDIA H100 80GB HBM3, "
        "NCCL 2.18.5, float"
    )
    assert lines[2] == "  17 points, 8 B to 16 GiB; peak busbw 479.90 GB/s at 16 GiB"
    assert lines[3].startswith("  from all_reduce_perf_8xh100.txt, imported 20")
    assert names(lib) == ["all_reduce_perf_8xh100"]


def test_import_with_op_name_and_scenario(capsys, lib):
    code, out, err = run(
        capsys,
        "import-nccl-tests",
        str(BROADCAST),
        "--op",
        "broadcast_perf",
        "--name",
        "p100 broadcast",
        "--scenario",
        SCENARIO,
        "--library",
        str(lib),
    )
    assert code == EXIT_OK, err
    assert f"measures scenario {SCENARIO}" in out and "NCCL version not stated" in out
    library = open_library(lib, create=False)
    try:
        stored = library.measurement("p100 broadcast")
    finally:
        library.close()
    assert (stored.op, stored.scenario, len(stored.points)) == ("broadcast", SCENARIO, 5)


def test_import_json_is_the_stored_run(capsys, lib):
    code, out, _ = run(
        capsys, "import-nccl-tests", str(ALL_REDUCE), "--library", str(lib), "--json"
    )
    assert code == EXIT_OK
    data = json.loads(out)
    assert data["name"] == "all_reduce_perf_8xh100" and data["op"] == "all-reduce"
    assert data["ranks"] == 8 and data["nccl_version"] == "2.18.5" and data["scenario"] is None
    assert data["peak_busbw_GBps"] == pytest.approx(479.9)
    assert len(data["points"]) == 17
    assert data["points"][0]["out_of_place"]["time_s"] == pytest.approx(13.67e-6)


def test_measurements_lists_them(capsys, lib):
    run(capsys, "import-nccl-tests", str(ALL_REDUCE), "--library", str(lib))
    run(capsys, "import-nccl-tests", str(BROADCAST), "--op", "broadcast", "--library", str(lib))
    code, out, _ = run(capsys, "measurements", "--library", str(lib))
    assert code == EXIT_OK
    lines = out.splitlines()
    assert lines[0].split()[:5] == ["name", "op", "ranks", "points", "peak"]
    assert lines[1].split()[:6] == [
        "all_reduce_perf_8xh100",
        "all-reduce",
        "8",
        "17",
        "479.90",
        "GB/s",
    ]
    assert lines[2].split()[:6] == [
        "broadcast_oldest_out_of_place",
        "broadcast",
        "8",
        "5",
        "38.13",
        "GB/s",
    ]
    code, out, _ = run(capsys, "measurements", "--library", str(lib), "--json")
    listed = json.loads(out)
    assert [m["name"] for m in listed] == [
        "all_reduce_perf_8xh100",
        "broadcast_oldest_out_of_place",
    ]
    assert listed[1]["points"][0]["in_place"] is None


def test_an_empty_list_says_so(capsys, lib):
    code, out, err = run(capsys, "measurements", "--library", str(lib))
    assert code == EXIT_OK and out == "" and "no measurements in" in err
    code, out, _ = run(capsys, "measurements", "--library", str(lib), "--json")
    assert json.loads(out) == []


# ---- refusals ---------------------------------------------------------------------------------


def test_a_malformed_file_names_the_line_and_stores_nothing(capsys, lib, tmp_path):
    bad = tmp_path / "bad.txt"
    text = ALL_REDUCE.read_text().replace("  2097152        524288", "  2097152           lots")
    bad.write_text(text)
    code, out, err = run(capsys, "import-nccl-tests", str(bad), "--library", str(lib))
    assert code == EXIT_INVALID and out == ""
    assert err.splitlines() == [
        f"cannot import {bad}:",
        "  error: bad.txt line 30: count 'lots' is not a number",
    ]
    assert names(lib) == []


def test_a_file_without_a_table_never_creates_a_library(capsys, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("the run crashed before printing anything\n")
    path = tmp_path / "new" / "lib.fabriclab"
    code, _, err = run(capsys, "import-nccl-tests", str(notes), "--library", str(path))
    assert code == EXIT_INVALID and "no nccl-tests table found" in err
    code, _, err = run(
        capsys, "import-nccl-tests", str(tmp_path / "gone.txt"), "--library", str(path)
    )
    assert code == EXIT_INVALID and "gone.txt: cannot read the file" in err
    assert not path.parent.exists()


def test_a_missing_op_and_an_unknown_op_are_explained(capsys, lib):
    code, _, err = run(capsys, "import-nccl-tests", str(BROADCAST), "--library", str(lib))
    assert code == EXIT_INVALID and "cannot tell which collective ran" in err
    code, _, err = run(
        capsys, "import-nccl-tests", str(BROADCAST), "--op", "bcast", "--library", str(lib)
    )
    assert code == EXIT_INVALID and "unknown collective 'bcast'; use one of all-reduce" in err
    assert names(lib) == []


def test_library_refusals_are_one_message(capsys, lib):
    code, _, err = run(
        capsys, "import-nccl-tests", str(ALL_REDUCE), "--scenario", "nope", "--library", str(lib)
    )
    assert code == EXIT_INVALID
    assert err.startswith(f"cannot store {ALL_REDUCE} in {lib}: no scenario named 'nope'")
    run(capsys, "import-nccl-tests", str(ALL_REDUCE), "--library", str(lib))
    code, _, err = run(
        capsys,
        "import-nccl-tests",
        str(ALL_REDUCE),
        "--name",
        "all_reduce_perf_8xh100",
        "--library",
        str(lib),
    )
    assert (
        code == EXIT_INVALID
        and "a measurement named 'all_reduce_perf_8xh100' exists already" in err
    )
    assert names(lib) == ["all_reduce_perf_8xh100"]


def test_measurements_never_creates_a_library(capsys, tmp_path):
    path = tmp_path / "missing" / "lib.fabriclab"
    code, _, err = run(capsys, "measurements", "--library", str(path))
    assert code == EXIT_INVALID and err.startswith("cannot open the library: no library at")
    assert not path.parent.exists()


def test_a_file_that_is_not_a_library_is_refused_untouched(capsys, tmp_path):
    path = tmp_path / "notes.fabriclab"
    path.write_bytes(b"not a database")
    code, _, err = run(capsys, "import-nccl-tests", str(ALL_REDUCE), "--library", str(path))
    assert code == EXIT_INVALID and "is not a FabricLab library" in err
    assert path.read_bytes() == b"not a database"


def test_the_entry_point_runs_it(lib):
    proc = subprocess.run(
        [sys.executable, "main.py", "import-nccl-tests", str(ALL_REDUCE), "--library", str(lib)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "peak busbw 479.90 GB/s" in proc.stdout
