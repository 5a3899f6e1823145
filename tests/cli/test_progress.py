"""Stage progress on stderr: shown on a terminal, rewritten in place and erased; never
written to a pipe."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

from cli.progress import stage_progress
from engine.analysis import evaluate
from engine.presets.scenarios import load_preset

ROOT = Path(__file__).resolve().parents[2]


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_sees_each_stage_and_the_line_is_erased_at_the_end() -> None:
    terminal = FakeTerminal()
    with stage_progress(terminal) as progress:
        evaluate(load_preset("rail-only-h100-1k"), parts=("permutation",), progress=progress)
    text = terminal.getvalue()
    assert "[  0%] expand" in text and "permutation test" in text and "[100%] done" in text
    assert text.endswith("\r") and text.rstrip("\r").split("\r")[-1].strip() == ""


def test_a_pipe_gets_nothing() -> None:
    pipe = io.StringIO()
    with stage_progress(pipe) as progress:
        assert progress is None
    assert pipe.getvalue() == ""


def test_the_cli_shows_stages_on_a_terminal_and_prints_its_answer_on_stdout() -> None:
    main, child = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "main.py", "evaluate", "rail-only-h100-1k", "--parts", "permutation"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=child,
            text=True,
            timeout=180,
            check=False,
        )
        os.close(child)
        child = -1
        seen = b""
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the terminal closed
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if child >= 0:
            os.close(child)
        os.close(main)
    assert done.returncode == 0
    assert b"permutation test" in seen and b"[100%] done" in seen
    assert "permutation" in done.stdout and "[" not in done.stdout.splitlines()[0]
