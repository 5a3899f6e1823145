"""One training step on the fabric: parallelism placement, compute, communication, overlap.

A `TrainingJob` (engine.model.scenario) names a model preset (engine.catalog.model_presets) and a layout;
zero fields take the preset's published value, fitted to the fabric's GPU count
(`resolve_job`). The step model then follows Megatron-LM's 1F1B pipeline schedule:

* **Placement.** Rank r is GPU r in placement order (servers in order, GPUs by index).
  Ranks are laid out tensor-parallel innermost, then context-parallel, then data-parallel
  (whose consecutive blocks of `ep` ranks form the expert-parallel groups), then pipeline
  stages outermost: Megatron-core's order ``tp-cp-ep-dp-pp``, which keeps the large
  data-parallel traffic within neighbouring servers. Presets may ask for Llama 3's order
  ``tp-cp-pp-dp`` instead (data parallel outermost; ``pp_outermost`` false). Tensor-parallel
  groups are consecutive GPUs of one server (NVLink); a `tp` that does not fit in a server
  is refused.
* **Compute.** Model FLOPs per token are 6 x (active matmul parameters + output layer) plus
  the attention term 12 x layers x seq x d_model (Narayanan et al. 2021, eq. 3 without
  recomputation); a micro-batch's share on one GPU runs at ``peak x compute_efficiency``,
  one third forward, two thirds backward. Stages are taken as balanced.
* **Communication**, each collective timed on the fabric by `CollectiveEngine` once per
  distinct (op, group, size), for stage 0 (the stage that finishes last in 1F1B):
  TP: 2 all-reduces forward and 2 backward per layer of ``micro_batch x seq/cp x d_model x
  2`` bytes (all-gather + reduce-scatter of the same size with sequence parallelism), on the
  NVLink group, exposed unless ``tp_overlap``. CP: per layer an all-gather of the K/V
  chunks forward, all-gather + reduce-scatter backward, hidden behind attention compute.
  EP: per MoE layer 4 all-to-alls (dispatch and combine, forward and backward) of
  ``tokens x d_model x 2 x top_k`` bytes, exposed unless ``ep_overlap``. PP: per micro-batch
  2 x `virtual_stages` send/recv exchanges of the activation between adjacent stages, split
  over the TP ranks (Megatron's scatter/gather), on the critical path. DP: gradients
  (bf16) reduced over the data x context-parallel group in Megatron's buckets (max(40M,
  1M x group) parameters); all-reduce for ZeRO 0, reduce-scatter + all-gather of the
  parameters for ZeRO 1/2, and for ZeRO 3 (FSDP) parameter all-gathers before every
  micro-batch's forward and backward plus a gradient reduce-scatter after its backward.
* **Overlap.** With `overlap_dp` the gradient reduction of a step hides behind the backward
  pass of the last micro-batch (the only one after which gradients are final), times the
  ``dp_overlap`` share; the last bucket is always exposed. The parameter all-gather of ZeRO
  1/2 hides behind the first forward in the same way.
* **Step.** A 1F1B slot is one micro-batch's compute plus its exposed TP/CP/EP/PP time; the
  pipeline runs ``micro_batches + (pp - 1) / virtual_stages`` slots, the extra ones being the
  bubble; then the exposed DP time. So ``step = compute + exposed communication + bubble``.
  GPU utilization is the busy (computing) share of the step; MFU = model FLOPs / (step x
  GPUs x peak) = utilization x compute_efficiency.

Concurrent groups. A DP, CP, EP or PP collective is timed for one group with the other
groups of the same stage running at the same time (``concurrent=``), so they share the
fabric; at most ``max_concurrent_groups`` (64) of them, the nearest in rank order, to bound
the routing work. TP groups are NVLink-only and timed alone.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from engine.catalog.devices import Catalog, default_catalog
from engine.catalog.model_presets import MODEL_PRESETS, SHAPE_FIELDS, ModelPreset
from engine.collectives.timing import CollectiveEngine
from engine.model.errors import Problem, ScenarioError
from engine.model.scenario import TrainingJob, apply_override
from engine.topology.expand import Fabric, expand

WHERE = "workload.training"
BF16_BYTES = 2
MEGATRON_MIN_BUCKET_PARAMS = 40_000_000  # Megatron DDP: max(40M, 1M x dp) parameters
MEGATRON_BUCKET_PARAMS_PER_RANK = 1_000_000
ADAM_STATE_BYTES = 12  # fp32 master weights, first and second moments per parameter

# Step-model knobs a `TrainingJob.overrides` entry may set, with default and meaning.
# A negative default means "the model preset's value".
KNOBS: dict[str, tuple[float, str]] = {
    "virtual_stages": (-1, "interleaved 1F1B model chunks per pipeline stage"),
    "sequence_parallel": (-1, "1: TP with sequence parallelism (all-gather + reduce-scatter)"),
    "pp_outermost": (-1, "1: Megatron rank order tp-cp-ep-dp-pp; 0: Llama 3's tp-cp-pp-dp"),
    "tp_overlap": (0.0, "share of TP communication hidden behind compute (Megatron default 0)"),
    "ep_overlap": (0.0, "share of EP all-to-all time hidden behind compute"),
    "cp_overlap": (1.0, "share of attention compute available to hide the CP K/V exchange"),
    "dp_overlap": (1.0, "share of the last backward (first forward) that hides DP traffic"),
    "grad_bytes": (2.0, "bytes per reduced gradient element (4 for fp32 reduction)"),
    "bucket_params": (0.0, "DP bucket size in parameters (0: Megatron's max(40M, 1M x group))"),
    "max_concurrent_groups": (64.0, "other groups timed concurrently with the one measured"),
}
KINDS = ("tp", "cp", "ep", "pp", "dp")
# What the step model leaves out or simplifies, reported with every result.
METHOD_ASSUMPTIONS = (
    "stage 0 is timed for every stage (stages taken as balanced, the same on any fabric position)",
    "activation recomputation, the optimizer step and data loading take no time",
    "DP traffic hides only behind the last micro-batch's backward (first forward for the "
    "ZeRO parameter all-gather); the last bucket is always exposed",
    "TP and EP collectives and PP send/recv sit on the critical path unless tp_overlap / "
    "ep_overlap say otherwise",
)
# Preset fields whose assumption (when the preset's value is used) is worth showing.
_SHOWN_ASSUMPTIONS = ("compute_efficiency", "virtual_stages", "micro_batch", "sequence_parallel")


def _problem(message: str, field_name: str | None = None) -> ScenarioError:
    return ScenarioError(Problem(WHERE, message, field_name))


# --------------------------------------------------------------------------------------------
# Model arithmetic: parameters and FLOPs.


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


# --------------------------------------------------------------------------------------------
# Resolving a job: zero-means-default, fitted to the fabric.


@dataclass(frozen=True)
class Layout:
    """The parallel layout of a resolved job (degrees, batch split, schedule)."""

    tp: int
    pp: int
    dp: int
    cp: int
    ep: int
    micro_batch: int
    micro_batches: int
    global_batch: int
    seq_len: int
    virtual_stages: int
    zero_stage: int
    sequence_parallel: bool
    pp_outermost: bool

    @property
    def gpus(self) -> int:
        """GPUs the job uses."""
        return self.tp * self.pp * self.dp * self.cp

    @property
    def order(self) -> str:
        """The rank order, innermost first."""
        return "tp-cp-ep-dp-pp" if self.pp_outermost else "tp-cp-pp-dp"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, with the GPU count and rank order."""
        return {
            "tp": self.tp,
            "pp": self.pp,
            "dp": self.dp,
            "ep": self.ep,
            "cp": self.cp,
            "micro_batch": self.micro_batch,
            "micro_batches": self.micro_batches,
            "global_batch": self.global_batch,
            "seq_len": self.seq_len,
            "virtual_stages": self.virtual_stages,
            "zero_stage": self.zero_stage,
            "sequence_parallel": self.sequence_parallel,
            "order": self.order,
            "gpus": self.gpus,
        }


@dataclass
class Plan:
    """A job resolved against a fabric: model with overrides, layout, knobs and notes."""

    job: TrainingJob
    model: ModelPreset
    layout: Layout
    compute_efficiency: float
    knobs: dict[str, float]
    notes: list[str] = field(default_factory=list)


def _split_overrides(overrides: dict[str, float]) -> tuple[dict[str, int], dict[str, float]]:
    """Shape overrides (whole numbers) and step knobs; unknown keys are refused."""
    shape: dict[str, int] = {}
    knobs = {k: v[0] for k, v in KNOBS.items()}
    for key, value in overrides.items():
        if key in SHAPE_FIELDS:
            if not float(value).is_integer() or value < 0:
                raise ScenarioError(
                    Problem(f"{WHERE}.overrides", f"{key} must be a whole number ≥ 0", key)
                )
            shape[key] = int(value)
        elif key in KNOBS:
            knobs[key] = float(value)
        else:
            known = ", ".join([*SHAPE_FIELDS, *KNOBS])
            raise ScenarioError(
                Problem(f"{WHERE}.overrides", f"unknown override {key!r}; known: {known}", key)
            )
    return shape, knobs


def _model(job: TrainingJob, shape: dict[str, int]) -> ModelPreset:
    try:
        preset = MODEL_PRESETS[job.model]
    except KeyError:
        names = ", ".join(MODEL_PRESETS)
        raise _problem(f"unknown model {job.model!r}; presets: {names}", "model") from None
    model = replace(preset, **shape)
    if model.layers < 1 or model.d_model < 1 or model.heads < 1 or model.vocab < 1:
        raise ScenarioError(
            Problem(f"{WHERE}.overrides", "layers, d_model, heads and vocab must be ≥ 1")
        )
    if model.d_model % model.heads or model.kv_heads < 1 or model.heads % model.kv_heads:
        raise ScenarioError(
            Problem(
                f"{WHERE}.overrides",
                f"d_model ({model.d_model}) must split over heads ({model.heads}) and heads "
                f"into kv_heads ({model.kv_heads}) groups",
            )
        )
    if model.moe and not 1 <= model.top_k <= model.experts:
        raise ScenarioError(
            Problem(f"{WHERE}.overrides", "top_k must be between 1 and experts", "top_k")
        )
    return model


def gpus_per_server(fabric: Fabric) -> int:
    """GPUs in the smallest server of the fabric (the NVLink domain a TP group must fit)."""
    return int(np.diff(fabric.server_first_gpu).min())


def _tensor_parallel(
    job: TrainingJob, model: ModelPreset, per_server: int, notes: list[str]
) -> int:
    """The TP degree: inside one server, dividing it and the attention heads."""
    if job.tp:
        tp = job.tp
        if tp < 1:
            raise _problem("tp must be ≥ 1 (0 for the preset's)", "tp")
        if tp > per_server or per_server % tp:
            raise _problem(
                f"tensor parallelism {tp} does not fit in one server of {per_server} GPUs; "
                f"TP runs over NVLink inside a server, so use a divisor of {per_server}",
                "tp",
            )
        if model.heads % tp:
            raise _problem(f"tp {tp} must divide the {model.heads} attention heads", "tp")
        return tp
    tp = model.tp
    if tp > per_server or per_server % tp or model.heads % tp:
        fits = [d for d in range(1, per_server + 1) if per_server % d == 0 and model.heads % d == 0]
        notes.append(
            f"published TP {tp} does not fit servers of {per_server} GPUs; using TP {fits[-1]}"
        )
        tp = fits[-1]
    return tp


def _fit_replica(
    job: TrainingJob, model: ModelPreset, n_gpus: int, tp: int, seq: int, notes: list[str]
) -> tuple[int, int]:
    """PP and CP degrees; published ones shrink (PP first) when one replica exceeds the fabric."""
    pp, cp = job.pp or model.pp, job.cp or model.cp
    if pp < 1 or cp < 1:
        raise _problem("pp and cp must be ≥ 1 (0 for the preset's)", "pp" if pp < 1 else "cp")
    if pp > model.layers:
        raise _problem(f"pp {pp} exceeds the model's {model.layers} layers", "pp")
    published = (pp, cp)
    if tp * pp * cp > n_gpus and not job.pp:
        pp = max(1, n_gpus // (tp * cp))
    if tp * pp * cp > n_gpus and not job.cp:
        cp = max([c for c in range(1, cp + 1) if tp * pp * c <= n_gpus and seq % c == 0] or [1])
    if (pp, cp) != published:
        notes.append(
            f"the published replica (TP {tp} x PP {published[0]} x CP {published[1]}) needs "
            f"{tp * published[0] * published[1]:,} GPUs, the fabric has {n_gpus:,}: "
            f"using PP {pp}, CP {cp}"
        )
    return pp, cp


def _data_parallel(
    job: TrainingJob, n_gpus: int, tp: int, pp: int, cp: int, notes: list[str]
) -> int:
    model_parallel = tp * pp * cp
    if job.dp:
        if job.dp < 1:
            raise _problem("dp must be ≥ 1 (0 to fill the fabric)", "dp")
        if job.dp * model_parallel > n_gpus:
            raise _problem(
                f"tp·pp·cp·dp = {job.dp * model_parallel:,} GPUs, the fabric has {n_gpus:,}", "dp"
            )
        dp = job.dp
    else:
        dp = n_gpus // model_parallel
        if dp < 1:
            raise _problem(
                f"one model replica needs tp·pp·cp = {model_parallel:,} GPUs, the fabric has "
                f"{n_gpus:,}; lower pp or tp",
                "pp",
            )
    idle = n_gpus - dp * model_parallel
    if idle:
        notes.append(
            f"DP = {n_gpus:,} GPUs / (TP {tp} x PP {pp} x CP {cp}) does not divide: using DP "
            f"{dp} on {dp * model_parallel:,} GPUs, {idle:,} GPUs idle"
        )
    return dp


def _expert_parallel(job: TrainingJob, model: ModelPreset, dp: int, notes: list[str]) -> int:
    if not model.moe:
        if job.ep > 1:
            raise _problem(f"{model.name} has no experts; ep must be 0 or 1", "ep")
        return 1
    if job.ep:
        ep = job.ep
        if ep < 1 or model.experts % ep or dp % ep:
            raise _problem(
                f"ep {ep} must divide the {model.experts} experts and DP {dp} "
                "(expert-parallel groups are carved out of the data-parallel ranks)",
                "ep",
            )
        return ep
    ep = max(d for d in range(1, model.ep + 1) if model.experts % d == 0 and dp % d == 0)
    if ep != model.ep:
        notes.append(f"published EP {model.ep} does not divide DP {dp}; using EP {ep}")
    return ep


def _global_batch(
    job: TrainingJob, model: ModelPreset, dp: int, mb: int, pp: int, notes: list[str]
) -> int:
    """Sequences per step: the job's, or the published batch fitted to DP x micro-batch."""
    per_step = dp * mb
    if job.global_batch:
        if job.global_batch < 1 or job.global_batch % per_step:
            raise _problem(
                f"global batch {job.global_batch} must be a multiple of DP {dp} x micro-batch "
                f"{mb} = {per_step}",
                "global_batch",
            )
        return job.global_batch
    micro_batches = max(1, round(model.global_batch / per_step))
    reason = f"published {model.global_batch:,} does not split over DP {dp} x micro-batch {mb}"
    if micro_batches < pp:
        reason = (
            f"published {model.global_batch:,} gives {micro_batches} micro-batch(es) per "
            f"pipeline, fewer than its {pp} stages; {pp} is the fewest that fill it"
        )
        micro_batches = pp
    batch = micro_batches * per_step
    if batch != model.global_batch:
        notes.append(
            f"global batch {batch:,} = DP {dp} x {micro_batches} micro-batches x {mb} ({reason})"
        )
    return batch


def _knob_flag(knobs: dict[str, float], name: str, preset_value: bool) -> bool:
    return preset_value if knobs[name] < 0 else knobs[name] >= 0.5


def _check_knobs(knobs: dict[str, float]) -> None:
    for name in ("tp_overlap", "ep_overlap", "cp_overlap", "dp_overlap"):
        if not 0.0 <= knobs[name] <= 1.0:
            raise ScenarioError(Problem(f"{WHERE}.overrides", "must be between 0 and 1", name))
    if knobs["grad_bytes"] <= 0 or knobs["bucket_params"] < 0:
        raise ScenarioError(
            Problem(f"{WHERE}.overrides", "grad_bytes must be > 0, bucket_params ≥ 0")
        )
    if knobs["max_concurrent_groups"] < 0:
        raise ScenarioError(Problem(f"{WHERE}.overrides", "must be ≥ 0", "max_concurrent_groups"))


def resolve_job(fabric: Fabric, job: TrainingJob | None = None) -> Plan:
    """`job` (default: the fabric scenario's) with every zero field filled for this fabric.

    Published layouts are kept where they fit: TP must fit in a server, a replica larger
    than the fabric gives up pipeline stages (then context parallelism), DP fills the fabric
    (``GPUs // (tp·pp·cp)``, idle GPUs noted), EP must divide DP and the experts, and the
    published global batch is rounded to a multiple of DP x micro-batch, with at least as
    many micro-batches as pipeline stages. Each adjustment is said in `Plan.notes`.
    Explicit values that cannot work are refused with a `ScenarioError` naming the field.
    """
    job = job if job is not None else fabric.scenario.workload.training
    shape, knobs = _split_overrides(job.overrides)
    _check_knobs(knobs)
    model = _model(job, shape)
    notes: list[str] = []
    tp = _tensor_parallel(job, model, gpus_per_server(fabric), notes)
    mb = job.micro_batch or model.micro_batch
    seq = job.seq_len or model.seq_len
    pp, cp = _fit_replica(job, model, fabric.n_gpus, tp, seq, notes)
    dp = _data_parallel(job, fabric.n_gpus, tp, pp, cp, notes)
    ep = _expert_parallel(job, model, dp, notes)
    if mb < 1 or seq < 1:
        raise _problem(
            "micro_batch and seq_len must be ≥ 1", "micro_batch" if mb < 1 else "seq_len"
        )
    if seq % cp:
        raise _problem(f"seq_len {seq} must split evenly over cp {cp}", "seq_len")
    batch = _global_batch(job, model, dp, mb, pp, notes)
    zero = job.zero_stage if job.zero_stage >= 0 else model.zero_stage
    if zero not in (0, 1, 2, 3):
        raise _problem(
            f"zero_stage must be 0, 1, 2 or 3 (-1 for the preset's), not {zero}", "zero_stage"
        )
    efficiency = job.compute_efficiency or model.compute_efficiency
    if not 0.0 < efficiency <= 1.0:
        raise _problem(
            "compute_efficiency must be in (0, 1] (0 for the preset's)", "compute_efficiency"
        )
    v = model.virtual_stages if knobs["virtual_stages"] < 0 else int(knobs["virtual_stages"])
    v = 1 if pp == 1 else v
    if v < 1:
        raise ScenarioError(Problem(f"{WHERE}.overrides", "must be ≥ 1", "virtual_stages"))
    if model.layers % (pp * v):
        notes.append(
            f"{model.layers} layers do not split evenly over {pp} stages x {v} chunks; "
            "stages are taken as balanced"
        )
    layout = Layout(
        tp=tp,
        pp=pp,
        dp=dp,
        cp=cp,
        ep=ep,
        micro_batch=mb,
        micro_batches=batch // (dp * mb),
        global_batch=batch,
        seq_len=seq,
        virtual_stages=v,
        zero_stage=zero,
        sequence_parallel=_knob_flag(knobs, "sequence_parallel", model.sequence_parallel),
        pp_outermost=_knob_flag(knobs, "pp_outermost", model.pp_outermost),
    )
    filled = replace(
        job,
        tp=tp,
        pp=pp,
        dp=dp,
        ep=ep,
        cp=cp,
        micro_batch=mb,
        global_batch=batch,
        seq_len=seq,
        zero_stage=zero,
        compute_efficiency=efficiency,
        overrides=dict(job.overrides),
    )
    return Plan(filled, model, layout, efficiency, knobs, notes)


def default_job(fabric: Fabric, job: TrainingJob | None = None) -> TrainingJob:
    """The job (default: the fabric scenario's) with its zero fields filled for `fabric`."""
    return resolve_job(fabric, job).job


# --------------------------------------------------------------------------------------------
# Placement: rank groups of stage 0.


def rank_grid(layout: Layout) -> np.ndarray:
    """GPU id of every rank as an array indexed [pp, dp, cp, tp]."""
    shape = (layout.pp, layout.dp, layout.cp, layout.tp)
    ranks = np.arange(layout.gpus, dtype=np.int64)
    if layout.pp_outermost:  # Megatron: rank = t + tp (c + cp (d + dp p))
        return ranks.reshape(shape)
    # Llama 3: rank = t + tp (c + cp (p + pp d))
    return ranks.reshape(layout.dp, layout.pp, layout.cp, layout.tp).transpose(1, 0, 2, 3)


@dataclass
class Groups:
    """One measured rank group and the groups running the same collective beside it."""

    ranks: np.ndarray
    concurrent: list[np.ndarray]
    available: int  # concurrent groups before the bound

    @property
    def size(self) -> int:
        """Ranks in the measured group."""
        return int(self.ranks.shape[0])


def _bounded(groups: list[np.ndarray], limit: int) -> Groups:
    rest = groups[1:]
    return Groups(groups[0], rest[:limit], len(rest))


def tp_groups(grid: np.ndarray) -> Groups:
    """The first TP group (consecutive GPUs of one server; NVLink only, timed alone)."""
    return Groups(grid[0, 0, 0, :], [], 0)


def cp_groups(grid: np.ndarray, limit: int) -> Groups:
    """CP groups of stage 0, replica 0: one per TP position."""
    return _bounded([grid[0, 0, :, t] for t in range(grid.shape[3])], limit)


def dp_groups(grid: np.ndarray, limit: int) -> Groups:
    """Gradient-reduction groups of stage 0: the DP x CP ranks of each TP position."""
    return _bounded([np.sort(grid[0, :, :, t].ravel()) for t in range(grid.shape[3])], limit)


def expert_dp_groups(grid: np.ndarray, ep: int, limit: int) -> Groups:
    """Expert-gradient groups of stage 0: ranks holding the same experts (DP/EP x CP)."""
    groups = [
        np.sort(grid[0, e::ep, :, t].ravel()) for t in range(grid.shape[3]) for e in range(ep)
    ]
    return _bounded(groups, limit)


def ep_groups(grid: np.ndarray, ep: int, limit: int) -> Groups:
    """Expert-parallel groups of stage 0: `ep` consecutive DP ranks per (CP, TP) position."""
    _, dp, cp, tp = grid.shape
    groups = [
        grid[0, k * ep : (k + 1) * ep, c, t]
        for k in range(dp // ep)
        for c in range(cp)
        for t in range(tp)
    ]
    return _bounded(groups, limit)


def pp_groups(grid: np.ndarray, limit: int) -> Groups:
    """Stage 0 to stage 1 rank pairs, one per (DP, CP, TP) position."""
    first, second = grid[0].ravel(), grid[1].ravel()
    pairs = [np.array([a, b]) for a, b in zip(first, second, strict=True)]
    return _bounded(pairs, limit)


# --------------------------------------------------------------------------------------------
# Timing collectives once per distinct (op, group, size).


class CollectiveTimer:
    """Times collectives on one engine, each distinct (op, groups, size) once."""

    def __init__(self, engine: CollectiveEngine):
        self.engine = engine
        self._rows: dict[tuple[str, str, float], dict[str, Any]] = {}
        self.records: list[dict[str, Any]] = []

    @staticmethod
    def _key(groups: Groups) -> str:
        digest = hashlib.sha1(np.ascontiguousarray(groups.ranks).tobytes())
        for g in groups.concurrent:
            digest.update(b"|")
            digest.update(np.ascontiguousarray(g).tobytes())
        return digest.hexdigest()

    def rows(self, op: str, groups: Groups, sizes: list[float]) -> list[dict[str, Any]]:
        """Engine rows (time_s, algorithm, protocol) for each size; sizes ≤ 0 take no time."""
        key = self._key(groups)
        missing = sorted({s for s in sizes if s > 0 and (op, key, s) not in self._rows})
        if missing and groups.size >= 2:
            result = self.engine.run(
                op, groups.ranks, np.array(missing, dtype=np.float64), concurrent=groups.concurrent
            )
            for size, row in zip(missing, result.rows, strict=True):
                self._rows[(op, key, size)] = row
        idle = {"time_s": 0.0, "algorithm": "", "protocol": ""}
        if groups.size < 2:
            return [idle for _ in sizes]
        return [self._rows[(op, key, s)] if s > 0 else idle for s in sizes]

    def time(self, kind: str, op: str, groups: Groups, size_bytes: float, count: float) -> float:
        """Seconds of one `op` of `size_bytes` on `groups`, recorded with its count per step."""
        row = self.rows(op, groups, [size_bytes])[0]
        if groups.size >= 2 and size_bytes > 0 and count > 0:
            self.records.append(
                {
                    "kind": kind,
                    "op": op,
                    "ranks": groups.size,
                    "concurrent_groups": len(groups.concurrent),
                    "bytes": float(size_bytes),
                    "time_s": float(row["time_s"]),
                    "count_per_step": float(count),
                    "algorithm": row["algorithm"],
                    "protocol": row["protocol"],
                }
            )
        return float(row["time_s"])


# --------------------------------------------------------------------------------------------
# The step.


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


def _layers_per_stage(ctx: StepContext) -> float:
    return ctx.model.layers / ctx.layout.pp


def _tokens_per_rank(ctx: StepContext) -> float:
    """Tokens of one micro-batch on one CP rank (before the sequence-parallel split)."""
    lay = ctx.layout
    return lay.micro_batch * lay.seq_len / lay.cp


def _tp_per_microbatch(ctx: StepContext) -> tuple[float, float]:
    """TP seconds per micro-batch: (raw, exposed)."""
    lay = ctx.layout
    if lay.tp < 2:
        return 0.0, 0.0
    groups = tp_groups(ctx.grid)
    size = _tokens_per_rank(ctx) * ctx.model.d_model * BF16_BYTES
    count = 4 * _layers_per_stage(ctx)  # 2 forward, 2 backward per layer
    per_step = count * lay.micro_batches
    if lay.sequence_parallel:
        one = ctx.timer.time("tp", "all-gather", groups, size, per_step) + ctx.timer.time(
            "tp", "reduce-scatter", groups, size, per_step
        )
    else:
        one = ctx.timer.time("tp", "all-reduce", groups, size, per_step)
    raw = count * one
    return raw, raw * (1.0 - ctx.plan.knobs["tp_overlap"])


def _cp_per_microbatch(ctx: StepContext) -> tuple[float, float]:
    """CP K/V exchange per micro-batch, hidden behind attention compute: (raw, exposed)."""
    lay, model = ctx.layout, ctx.model
    if lay.cp < 2:
        return 0.0, 0.0
    groups = ctx.bounded("CP exchange", cp_groups(ctx.grid, ctx.limit))
    head_dim = model.d_model // model.heads
    kv_width = head_dim * max(1, model.kv_heads // lay.tp)
    kv_bytes = 2 * lay.micro_batch * lay.seq_len * kv_width * BF16_BYTES  # K and V, whole sequence
    layers = _layers_per_stage(ctx)
    per_step = layers * lay.micro_batches
    gather = ctx.timer.time("cp", "all-gather", groups, kv_bytes, 2 * per_step)
    scatter = ctx.timer.time("cp", "reduce-scatter", groups, kv_bytes, per_step)
    attention_fwd_s = (
        4.0 * _tokens_per_rank(ctx) * lay.seq_len * model.d_model / lay.tp / ctx.rate_flops
    )
    hide = ctx.plan.knobs["cp_overlap"]
    exposed_layer = max(0.0, gather - hide * attention_fwd_s) + max(
        0.0, gather + scatter - hide * 2 * attention_fwd_s
    )
    return layers * (2 * gather + scatter), layers * exposed_layer


def _ep_per_microbatch(ctx: StepContext) -> tuple[float, float]:
    """EP all-to-all per micro-batch: dispatch and combine, forward and backward."""
    lay, model = ctx.layout, ctx.model
    if not model.moe or lay.ep < 2:
        return 0.0, 0.0
    groups = ctx.bounded("EP all-to-all", ep_groups(ctx.grid, lay.ep, ctx.limit))
    tokens = _tokens_per_rank(ctx) / (lay.tp if lay.sequence_parallel else 1)
    size = tokens * model.d_model * BF16_BYTES * model.top_k
    count = 4 * _layers_per_stage(ctx)
    raw = count * ctx.timer.time("ep", "all-to-all", groups, size, count * lay.micro_batches)
    return raw, raw * (1.0 - ctx.plan.knobs["ep_overlap"])


def _pp_per_microbatch(ctx: StepContext) -> tuple[float, float]:
    """PP send/recv per micro-batch: activation forward, its gradient backward, per chunk."""
    lay = ctx.layout
    if lay.pp < 2:
        return 0.0, 0.0
    groups = ctx.bounded("PP send/recv", pp_groups(ctx.grid, ctx.limit))
    size = _tokens_per_rank(ctx) * ctx.model.d_model * BF16_BYTES / lay.tp
    count = 2 * lay.virtual_stages
    raw = count * ctx.timer.time("pp", "send-recv", groups, size, count * lay.micro_batches)
    return raw, raw


def _stage_params(ctx: StepContext) -> tuple[float, float]:
    """Parameters on one rank of stage 0: (replicated over DP x CP, expert parameters)."""
    lay, p = ctx.layout, parameter_counts(ctx.model)
    layers = _layers_per_stage(ctx)
    embed = p.embedding + (p.output if lay.pp == 1 else 0)
    dense = layers * (p.attention + p.router) + embed
    if ctx.model.moe:
        expert = layers * p.mlp * p.experts / lay.ep
    else:
        dense += layers * p.mlp
        expert = 0.0
    return dense / lay.tp, expert / lay.tp


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


def _dp_step(ctx: StepContext, backward_s: float, forward_s: float) -> tuple[Comm, float, float]:
    """DP communication: (per-step Comm, raw and exposed seconds per micro-batch for ZeRO 3)."""
    lay, knobs = ctx.layout, ctx.plan.knobs
    if lay.dp * lay.cp < 2:
        return Comm(), 0.0, 0.0
    dense_groups, expert_groups = _dp_groups_for(ctx)
    dense_params, expert_params = _stage_params(ctx)
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


def _gpu(fabric: Fabric, catalog: Catalog, notes: list[str]) -> tuple[str, float, float]:
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


def _memory_note(ctx: StepContext, hbm_bytes: float) -> float:
    """Model-state bytes per GPU (weights, gradients, Adam states); a note when over HBM."""
    lay = ctx.layout
    dense, expert = _stage_params(ctx)
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


def assumptions(plan: Plan) -> list[str]:
    """The modelling assumptions behind a result, with the preset's own where used."""
    job, model = plan.job, plan.model
    given = {
        "compute_efficiency": job.compute_efficiency != model.compute_efficiency,
        "virtual_stages": plan.knobs["virtual_stages"] >= 0,
        "micro_batch": job.micro_batch != model.micro_batch,
        "sequence_parallel": plan.knobs["sequence_parallel"] >= 0,
    }
    shown = []
    for name in _SHOWN_ASSUMPTIONS:
        prov = model.provenance.get(name)
        if prov is not None and prov.source is None and not given[name]:
            shown.append(f"{name}: {prov.note.removeprefix('assumption: ')}")
    return [*shown, *METHOD_ASSUMPTIONS]


def train_step(
    fabric: Fabric,
    job: TrainingJob | None = None,
    catalog: Catalog | None = None,
    engine: CollectiveEngine | None = None,
) -> dict[str, Any]:
    """One training step of `job` (default: the fabric scenario's) on `fabric`.

    Returns step_s, compute_s, exposed_comm_s, bubble_s (``step_s = compute_s +
    exposed_comm_s + bubble_s``), gpu_utilization (computing share of the step), mfu,
    tokens_per_s, comm_s (per kind tp/pp/dp/ep/cp: raw_s per step on one GPU and exposed_s),
    layout, collectives (each timed collective with its count per step), model figures and
    notes (every layout adjustment and approximation that applies).
    """
    t0 = time.perf_counter()
    catalog = catalog or (engine.catalog if engine is not None else default_catalog())
    plan = resolve_job(fabric, job)
    notes = list(plan.notes)
    gpu_id, peak, hbm = _gpu(fabric, catalog, notes)
    if engine is not None and engine.fabric is not fabric:
        raise ValueError("engine was built for another fabric; pass one made for this fabric")
    engine = engine or CollectiveEngine(fabric, catalog)
    lay, model = plan.layout, plan.model
    ctx = StepContext(
        plan=plan,
        grid=rank_grid(lay),
        timer=CollectiveTimer(engine),
        rate_flops=peak * plan.compute_efficiency,
        limit=int(plan.knobs["max_concurrent_groups"]),
        notes=notes,
    )
    fpt = flops_per_token(model, lay.seq_len)
    compute_mb_s = _tokens_per_rank(ctx) * fpt / (lay.tp * lay.pp) / ctx.rate_flops
    forward_s, backward_s = compute_mb_s / 3.0, 2.0 * compute_mb_s / 3.0

    per_mb = {
        "tp": _tp_per_microbatch(ctx),
        "cp": _cp_per_microbatch(ctx),
        "ep": _ep_per_microbatch(ctx),
        "pp": _pp_per_microbatch(ctx),
    }
    dp_comm, zero3_raw_mb, zero3_exposed_mb = _dp_step(ctx, backward_s, forward_s)
    per_mb["dp"] = (zero3_raw_mb, zero3_exposed_mb)

    m = lay.micro_batches
    slot_comm_s = sum(exposed for _, exposed in per_mb.values())
    slot_s = compute_mb_s + slot_comm_s
    bubble_s = (lay.pp - 1) / lay.virtual_stages * slot_s
    comm = {kind: Comm(m * raw, m * exposed) for kind, (raw, exposed) in per_mb.items()}
    comm["dp"].raw_s += dp_comm.raw_s
    comm["dp"].exposed_s += dp_comm.exposed_s
    compute_s = m * compute_mb_s
    exposed_comm_s = sum(c.exposed_s for c in comm.values())
    step_s = compute_s + exposed_comm_s + bubble_s

    tokens = lay.global_batch * lay.seq_len
    states_bytes = _memory_note(ctx, hbm)
    params = parameter_counts(model)
    return {
        "model": model.id,
        "model_name": model.name,
        "gpu": gpu_id,
        "step_s": step_s,
        "compute_s": compute_s,
        "exposed_comm_s": exposed_comm_s,
        "bubble_s": bubble_s,
        "gpu_utilization": compute_s / step_s,
        "mfu": tokens * fpt / (step_s * lay.gpus * peak),
        "tokens_per_s": tokens / step_s,
        "tokens_per_step": tokens,
        "comm_s": {k: {"raw_s": comm[k].raw_s, "exposed_s": comm[k].exposed_s} for k in KINDS},
        "layout": lay.to_dict(),
        "gpus": lay.gpus,
        "gpus_idle": fabric.n_gpus - lay.gpus,
        "compute_efficiency": plan.compute_efficiency,
        "peak_flops": peak,
        "flops_per_token": fpt,
        "model_flops_per_step": tokens * fpt,
        "parameters": params.total,
        "active_parameters": params.active,
        "model_state_bytes_per_gpu": states_bytes,
        "micro_batch_compute_s": compute_mb_s,
        "collectives": ctx.timer.records,
        "job": {
            "model": plan.job.model,
            "overlap_dp": plan.job.overlap_dp,
            "overrides": dict(plan.job.overrides),
        },
        "notes": _unique(notes),
        "assumptions": assumptions(plan),
        "engine_s": time.perf_counter() - t0,
    }


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


# --------------------------------------------------------------------------------------------
# Latency: does ">10 µs of network latency cost >30% of GPU utilization" hold?


def latency_sweep(
    fabric: Fabric,
    job: TrainingJob | None = None,
    latencies_ns: list[float] | tuple[float, ...] = (1000.0, 5000.0, 10000.0, 20000.0),
    catalog: Catalog | None = None,
) -> list[dict[str, Any]]:
    """GPU utilization of one job as every switch's forwarding latency varies.

    Each latency is set on the scenario (``fabric.switch_latency_ns``, per switch: a
    leaf-spine-leaf path pays it three times, plus NIC latencies) and the fabric re-expanded.
    Rows hold the latency, step_s, gpu_utilization, mfu, exposed_comm_s, bubble_s, the
    exposed time per kind and ``utilization_drop``, the relative loss against the first row.

    Latency costs utilization only where latency-paying steps pile up on the critical path.
    The big one is data-parallel traffic the backward pass cannot hide: many buckets on long
    rings, each ring step paying the path latency (a mixture-of-experts model without
    pipelining reduces dozens of expert-gradient buckets over 2 x (DP/EP - 1) ring steps
    each). Smaller effects come from messages sent every micro-batch across servers: context
    parallelism or expert all-to-all spanning servers, exposed pipeline send/recv, and small
    micro-batches that shrink the compute those messages are weighed against. A dense model
    with TP inside the server and DP overlapped with the backward pass (GPT-3 175B with its
    published layout) loses well under 1% at 10 µs per switch.
    """
    catalog = catalog or default_catalog()
    job = job if job is not None else fabric.scenario.workload.training
    rows: list[dict[str, Any]] = []
    for latency in latencies_ns:
        scenario = apply_override(fabric.scenario, "fabric.switch_latency_ns", repr(float(latency)))
        result = train_step(expand(scenario, catalog), job, catalog)
        rows.append(
            {
                "switch_latency_ns": float(latency),
                "step_s": result["step_s"],
                "gpu_utilization": result["gpu_utilization"],
                "mfu": result["mfu"],
                "exposed_comm_s": result["exposed_comm_s"],
                "bubble_s": result["bubble_s"],
                "exposed_s": {k: v["exposed_s"] for k, v in result["comm_s"].items()},
            }
        )
    base = rows[0]["gpu_utilization"] if rows else 0.0
    for row in rows:
        row["utilization_drop"] = 1.0 - row["gpu_utilization"] / base if base else 0.0
    return rows


def latency_claim(
    rows: list[dict[str, Any]], at_ns: float = 10_000.0, drop: float = 0.30
) -> dict[str, Any]:
    """Whether utilization at `at_ns` is more than `drop` (relative) below the first row's."""
    if not rows:
        raise ValueError("no sweep rows")
    at = min(rows, key=lambda r: abs(r["switch_latency_ns"] - at_ns))
    base = rows[0]
    relative = 1.0 - at["gpu_utilization"] / base["gpu_utilization"]
    return {
        "holds": relative > drop,
        "baseline_ns": base["switch_latency_ns"],
        "at_ns": at["switch_latency_ns"],
        "utilization_baseline": base["gpu_utilization"],
        "utilization_at": at["gpu_utilization"],
        "relative_drop": relative,
        "threshold": drop,
    }
