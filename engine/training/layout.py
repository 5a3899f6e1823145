"""A training job resolved against a fabric: the parallel layout and the plan the step runs.

A `TrainingJob` (engine.model.scenario) names a model preset (engine.catalog.model_presets)
and a layout; zero fields take the preset's published value, fitted to the fabric's GPU count.
`resolve_job` does that fitting once (TP inside a server, PP and CP shrunk when a replica
exceeds the fabric, DP filling it, EP carved out of DP, the global batch rounded to whole
micro-batches) and says every adjustment in `Plan.notes`, so the step model that follows
works on a layout known to fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from engine.catalog.model_presets import MODEL_PRESETS, ModelPreset
from engine.model.errors import Problem, ScenarioError
from engine.model.scenario import TrainingJob
from engine.topology.expand import Fabric
from engine.training.knobs import WHERE, check_knobs, knob_flag, split_overrides


def _problem(message: str, field_name: str | None = None) -> ScenarioError:
    return ScenarioError(Problem(WHERE, message, field_name))


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
        if tp <= per_server and per_server % tp:
            raise _problem(
                f"tensor parallelism {tp} must divide the server's {per_server} GPUs", "tp"
            )
        if tp > per_server:
            if tp % per_server:
                raise _problem(
                    f"tensor parallelism {tp} across servers must span whole servers of "
                    f"{per_server} GPUs",
                    "tp",
                )
            notes.append(
                f"tensor parallelism {tp} spans {tp // per_server} servers: its collectives "
                "leave NVLink for the network, every layer, on the critical path"
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
    shape, knobs = split_overrides(job.overrides)
    check_knobs(knobs)
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
    efficiency = job.compute_efficiency
    if not 0.0 <= efficiency <= 1.0:
        raise _problem(
            "compute_efficiency must be 0 (kernel model) or in (0, 1] (a flat share of peak)",
            "compute_efficiency",
        )
    v = model.virtual_stages if knobs["virtual_stages"] < 0 else int(knobs["virtual_stages"])
    v = 1 if pp == 1 else v
    if knobs["schedule"] == 1 and knobs["virtual_stages"] < 0 and v > 1:
        notes.append(
            f"ZB-H1 runs one model chunk per stage: the preset's {v} virtual stages set to 1"
        )
        v = 1
    if v < 1:
        raise ScenarioError(Problem(f"{WHERE}.overrides", "must be ≥ 1", "virtual_stages"))
    if knobs["schedule"] == 1 and v > 1:
        raise ScenarioError(
            Problem(
                f"{WHERE}.overrides",
                "the ZB-H1 schedule runs one model chunk per stage: set virtual_stages to 1",
                "schedule",
            )
        )
    if model.layers % (pp * v):
        notes.append(
            f"{model.layers} layers do not split evenly over {pp} stages x {v} chunks; "
            "the stage with the most sets the pipeline's pace"
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
        sequence_parallel=knob_flag(knobs, "sequence_parallel", model.sequence_parallel),
        pp_outermost=knob_flag(knobs, "pp_outermost", model.pp_outermost),
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
