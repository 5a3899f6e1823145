"""Goodput under failures, as the door returns it.

`GoodputResult` wraps what `engine.reliability` computes for one scenario: the parts that
can interrupt the job (`GoodputPart`, counted from the bill of materials), interruptions per
day, the mean time between them, what each costs, the checkpoint interval (Young's optimum
unless one was asked for) and the effective goodput. `GoodputComparison` holds one result
per fabric technology (InfiniBand and RoCE) of the same topology.
"""

# Field names are the JSON keys, units spelled as the engine spells them (Bps).

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from engine.analysis.results.codec import JsonResult


@dataclass(frozen=True)
class GoodputPart(JsonResult):
    """One kind of part: how many the fabric has, its interruptions per part-year, the
    interruptions per day it adds, and where the rate comes from."""

    kind: str
    label: str
    count: int
    per_year: float
    interruptions_per_day: float
    provenance: str


@dataclass(frozen=True)
class GoodputResult(JsonResult):
    """Interruptions, their cost and effective training goodput of one scenario.

    ``goodput_tokens_per_s = tokens_per_s x goodput_share`` with ``goodput_share = 1 -
    checkpoint_share - failure_share`` (never below 0). ``mtbi_s`` and the interval figures
    are ``None`` where they are infinite (no failures: no checkpoint is needed).
    `hot_spares` says whether the job restarts on a standby host (a shorter restart).
    """

    technology: str
    scenario: str
    gpus: int
    step_s: float
    tokens_per_s: float
    hot_spares: bool
    parts: tuple[GoodputPart, ...]
    interruptions_per_day: float
    mtbi_s: float | None
    detection_s: float
    restart_s: float
    reload_s: float
    checkpoint_bytes: float
    checkpoint_write_s: float
    optimal_checkpoint_interval_s: float | None
    checkpoint_interval_s: float | None
    checkpoint_interval_steps: float | None
    lost_per_interruption_s: float | None
    checkpoint_share: float
    failure_share: float
    goodput_share: float
    goodput_tokens_per_s: float
    sources: Mapping[str, str]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class GoodputComparison(JsonResult):
    """The same topology as InfiniBand and as RoCE, one `GoodputResult` each."""

    results: tuple[GoodputResult, ...]
