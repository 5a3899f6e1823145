"""The command line never shows a traceback: a bug is one line plus a saved report, a closed
pipe ends quietly, and every part of `evaluate` has its text form."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli import commands
from cli.main import EXIT_INTERNAL, main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def broken_presets(monkeypatch, tmp_path):
    """`presets` raises an unexpected error; crash reports go under `tmp_path`."""

    def fail(args):
        raise RuntimeError("the index went missing")

    monkeypatch.setattr(commands, "run_presets", fail)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    return tmp_path


def test_an_internal_error_is_one_line_and_a_saved_report(broken_presets, capsys):
    assert main(["presets"]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.startswith("internal error: RuntimeError: the index went missing")
    reports = list((broken_presets / "fabriclab" / "crashes").glob("crash-*.txt"))
    assert len(reports) == 1
    assert str(reports[0]) in err
    text = reports[0].read_text(encoding="utf-8")
    assert "command: fabriclab presets" in text
    assert "Traceback" in text and "the index went missing" in text


def test_debug_shows_the_traceback_instead(broken_presets):
    with pytest.raises(RuntimeError, match="the index went missing"):
        main(["--debug", "presets"])
    assert not (broken_presets / "fabriclab").exists()


def test_output_into_a_closed_pipe_ends_quietly():
    # ~2,000 rows (far more than a pipe buffer holds) into a reader that leaves at once
    proc = subprocess.Popen(
        [sys.executable, "main.py", "collective", "dgx-h100-ib-ndr-1k", "--factor", "1.01"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(64).startswith(b"# all-reduce")
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_evaluate_prints_the_cost_part_as_text(capsys):
    assert main(["evaluate", "dgx-h100-ib-ndr-1k", "--parts", "cost"]) == 0
    out = capsys.readouterr().out
    assert "dgx-h100-ib-ndr-1k: bill of materials" in out
    assert "capex " in out and "energy over 5 years" in out
    assert "permutation traffic" not in out


def test_an_unreachable_dask_scheduler_is_named(capsys):
    code = main(
        [
            "sweep",
            "dgx-h100-ib-ndr-1k",
            "--param",
            "fabric.switch_latency_ns",
            "--values",
            "100,200",
            "--metric",
            "capex_usd",
            "--dask",
            "tcp://127.0.0.1:1",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "--dask: cannot reach a dask scheduler at 'tcp://127.0.0.1:1'" in err
    assert "Traceback" not in err


def test_max_memory_refuses_a_fabric_that_does_not_fit(capsys):
    assert main(["--max-memory", "100M", "evaluate", "h100-ib-ndr-16k"]) == 2
    err = capsys.readouterr().err
    assert "too large" in err and "(--max-memory)" in err
    assert main(["evaluate", "dgx-h100-ib-ndr-1k", "--parts", "cost"]) == 0  # limit not kept


@pytest.mark.parametrize("verb", [["list"], ["search", "ib"], ["show", "x"], ["versions", "x"]])
def test_a_reading_verb_never_creates_a_library(tmp_path, capsys, verb):
    path = tmp_path / "missing" / "lib.fabriclab"
    assert main(["library", "--path", str(path), *verb]) == 2
    assert "no library at" in capsys.readouterr().err
    assert not path.parent.exists()


def test_a_library_reference_to_no_library_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FABRICLAB_LIBRARY", str(tmp_path / "none.fabriclab"))
    assert main(["validate", "library:dgx-h100-ib-ndr-1k"]) == 2
    assert "no library at" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
