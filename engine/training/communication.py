"""The collectives a pipeline stage runs for every micro-batch: TP, CP, EP and PP.

Each is timed on the fabric for stage 0 and returned per micro-batch as (raw, exposed) seconds;
under full recomputation the forward's collectives run again in the backward (Megatron's
checkpointed forward re-issues them):

* TP: 2 all-reduces forward and 2 backward per layer of ``micro_batch x seq/cp x d_model x 2``
  bytes (all-gather + reduce-scatter of the same size with sequence parallelism), on the
  NVLink group (or across servers when TP spans them), exposed unless ``tp_overlap``.
* CP: per layer an all-gather of the K/V chunks forward, all-gather + reduce-scatter backward,
  hidden behind attention compute (``cp_overlap``).
* EP: per MoE layer 4 all-to-alls (dispatch and combine, forward and backward) of
  ``tokens x d_model x 2 x top_k`` bytes times the busiest rank's load (``capacity_factor``
  padding, or ``expert_imbalance`` when dropless), exposed unless ``ep_overlap``.
* PP: 2 x `virtual_stages` send/recv exchanges of the activation between adjacent stages,
  split over the TP ranks (Megatron's scatter/gather), on the critical path.

A CP, EP or PP collective is timed with the other groups of the same stage running beside it
(they share the fabric); TP groups inside a server are NVLink-only and timed alone.
"""

from __future__ import annotations

from engine.training.context import (
    BF16_BYTES,
    StepContext,
    expert_load,
    forward_repeats,
    layers_per_stage,
    tokens_per_rank,
)
from engine.training.placement import cp_groups, ep_groups, pp_groups, tp_groups


def tp_per_microbatch(ctx: StepContext) -> tuple[float, float]:
    """TP seconds per micro-batch: (raw, exposed)."""
    lay = ctx.layout
    if lay.tp < 2:
        return 0.0, 0.0
    spans = lay.tp > ctx.gpus_per_server
    groups = tp_groups(ctx.grid, ctx.limit, spans)
    if spans:
        ctx.bounded("TP collectives across servers", groups)
    size = tokens_per_rank(ctx) * ctx.model.d_model * BF16_BYTES
    # 2 forward (again when the forward is recomputed), 2 backward per layer
    count = (2 * forward_repeats(ctx) + 2) * layers_per_stage(ctx)
    per_step = count * lay.micro_batches
    if lay.sequence_parallel:
        one = ctx.timer.time("tp", "all-gather", groups, size, per_step) + ctx.timer.time(
            "tp", "reduce-scatter", groups, size, per_step
        )
    else:
        one = ctx.timer.time("tp", "all-reduce", groups, size, per_step)
    raw = count * one
    return raw, raw * (1.0 - ctx.plan.knobs["tp_overlap"])


def cp_per_microbatch(ctx: StepContext, attention_layer_s: float) -> tuple[float, float]:
    """CP K/V exchange per micro-batch, hidden behind attention compute: (raw, exposed).

    `attention_layer_s` is one layer's forward attention core on this GPU; its backward is
    taken as twice that.
    """
    lay, model = ctx.layout, ctx.model
    if lay.cp < 2:
        return 0.0, 0.0
    groups = ctx.bounded("CP exchange", cp_groups(ctx.grid, ctx.limit))
    head_dim = model.d_model // model.heads
    kv_width = head_dim * max(1, model.kv_heads // lay.tp)
    kv_bytes = 2 * lay.micro_batch * lay.seq_len * kv_width * BF16_BYTES  # K and V, whole sequence
    layers = layers_per_stage(ctx)
    per_step = layers * lay.micro_batches
    repeats = forward_repeats(ctx)
    gather = ctx.timer.time("cp", "all-gather", groups, kv_bytes, (1 + repeats) * per_step)
    scatter = ctx.timer.time("cp", "reduce-scatter", groups, kv_bytes, per_step)
    attention_fwd_s = attention_layer_s
    hide = ctx.plan.knobs["cp_overlap"]
    exposed_layer = max(0.0, gather - hide * attention_fwd_s) + max(
        0.0, gather + scatter - hide * 2 * attention_fwd_s
    )
    redo = (repeats - 1) * max(0.0, gather - hide * attention_fwd_s)
    return layers * ((1 + repeats) * gather + scatter), layers * (exposed_layer + redo)


def ep_per_microbatch(ctx: StepContext) -> tuple[float, float]:
    """EP all-to-all per micro-batch: dispatch and combine, forward and backward."""
    lay, model = ctx.layout, ctx.model
    if not model.moe or lay.ep < 2:
        return 0.0, 0.0
    groups = ctx.bounded("EP all-to-all", ep_groups(ctx.grid, lay.ep, ctx.limit))
    tokens = tokens_per_rank(ctx) / (lay.tp if lay.sequence_parallel else 1)
    # the busiest rank's dispatch sets the pace (padded to the capacity factor, or its load)
    size = tokens * model.d_model * BF16_BYTES * model.top_k * expert_load(ctx)
    count = (2 * forward_repeats(ctx) + 2) * layers_per_stage(ctx)
    raw = count * ctx.timer.time("ep", "all-to-all", groups, size, count * lay.micro_batches)
    return raw, raw * (1.0 - ctx.plan.knobs["ep_overlap"])


def pp_per_microbatch(ctx: StepContext) -> tuple[float, float]:
    """PP send/recv per micro-batch: activation forward, its gradient backward, per chunk."""
    lay = ctx.layout
    if lay.pp < 2:
        return 0.0, 0.0
    groups = ctx.bounded("PP send/recv", pp_groups(ctx.grid, ctx.limit))
    size = tokens_per_rank(ctx) * ctx.model.d_model * BF16_BYTES / lay.tp
    count = 2 * lay.virtual_stages
    raw = count * ctx.timer.time("pp", "send-recv", groups, size, count * lay.micro_batches)
    return raw, raw
