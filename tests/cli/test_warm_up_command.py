"""``warm-up`` (run by ``make install``): evaluates the default preset so that every kernel
the window's first run needs is compiled, and names each stage it reaches on its own line."""

from __future__ import annotations

from cli.main import main
from cli.warm_up_command import StageLines
from engine.analysis import DEFAULT_PRESET


def test_warm_up_evaluates_the_default_preset_and_names_its_stages(capsys):
    assert main(["warm-up"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert DEFAULT_PRESET in out[0] or "compiled already" in out[0]
    stages = [line.split("] ", 1)[1] for line in out if line.startswith("  [")]
    for stage in ("permutation test", "transport", "collective", "training step", "done"):
        assert stage in stages
    assert out[-1].startswith("Kernels ready (")


def test_a_stage_is_printed_once_however_often_it_reports(capsys):
    import sys

    lines = StageLines(sys.stdout)
    for fraction in (0.1, 0.2, 0.3):
        lines.report(fraction, "transport")
    lines.report(0.5, "collective")
    printed = capsys.readouterr().out.splitlines()
    assert [p.split("] ", 1)[1] for p in printed] == ["transport", "collective"]
