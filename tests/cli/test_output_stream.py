"""An answer that cannot be written, and a standard error that cannot be written: one line
and a status of their own, never an internal error (reproducers: ``presets > /dev/full``
ended in 'internal error: OSError', exit 70; with ``2>/dev/full`` the message was lost
and the status was a different failure's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import EXIT_OUTPUT
from cli.output_stream import GuardedStream, OutputError

ROOT = Path(__file__).resolve().parents[2]
FULL = "/dev/full"
needs_dev_full = pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full here")


def _main(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE):
    return subprocess.run(
        [sys.executable, "main.py", *args],
        cwd=ROOT,
        stdout=stdout,
        stderr=stderr,
        text=True,
        timeout=300,
    )


@needs_dev_full
def test_a_full_output_is_one_line_and_its_own_status():
    with open(FULL, "w") as full:
        run = _main(["presets"], stdout=full)
    assert run.returncode == EXIT_OUTPUT == 74
    assert run.stderr.strip().splitlines() == [
        "cannot write the output: No space left on device (errno 28)"
    ]


@needs_dev_full
def test_a_full_stderr_keeps_the_commands_own_status():
    with open(FULL, "w") as full:
        refused = _main(["validate", "/no/such/scenario.json"], stderr=full)
        answered = _main(["presets"], stderr=full)
    assert refused.returncode == 2
    assert answered.returncode == 0 and "dgx-h100-ib-ndr-1k" in answered.stdout


def test_the_guard_names_failed_writes_and_lets_a_closed_pipe_through():
    class Failing:
        def __init__(self, exc):
            self.exc = exc

        def write(self, text):
            raise self.exc

        def flush(self):
            raise self.exc

    with pytest.raises(OutputError) as caught:
        GuardedStream(Failing(OSError(28, "No space left on device"))).write("x")
    assert caught.value.errno == 28
    with pytest.raises(BrokenPipeError):
        GuardedStream(Failing(BrokenPipeError(32, "Broken pipe"))).flush()
