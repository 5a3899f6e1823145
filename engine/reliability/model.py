"""Interruptions per day, the optimal checkpoint interval and goodput after failures.

A synchronous training job stops whenever any of its parts fails. With part counts n_k and
rates r_k (interruptions per part-year, catalog ``reliability``), interruptions arrive at
``lambda = sum_k n_k r_k`` (per year; linear in every count), and the mean time between
interruptions is ``M = 1 / lambda``. Each interruption costs the time to notice it
(``detection_s``), to restart (``restart_s``) and to read the last checkpoint back
(``reload_s``), plus the work done since that checkpoint: half an interval ``tau / 2`` on
average. Writing a checkpoint takes ``C`` seconds every ``tau`` seconds of work.

To first order (Young 1974) the share of wall time wasted is

    W(tau) = C / tau + (detection + restart + reload + tau / 2) / M

which is least at Young's interval ``tau* = sqrt(2 C M)`` (Daly 2006 gives the higher-order
correction, small while C << M). Goodput is the step's tokens/s times ``1 - W`` (zero
when W reaches 1). Times are in seconds, rates per year of 365.25 days.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from engine.catalog.devices import Catalog
from engine.model.errors import Problem, ScenarioError
from engine.reliability.parts import LABELS, RATE_FIELDS

SECONDS_PER_YEAR = 365.25 * 86400.0
SECONDS_PER_DAY = 86400.0
TIME_FIELDS = (
    "detection_s",
    "restart_s",
    "restart_with_spare_s",
    "checkpoint_bytes_per_parameter",
    "storage_write_Bps_per_gpu",
)
FIELDS = (*RATE_FIELDS.values(), *TIME_FIELDS)
NOTES = (
    "Every installed part is taken to be in the job: any failure stops it and restarts it "
    "from the last checkpoint (no in-job recovery); with hot spares the restart takes "
    "restart_with_spare_s instead of restart_s, and the idle spares interrupt nothing.",
    "Rates are job interruptions per part-year from public fleet studies; where a study "
    "gives only a share of interruptions, the catalog note says how the per-part rate was "
    "derived, and what is not published is marked an assumption.",
    "Checkpoint writes are taken to block training; the lost work per interruption is half "
    "an interval on average (failures at random times).",
    "The model is first order (Young 1974): accurate while the checkpoint write time is "
    "much shorter than the mean time between interruptions.",
)


def reliability_figures(
    catalog: Catalog, overrides: Mapping[str, float] | None = None
) -> dict[str, tuple[float, str]]:
    """Each figure of the catalog's ``reliability`` profile as (value, provenance).

    `overrides` replaces figures by field name; an unknown name or a negative or
    non-finite value raises `ScenarioError` naming the field.
    """
    profile = catalog.technology("reliability")
    figures = {
        name: (float(profile.value(name)), profile.fields[name].provenance()) for name in FIELDS
    }
    for name, value in (overrides or {}).items():
        if name not in figures:
            raise ScenarioError(
                Problem("reliability", f"unknown figure; one of {', '.join(FIELDS)}", name)
            )
        number = _number(name, value)
        if name == "storage_write_Bps_per_gpu" and number <= 0:
            raise ScenarioError(Problem("reliability", "must be > 0", name))
        figures[name] = (number, "override")
    return figures


def _number(name: str, value: Any) -> float:
    """`value` as a finite float >= 0, or `ScenarioError` naming `name`."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number) or number < 0:
        raise ScenarioError(
            Problem("reliability", f"must be a finite number >= 0, not {value!r}", name)
        )
    return number


def interruptions_per_day(counts: Mapping[str, int], rates_per_year: Mapping[str, float]) -> float:
    """Expected job interruptions per day: the sum of count x rate over the part kinds."""
    per_year = sum(counts[kind] * rates_per_year[kind] for kind in counts)
    return per_year * SECONDS_PER_DAY / SECONDS_PER_YEAR


def young_interval_s(checkpoint_write_s: float, mtbi_s: float) -> float:
    """Young's optimum checkpoint interval ``sqrt(2 C M)``; infinite without failures."""
    return math.sqrt(2.0 * checkpoint_write_s * mtbi_s)


def wasted_share(
    interval_s: float, checkpoint_write_s: float, recovery_s: float, mtbi_s: float
) -> float:
    """Share of wall time lost to checkpoint writes and to failures, to first order.

    ``C / tau + (recovery + tau / 2) / M``; an infinite `interval_s` writes no checkpoint,
    an infinite `mtbi_s` has no failure.
    """
    writes = 0.0 if math.isinf(interval_s) else checkpoint_write_s / interval_s
    if math.isinf(mtbi_s):
        return writes
    return writes + (recovery_s + interval_s / 2.0) / mtbi_s


def _finite(value: float) -> float | None:
    """`value`, or None where it is infinite (JSON has no infinity)."""
    return None if math.isinf(value) else value


def goodput_report(
    counts: Mapping[str, int],
    step: Mapping[str, Any],
    catalog: Catalog,
    checkpoint_interval_s: float | None = None,
    overrides: Mapping[str, float] | None = None,
    hot_spares: bool = False,
) -> dict[str, Any]:
    """Interruptions, their cost and the goodput of the training `step` on these parts.

    `step` is a training step (engine.training.step: ``tokens_per_s``, ``step_s``,
    ``parameters``, ``gpus``). `checkpoint_interval_s` is the work between checkpoints;
    None takes Young's optimum. Figures and their sources come from the catalog's
    ``reliability`` profile unless `overrides` replaces them. `hot_spares` restarts on a
    standby host (``restart_with_spare_s``) instead of rescheduling (``restart_s``).
    """
    if checkpoint_interval_s is not None:
        checkpoint_interval_s = _number("checkpoint_interval_s", checkpoint_interval_s)
        if checkpoint_interval_s <= 0:
            raise ScenarioError(Problem("reliability", "must be > 0", "checkpoint_interval_s"))
    figures = reliability_figures(catalog, overrides)
    rates = {kind: figures[field][0] for kind, field in RATE_FIELDS.items()}
    per_day = interruptions_per_day(counts, rates)
    mtbi = SECONDS_PER_DAY / per_day if per_day > 0 else math.inf
    gpus = int(step["gpus"])
    checkpoint_bytes = float(step["parameters"]) * figures["checkpoint_bytes_per_parameter"][0]
    storage_Bps = figures["storage_write_Bps_per_gpu"][0] * gpus
    write_s = checkpoint_bytes / storage_Bps
    detection = figures["detection_s"][0]
    restart = figures["restart_with_spare_s" if hot_spares else "restart_s"][0]
    recovery = detection + restart + write_s  # the reload reads at the write rate
    optimum = young_interval_s(write_s, mtbi)
    interval = optimum if checkpoint_interval_s is None else checkpoint_interval_s
    wasted = wasted_share(interval, write_s, recovery, mtbi)
    share = max(0.0, 1.0 - wasted)
    tokens = float(step["tokens_per_s"])
    notes = list(NOTES)
    if wasted >= 1.0:
        notes.append(
            "The job makes no progress: interruptions come faster than it can checkpoint, "
            "restart and redo the lost work."
        )
    return {
        "gpus": gpus,
        "step_s": float(step["step_s"]),
        "tokens_per_s": tokens,
        "hot_spares": bool(hot_spares),
        "parts": [
            {
                "kind": kind,
                "label": LABELS[kind],
                "count": int(counts[kind]),
                "per_year": rates[kind],
                "interruptions_per_day": interruptions_per_day({kind: counts[kind]}, rates),
                "provenance": figures[RATE_FIELDS[kind]][1],
            }
            for kind in RATE_FIELDS
        ],
        "interruptions_per_day": per_day,
        "mtbi_s": _finite(mtbi),
        "detection_s": detection,
        "restart_s": restart,
        "reload_s": write_s,
        "checkpoint_bytes": checkpoint_bytes,
        "checkpoint_write_s": write_s,
        "optimal_checkpoint_interval_s": _finite(optimum),
        "checkpoint_interval_s": _finite(interval),
        "checkpoint_interval_steps": _finite(interval / float(step["step_s"])),
        "lost_per_interruption_s": _finite(recovery + interval / 2.0) if per_day > 0 else 0.0,
        "checkpoint_share": 0.0 if math.isinf(interval) else write_s / interval,
        "failure_share": 0.0 if math.isinf(mtbi) else (recovery + interval / 2.0) / mtbi,
        "goodput_share": share,
        "goodput_tokens_per_s": tokens * share,
        "sources": {name: provenance for name, (_, provenance) in figures.items()},
        "notes": notes,
    }
