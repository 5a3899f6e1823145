"""The golden cases: the CLI's JSON on every shipped preset, recorded before a refactor.

A move of code must not change a figure. Each case is one CLI command with ``--json`` on one
preset (a refusal is recorded as its exit code and message); `run_case` runs it in-process
and returns its output with the wall-clock fields (how long the machine took, not what the
model says) blanked. `differences` compares the structure, every text and every whole number
exactly and every float to `FLOAT_RTOL`: numpy's reductions pick SIMD kernels by CPU, so
the last bits of a sum differ between machines, and nothing else may.
``python -m tests.golden.cases`` re-records every fixture; do that only when a change of the
numbers is intended, and say why in the commit.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"

PRESET_NAMES = (
    "dgx-h100-ib-ndr-1k",
    "dgx-h100-roce-spectrumx-1k",
    "hgx-h100-roce-ecmp-1k",
    "rail-only-h100-1k",
    "h100-ib-ndr-16k",
    "h100-roce-128k",
)
COMMANDS = ("evaluate", "collective", "train", "cost", "compare", "compare-pair")
# `compare-pair` sets each preset against this one (conversion alone is refused for some).
PAIR_BASE = "dgx-h100-ib-ndr-1k"

# Keys whose values are measured run times of this machine, not results of the model.
WALL_CLOCK_KEYS = frozenset({"expand_s", "route_s", "solve_s", "engine_s"})
# A few units in the last place of a double: what a CPU's choice of SIMD kernel moves.
FLOAT_RTOL = 1e-12


def argv(command: str, preset: str) -> list[str]:
    """The command line of one case."""
    if command == "compare":
        return ["compare", preset, "--convert", _other_technology(preset), "--json"]
    if command == "compare-pair":
        return ["compare", PAIR_BASE, preset, "--json"]
    return [command, preset, "--json"]


def _other_technology(preset: str) -> str:
    from engine.presets.scenarios import load_preset

    tech = load_preset(preset).fabric.technology
    return "roce" if tech == "infiniband" else "infiniband"


def blank_wall_clock(data: Any) -> Any:
    """`data` with every wall-clock field set to None, recursively."""
    if isinstance(data, dict):
        return {k: (None if k in WALL_CLOCK_KEYS else blank_wall_clock(v)) for k, v in data.items()}
    if isinstance(data, list):
        return [blank_wall_clock(v) for v in data]
    return data


def run_case(command: str, preset: str) -> str:
    """The normalized JSON text the CLI prints for one case."""
    from cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv(command, preset))
    if code != 0:  # a refusal is behaviour too: its exit code and message are recorded
        return json.dumps({"exit_code": code, "stderr": err.getvalue()}, indent=2) + "\n"
    return json.dumps(blank_wall_clock(json.loads(out.getvalue())), indent=2) + "\n"


def differences(got: Any, expected: Any, path: str = "$") -> list[str]:
    """Where `got` departs from `expected` (JSON values): every key, length, text, whole
    number and flag must agree; floats within `FLOAT_RTOL` of each other."""
    if isinstance(expected, float) and isinstance(got, float | int) and not isinstance(got, bool):
        if abs(got - expected) <= FLOAT_RTOL * max(abs(got), abs(expected)):
            return []
        return [f"{path}: {got!r} != {expected!r}"]
    if type(got) is not type(expected):
        return [f"{path}: {got!r} != {expected!r}"]
    if isinstance(expected, dict):
        if list(got) != list(expected):
            return [f"{path}: keys {list(got)} != {list(expected)}"]
        return [d for k in expected for d in differences(got[k], expected[k], f"{path}.{k}")]
    if isinstance(expected, list):
        if len(got) != len(expected):
            return [f"{path}: {len(got)} items != {len(expected)}"]
        return [
            d
            for i, (g, e) in enumerate(zip(got, expected, strict=True))
            for d in differences(g, e, f"{path}[{i}]")
        ]
    return [] if got == expected else [f"{path}: {got!r} != {expected!r}"]


def fixture_path(command: str, preset: str) -> Path:
    """Where the recorded output of one case lives."""
    return FIXTURES / f"{command}--{preset}.json"


def record() -> None:
    """Re-record every fixture from the code as it is."""
    FIXTURES.mkdir(exist_ok=True)
    for preset in PRESET_NAMES:
        for command in COMMANDS:
            fixture_path(command, preset).write_text(run_case(command, preset), encoding="utf-8")
            print(f"recorded {command} {preset}", file=sys.stderr)


if __name__ == "__main__":
    record()
