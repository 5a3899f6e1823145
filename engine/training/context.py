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
from engine.training.kernels import GpuSpeed
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
    gpu: GpuSpeed  # what the (slowest) GPU sustains per kernel class
    limit: int
    notes: list[str]
    gpus_per_server: int = 8

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


def stage_layers(layers: int, pp: int, virtual_stages: int = 1) -> list[int]:
    """Whole layers each pipeline stage holds, as evenly as they go.

    The layers are cut into ``pp x virtual_stages`` chunks; a remainder goes to the middle
    chunks first (the first and last stages also carry the embedding and the output layer,
    as Llama 3 trims them, section 3.3.2), and stage s holds chunks s, s + pp, ...
    """
    chunks = pp * virtual_stages
    base, extra = divmod(layers, chunks)
    order = [*range(1, chunks - 1), 0, chunks - 1] if chunks > 2 else list(range(chunks))
    sizes = [base] * chunks
    for c in order[:extra]:
        sizes[c] += 1
    return [sum(sizes[s::pp]) for s in range(pp)]


def forward_repeats(ctx: StepContext) -> int:
    """How often a layer's forward runs per micro-batch: twice under full recomputation."""
    return 2 if ctx.plan.knobs["recompute"] == 2 else 1


def expert_load(ctx: StepContext) -> float:
    """Tokens the busiest expert-parallel rank handles over the mean: the capacity factor
    (every expert's buffer padded to it, GShard / Switch Transformer) or, dropless, the
    busiest expert's imbalance."""
    knobs = ctx.plan.knobs
    return knobs["capacity_factor"] or knobs["expert_imbalance"]


def tokens_per_rank(ctx: StepContext) -> float:
    """Tokens of one micro-batch on one CP rank (before the sequence-parallel split)."""
    lay = ctx.layout
    return lay.micro_batch * lay.seq_len / lay.cp
