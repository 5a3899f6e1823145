"""Data-parallel traffic of a step: gradients and ZeRO parameters in Megatron's buckets.

Gradients (bf16 by default, ``grad_bytes``) are reduced over the data x context-parallel
group in Megatron's buckets (max(40M, 1M x group) parameters); all-reduce for ZeRO 0,
reduce-scatter + all-gather of the parameters for ZeRO 1/2, and for ZeRO 3 (FSDP) parameter
all-gathers before every micro-batch's forward and backward plus a gradient reduce-scatter
after its backward. Expert parameters of a mixture-of-experts model are reduced over the
ranks holding the same experts.

What the step hides: with `overlap_dp` the gradient reduction of a step hides behind the
backward pass of the last micro-batch (the only one after which gradients are final), times
the ``dp_overlap`` share; the last bucket is always exposed. The parameter all-gather of ZeRO
1/2 hides behind the first forward in the same way.
"""

from __future__ import annotations

import math

from engine.training.compute import stage_params
from engine.training.context import BF16_BYTES, Comm, StepContext
from engine.training.placement import Groups, dp_groups, expert_dp_groups

MEGATRON_MIN_BUCKET_PARAMS = 40_000_000  # Megatron DDP: max(40M, 1M x dp) parameters
MEGATRON_BUCKET_PARAMS_PER_RANK = 1_000_000


def _bucket_times(
    ctx: StepContext, op: str, groups: Groups, params: float, element_bytes: float, per_step: float
) -> tuple[float, float]:
    """(total, last bucket) seconds to run `op` over `params` in Megatron's buckets."""
    if params <= 0 or groups.size < 2:
        return 0.0, 0.0
    if ctx.plan.job.overlap_dp:
        bucket = ctx.plan.knobs["bucket_params"] or max(
            MEGATRON_MIN_BUCKET_PARAMS, MEGATRON_BUCKET_PARAMS_PER_RANK * groups.size
        )
    else:
        bucket = params  # Megatron: one bucket when the reduction is not overlapped
    full = math.floor(params / bucket)
    rest = params - full * bucket
    t_full = (
        ctx.timer.time("dp", op, groups, bucket * element_bytes, full * per_step) if full else 0.0
    )
    t_rest = ctx.timer.time("dp", op, groups, rest * element_bytes, per_step) if rest > 0 else 0.0
    return full * t_full + t_rest, (t_rest if rest > 0 else t_full)


def _dp_groups_for(ctx: StepContext) -> tuple[Groups, Groups | None]:
    lay = ctx.layout
    dense = ctx.bounded("DP gradient reduction", dp_groups(ctx.grid, ctx.limit))
    expert = None
    if ctx.model.moe and lay.dp // lay.ep * lay.cp >= 2:
        expert = ctx.bounded(
            "expert gradient reduction", expert_dp_groups(ctx.grid, lay.ep, ctx.limit)
        )
    return dense, expert


def dp_step(ctx: StepContext, backward_s: float, forward_s: float) -> tuple[Comm, float, float]:
    """DP communication: (per-step Comm, raw and exposed seconds per micro-batch for ZeRO 3)."""
    lay, knobs = ctx.layout, ctx.plan.knobs
    if lay.dp * lay.cp < 2:
        return Comm(), 0.0, 0.0
    dense_groups, expert_groups = _dp_groups_for(ctx)
    dense_params, expert_params = stage_params(ctx)
    grad_bytes = knobs["grad_bytes"]
    sets = [(dense_groups, dense_params)]
    if expert_groups is not None:
        sets.append((expert_groups, expert_params))
    overlap = ctx.plan.job.overlap_dp
    hide = knobs["dp_overlap"] if overlap else 0.0
    m = lay.micro_batches

    def run(op: str, element_bytes: float, per_step: float) -> tuple[float, float]:
        total = last = 0.0
        for groups, params in sets:
            t, tail = _bucket_times(ctx, op, groups, params, element_bytes, per_step)
            total += t
            last = last or tail
        return total, last

    def exposed(total: float, last: float, window_s: float) -> float:
        return max(total - hide * window_s, last) if overlap else total

    if lay.zero_stage == 0:
        total, last = run("all-reduce", grad_bytes, 1)
        return Comm(total, exposed(total, last, backward_s)), 0.0, 0.0
    if lay.zero_stage in (1, 2):
        rs, rs_last = run("reduce-scatter", grad_bytes, 1)
        ag, ag_last = run("all-gather", BF16_BYTES, 1)
        step_exposed = exposed(rs, rs_last, backward_s) + exposed(ag, ag_last, forward_s)
        return Comm(rs + ag, step_exposed), 0.0, 0.0
    # ZeRO 3 / FSDP: parameters gathered for every micro-batch's forward and backward,
    # gradients reduce-scattered after each backward (overlapped with it).
    ag, ag_last = run("all-gather", BF16_BYTES, 2 * m)
    rs, rs_last = run("reduce-scatter", grad_bytes, m)
    per_mb_exposed = exposed(ag, ag_last, forward_s) + exposed(
        ag + rs, max(ag_last, rs_last), backward_s
    )
    return Comm(), 2 * ag + rs, per_mb_exposed
