"""Model arithmetic and compute time: parameters, FLOPs per token, the GPU, a micro-batch.

Model FLOPs per token are 6 x (active matmul parameters + output layer) plus the attention
term 12 x layers x seq x d_model (Narayanan et al. 2021, eq. 3 without recomputation): what
MFU counts. The time a micro-batch takes on one GPU comes from engine.training.kernels (each
kernel class at what the GPU sustains for it), plus the recomputed forward the job asks for.
Stages are taken as balanced. The step runs at the fabric's slowest GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.catalog.devices import Catalog
from engine.catalog.model_presets import ModelPreset
from engine.model.errors import Problem, ScenarioError
from engine.topology.expand import Fabric
from engine.training.context import (
    StepContext,
    expert_load,
    layers_per_stage,
    stage_layers,
    tokens_per_rank,
)
from engine.training.kernels import Shard, layer_times, output_layer_s


@dataclass(frozen=True)
class ParamCounts:
    """Parameters of a model by part (per layer for attention, MLP and router)."""

    layers: int
    attention: int
    mlp: int  # one MLP, or one expert
    router: int
    experts: int  # MLPs per layer (1 for a dense model)
    active_experts: int  # MLPs a token passes through per layer
    embedding: int  # input embedding plus learned positions
    output: int  # output layer; 0 when tied to the input embedding

    @property
    def total(self) -> int:
        """All parameters."""
        per_layer = self.attention + self.router + self.mlp * self.experts
        return self.layers * per_layer + self.embedding + self.output

    @property
    def active(self) -> int:
        """Parameters one token uses (experts it is not routed to left out)."""
        per_layer = self.attention + self.router + self.mlp * self.active_experts
        return self.layers * per_layer + self.embedding + self.output


def parameter_counts(model: ModelPreset) -> ParamCounts:
    """Weight-matrix parameters of `model` (biases and norms, <0.1%, left out)."""
    head_dim = model.d_model // model.heads
    q_width = model.heads * head_dim
    kv_width = model.kv_heads * head_dim
    attention = model.d_model * (2 * q_width + 2 * kv_width)
    mlp = (3 if model.gated_mlp else 2) * model.d_model * model.ffn
    embedding = (model.vocab + model.position_embeddings) * model.d_model
    return ParamCounts(
        layers=model.layers,
        attention=attention,
        mlp=mlp,
        router=model.d_model * model.experts if model.moe else 0,
        experts=model.experts if model.moe else 1,
        active_experts=model.top_k if model.moe else 1,
        embedding=embedding,
        output=0 if model.tied_embeddings else model.vocab * model.d_model,
    )


def flops_per_token(model: ModelPreset, seq_len: int) -> float:
    """Training FLOPs per token (forward + backward = 3 x forward), no recomputation.

    Forward: 2 FLOPs per active matmul weight (output layer included, embedding lookups
    free) plus attention scores and their weighted sum, 4 x seq x d_model per layer. For
    GPT-3-like shapes this is Narayanan et al.'s eq. 3 with 72 instead of 96 (their 96
    counts the recomputed forward): 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) per batch.
    """
    p = parameter_counts(model)
    per_layer = p.attention + p.router + p.mlp * p.active_experts
    matmul = model.layers * per_layer + model.vocab * model.d_model
    attention = 4.0 * model.layers * seq_len * model.heads * (model.d_model // model.heads)
    return 3.0 * (2.0 * matmul + attention)


def stage_params(ctx: StepContext) -> tuple[float, float]:
    """Parameters on one rank of stage 0: (replicated over DP x CP, expert parameters)."""
    lay, p = ctx.layout, parameter_counts(ctx.model)
    layers = layers_per_stage(ctx)
    embed = p.embedding + (p.output if lay.pp == 1 else 0)
    dense = layers * (p.attention + p.router) + embed
    if ctx.model.moe:
        expert = layers * p.mlp * p.experts / lay.ep
    else:
        dense += layers * p.mlp
        expert = 0.0
    return dense / lay.tp, expert / lay.tp


def slowest_gpu(fabric: Fabric, catalog: Catalog, notes: list[str]) -> tuple[str, float, float]:
    """(GPU id, dense bf16 peak FLOP/s, HBM bytes) of the fabric's slowest GPU."""
    found = []
    for g in fabric.scenario.groups:
        if g.kind != "server":
            continue
        gpu = catalog.get(catalog.get(g.model, "server").value("gpu"), "gpu")
        found.append(
            (float(gpu.value("bf16_dense_tflops")) * 1e12, gpu.id, float(gpu.value("hbm_gb")) * 1e9)
        )
    if not found:
        raise ScenarioError(Problem("groups", "a training job needs at least one server group"))
    found.sort()
    if len({f[1] for f in found}) > 1:
        notes.append(f"servers hold different GPUs; the step runs at the slowest, {found[0][1]}")
    peak, gpu_id, hbm = found[0]
    return gpu_id, peak, hbm


@dataclass(frozen=True)
class MicroBatchCompute:
    """One micro-batch's compute on one GPU of stage 0 (seconds), and where it goes."""

    forward_s: float
    backward_s: float  # includes the recomputed forward
    recompute_s: float
    weight_grad_s: float  # weight-gradient matmuls (what ZB-H1 defers into the bubble)
    attention_layer_s: float  # forward attention core of one layer (hides CP exchanges)
    parts: dict[str, float]  # forward + backward seconds by kernel class

    @property
    def total_s(self) -> float:
        """Forward plus backward seconds."""
        return self.forward_s + self.backward_s


def micro_batch_compute(ctx: StepContext, fpt: float) -> MicroBatchCompute:
    """Kernel time of one micro-batch on the pipeline's slowest stage, on one GPU.

    With the job's ``compute_efficiency`` set, every FLOP runs at that share of peak on
    balanced stages (the old flat model, kept as a what-if); otherwise
    engine.training.kernels times each kernel class, stages hold whole layers
    (`stage_layers`), the last also the output layer, and the slowest one sets the pace of
    1F1B's steady state. ``recompute`` adds the attention core's forward (selective) or
    the layers' (full).
    """
    lay, model, knobs = ctx.layout, ctx.model, ctx.plan.knobs
    recompute = int(knobs["recompute"])
    flat = ctx.plan.compute_efficiency
    if flat > 0:
        layers = layers_per_stage(ctx)
        rate = ctx.gpu.peak_flops * flat
        total = tokens_per_rank(ctx) * fpt / (lay.tp * lay.pp) / rate
        head_dim = model.d_model // model.heads
        attention = (
            4.0 * tokens_per_rank(ctx) * lay.seq_len * head_dim * model.heads / lay.tp / rate
        )
        forward = total / 3.0
        redo = {0: 0.0, 1: layers * attention, 2: forward}[recompute]
        return MicroBatchCompute(
            forward, 2.0 * forward + redo, redo, forward, attention, {"flat": total + redo}
        )
    shard = Shard(
        tokens=tokens_per_rank(ctx),
        seq_len=lay.seq_len,
        micro_batch=lay.micro_batch,
        tp=lay.tp,
        ep=lay.ep,
        sequence_parallel=lay.sequence_parallel,
        flash_attention=knobs["flash_attention"] >= 0.5,
        expert_load=expert_load(ctx),
    )
    matmul_gpu = ctx.gpu.fp8 if knobs["fp8"] >= 0.5 else ctx.gpu
    if matmul_gpu is None:
        raise ScenarioError(
            Problem(
                "workload.training.overrides",
                "fp8 needs a GPU with FP8 matmuls (the catalog has no FP8 ceiling for it)",
                "fp8",
            )
        )
    lt = layer_times(model, shard, ctx.gpu, matmul_gpu)
    out_fwd, out_bwd = output_layer_s(model, shard, matmul_gpu)
    per_stage = stage_layers(model.layers, lay.pp, lay.virtual_stages)
    redo_layer = {0: 0.0, 1: lt.attention_s, 2: lt.forward_s}[recompute]

    def stage_total(layers: int, output: bool) -> float:
        extra = out_fwd + out_bwd if output else 0.0
        return layers * (lt.forward_s + lt.backward_s + redo_layer) + extra

    last = len(per_stage) - 1
    slowest = max(range(len(per_stage)), key=lambda s: stage_total(per_stage[s], s == last))
    layers, output = per_stage[slowest], slowest == last
    redo = layers * redo_layer
    forward = layers * lt.forward_s + (out_fwd if output else 0.0)
    backward = layers * lt.backward_s + (out_bwd if output else 0.0) + redo
    parts = {
        "matmul": layers * 3.0 * lt.matmul_s,
        "attention": layers * (lt.attention_s + lt.attention_backward_s),
        "memory_bound": layers * 3.0 * lt.stream_s,
        "output_layer": out_fwd + out_bwd if output else 0.0,
        "recompute": redo,
    }
    return MicroBatchCompute(
        forward, backward, redo, layers * lt.weight_grad_s, lt.attention_s, parts
    )
