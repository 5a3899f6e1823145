"""Whether a job fits in GPU memory: model states, activations, and the optimizer's time.

Model states: weights and gradients (bf16) and Adam's states (fp32 master weights, first and
second moments) of the parameters one rank of stage 0 holds, sharded over the data-parallel
group as far as the ZeRO stage says.

Activations: Korthikanti et al., 'Reducing Activation Recomputation in Large Transformer
Models' (MLSys 2023, arXiv 2205.05198, section 4): per layer and micro-batch
``s b h (10 + 24/t + 5 a s / (h t))`` bytes with tensor parallelism ``t``, ``s b h (34/t + 5
a s / (h t))`` with sequence parallelism; selective recomputation and fused (flash) attention
drop the ``5 a s / h`` score term; full recomputation keeps only each layer's input, ``2 s b
h`` (over ``t`` with sequence parallelism). Stage 0 of 1F1B holds ``min(pp, micro-batches)``
micro-batches in flight, times ``1 + (pp - 1) / (pp v)`` when interleaved. The formulas are
the paper's for GPT-shaped layers; other shapes are approximated by them. A job over its HBM
is noted (raise pp, tp, recompute or zero_stage), not refused.

The optimizer step streams every parameter it owns once: fp32 main gradient, master weight
and both moments read, the three states written, the bf16 weight written back, and the
gradient read once more for the norm clipping: 34 bytes per parameter at HBM speed.
"""

from __future__ import annotations

from engine.training.compute import stage_params
from engine.training.context import BF16_BYTES, StepContext

ADAM_STATE_BYTES = 12  # fp32 master weights, first and second moments per parameter
OPTIMIZER_STEP_BYTES = (
    34  # read grad, master, m, v (16); write master, m, v (12); bf16 (2); norm (4)
)


def _shards(ctx: StepContext) -> tuple[tuple[float, int], tuple[float, int]]:
    lay = ctx.layout
    dense, expert = stage_params(ctx)
    return (dense, lay.dp * lay.cp), (expert, max(1, lay.dp // lay.ep) * lay.cp)


def model_state_bytes(ctx: StepContext) -> float:
    """Model-state bytes per GPU (weights, gradients, Adam states)."""
    lay = ctx.layout
    total = 0.0
    for params, shard in _shards(ctx):
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
    return total


def activation_bytes(ctx: StepContext, flash_attention: bool, recompute: int) -> float:
    """Activation bytes stage 0 holds at its peak (Korthikanti et al., section 4)."""
    lay, model = ctx.layout, ctx.model
    s = lay.seq_len / lay.cp
    b, h, a, t = lay.micro_batch, model.d_model, model.heads, lay.tp
    split = t if lay.sequence_parallel else 1
    if recompute == 2:
        per_layer = 2.0 * s * b * h / split
    else:
        base = 34.0 / t if lay.sequence_parallel else 10.0 + 24.0 / t
        scores = 0.0 if (flash_attention or recompute == 1) else 5.0 * a * s / (h * t)
        per_layer = s * b * h * (base + scores)
    in_flight = min(lay.pp, lay.micro_batches)
    if lay.virtual_stages > 1:
        in_flight *= 1.0 + (lay.pp - 1) / (lay.pp * lay.virtual_stages)
    return per_layer * model.layers / lay.pp * in_flight


def check_memory(ctx: StepContext, hbm_bytes: float, activations: float) -> float:
    """Model states plus activations per GPU; a note when they exceed the GPU's HBM."""
    states = model_state_bytes(ctx)
    if states + activations > hbm_bytes:
        ctx.notes.append(
            f"model states ({states / 1e9:,.0f} GB) and activations ({activations / 1e9:,.0f} GB) "
            f"need more than the GPU's {hbm_bytes / 1e9:,.0f} GB: raise pp, tp, recompute or "
            "zero_stage"
        )
    return states


def optimizer_step_s(ctx: StepContext) -> float:
    """Seconds of the Adam step over the parameters this GPU updates, at HBM speed."""
    owned = 0.0
    for params, shard in _shards(ctx):
        owned += params / shard if ctx.layout.zero_stage >= 1 else params
    return owned * OPTIMIZER_STEP_BYTES / ctx.gpu.stream_bytes_per_s
