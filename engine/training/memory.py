"""Whether a job's model states fit in GPU memory.

Weights and gradients (bf16) and Adam's states (fp32 master weights, first and second moments)
of the parameters one rank of stage 0 holds, sharded over the data-parallel group as far as
the ZeRO stage says. Activations are not counted, so this is a lower bound; a job over it
is noted (raise pp, tp or zero_stage), not refused.
"""

from __future__ import annotations

from engine.training.compute import stage_params
from engine.training.context import BF16_BYTES, StepContext

ADAM_STATE_BYTES = 12  # fp32 master weights, first and second moments per parameter


def model_state_bytes(ctx: StepContext, hbm_bytes: float) -> float:
    """Model-state bytes per GPU (weights, gradients, Adam states); a note when over HBM."""
    lay = ctx.layout
    dense, expert = stage_params(ctx)
    total = 0.0
    for params, shard in ((dense, lay.dp * lay.cp), (expert, lay.dp // lay.ep * lay.cp)):
        weights, grads, optimizer = (
            BF16_BYTES * params,
            BF16_BYTES * params,
            ADAM_STATE_BYTES * params,
        )
        if lay.zero_stage >= 1:
            optimizer /= shard
        if lay.zero_stage >= 2:
            grads /= shard
        if lay.zero_stage >= 3:
            weights /= shard
        total += weights + grads + optimizer
    if total > hbm_bytes:
        ctx.notes.append(
            f"model states alone need {total / 1e9:,.0f} GB per GPU, more than its "
            f"{hbm_bytes / 1e9:,.0f} GB (activations not counted): raise pp, tp or zero_stage"
        )
    return total
