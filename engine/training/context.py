"""What every part of the step model shares: the resolved plan, placement and timer.

The compute, communication, memory and pipeline parts of the step each read the same
resolved job, rank grid and collective timer, and add to the same notes; `StepContext` carries
them, with the per-rank shares (layers of a stage, tokens of a micro-batch) that several
parts need. `Comm` is the raw and exposed time of one kind of communication.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.catalog.model_presets import ModelPreset
from engine.training.layout import Layout, Plan
from engine.training.placement import Groups
from engine.training.timer import CollectiveTimer

BF16_BYTES = 2  # activations, parameters and (by default) gradients travel as bf16


@dataclass
class StepContext:
    """What every part of the step model needs."""

    plan: Plan
    grid: np.ndarray
    timer: CollectiveTimer
    rate_flops: float  # achieved FLOP/s of one GPU
    limit: int
    notes: list[str]

    @property
    def layout(self) -> Layout:
        """The resolved layout."""
        return self.plan.layout

    @property
    def model(self) -> ModelPreset:
        """The model with overrides."""
        return self.plan.model

    def bounded(self, what: str, groups: Groups) -> Groups:
        """`groups`, with a note when the concurrent set was cut to the bound."""
        if groups.available > len(groups.concurrent):
            self.notes.append(
                f"{what} timed with {len(groups.concurrent)} of {groups.available} concurrent "
                "groups (max_concurrent_groups)"
            )
        return groups


@dataclass
class Comm:
    """Communication of one kind: raw seconds per step and the exposed part."""

    raw_s: float = 0.0
    exposed_s: float = 0.0


def layers_per_stage(ctx: StepContext) -> float:
    """Layers of one pipeline stage (stages taken as balanced, so possibly fractional)."""
    return ctx.model.layers / ctx.layout.pp


def tokens_per_rank(ctx: StepContext) -> float:
    """Tokens of one micro-batch on one CP rank (before the sequence-parallel split)."""
    lay = ctx.layout
    return lay.micro_batch * lay.seq_len / lay.cp
