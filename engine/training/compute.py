"""Model arithmetic and kernel time: parameters, FLOPs per token, the GPU and its speed.

Model FLOPs per token are 6 x (active matmul parameters + output layer) plus the attention
term 12 x layers x seq x d_model (Narayanan et al. 2021, eq. 3 without recomputation); a
micro-batch's share on one GPU runs at ``peak x compute_efficiency``, one third forward, two
thirds backward. Stages are taken as balanced. The step runs at the fabric's slowest GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.catalog.devices import Catalog
from engine.catalog.model_presets import ModelPreset
from engine.model.errors import Problem, ScenarioError
from engine.topology.expand import Fabric
from engine.training.context import StepContext, layers_per_stage, tokens_per_rank


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


def micro_batch_compute_s(ctx: StepContext, fpt: float) -> float:
    """Seconds one GPU computes one micro-batch (forward and backward) at `fpt` FLOPs per token."""
    lay = ctx.layout
    return tokens_per_rank(ctx) * fpt / (lay.tp * lay.pp) / ctx.rate_flops
