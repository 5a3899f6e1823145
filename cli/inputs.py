"""What the command line reads: a scenario reference with ``--set`` overrides.

Sizes (``--sizes 8:16G``) are read by `engine.model.sizes`, which the scenario shares.

SCENARIO is a preset name, a scenario JSON file or ``library:NAME`` (the library named by
FABRICLAB_LIBRARY, else the user's); ``--traffic FILE`` replaces its workload by a traffic
matrix.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from engine.analysis import PRESETS, import_traffic, load_from_library, load_preset
from engine.model.errors import Problem, ScenarioError
from engine.model.overrides import apply_override
from engine.model.scenario import Scenario, from_json
from engine.model.traffic import TrafficFlow


def load_scenario(ref: str, overrides: list[str] | None = None) -> Scenario:
    """A scenario from a preset name or a JSON file, with ``PATH=VALUE`` overrides applied."""
    if ref.startswith("library:"):
        scenario = load_from_library(ref, os.environ.get("FABRICLAB_LIBRARY"))
    elif ref in PRESETS:
        scenario = load_preset(ref)
    else:
        path = Path(ref)
        if not path.exists():
            names = ", ".join(PRESETS)
            raise ScenarioError(
                Problem("scenario", f"{ref!r} is neither a preset ({names}) nor a file")
            )
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ScenarioError(Problem(str(path), f"cannot read the file: {exc}")) from None
        notes: list[str] = []
        try:
            scenario = from_json(text, notes)
        except ScenarioError as exc:
            raise ScenarioError(
                [Problem(f"{path}: {p.where}", p.message, p.field) for p in exc.problems]
            ) from None
        for note in notes:
            print(f"note: {path}: {note}", file=sys.stderr)
    for item in overrides or []:
        if "=" not in item:
            raise ScenarioError(Problem("--set", f"expected PATH=VALUE, got {item!r}"))
        key, value = item.split("=", 1)
        scenario = apply_override(scenario, key.strip(), value.strip())
    return scenario


def with_traffic(scenario: Scenario, path: str | None) -> Scenario:
    """`scenario` running the traffic matrix of the file at `path` (``--traffic``: CSV
    ``src,dst,bytes[,start_s]`` or an htsim ``.cm``) as its workload; unchanged without."""
    if not path:
        return scenario
    flows = import_traffic(path)
    scenario.workload.kind = "traffic"
    scenario.workload.matrix = [
        TrafficFlow(f.src, f.dst, float(f.size_bytes), f.start_s) for f in flows
    ]
    print(f"note: {len(flows):,} flows of {path} run as the workload", file=sys.stderr)
    return scenario
