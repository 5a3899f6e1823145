"""One training step of the scenario's training job, as the door returns it.

`TrainingResult` wraps what `engine.training` computes: the step time and its split
(``step_s = compute_s + exposed_comm_s + bubble_s``), GPU utilization, MFU and tokens/s as
typed figures, the communication per parallelism kind (`CommTime`) and each timed collective
(`TimedCollective`). The layout, the job as resolved, the notes and the assumptions are
free-form descriptions of how the step was set up and stay mappings and texts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.analysis.results.codec import JsonResult


@dataclass(frozen=True)
class CommTime(JsonResult):
    """One parallelism kind's communication per step on one GPU: all of it and the part
    not hidden behind compute."""

    raw_s: float
    exposed_s: float


@dataclass(frozen=True)
class TimedCollective(JsonResult):
    """One collective the step runs: its kind (tp, dp...), op, group size and concurrent
    groups, size, time and how many times a step runs it, with the algorithm picked."""

    kind: str
    op: str
    ranks: int
    concurrent_groups: int
    bytes: float
    time_s: float
    count_per_step: float
    algorithm: str
    protocol: str


@dataclass(frozen=True)
class TrainingResult(JsonResult):
    """One training step: times, utilization, throughput, model figures and how it was set up.

    ``step_s = compute_s + exposed_comm_s + bubble_s + optimizer_s``; `compute_parts_s` splits
    the compute by kernel class (matmul, attention, memory_bound, output_layer, recompute; or
    flat when the job sets a flat compute efficiency); `path_latency_s` is the one-way latency
    across the fabric (GPU 0 to the last server); `compute_efficiency` is the share of
    peak the compute phase achieves. `comm_s` maps each kind (tp, cp, ep, pp, dp) to its `CommTime`; `layout` is the
    parallel layout used, `job` the job as asked for; `notes` list every layout adjustment
    and approximation that applies and `assumptions` the figures assumed; `engine_s` is the
    wall-clock seconds the step took to compute. The CLI's JSON writes any value JSON cannot
    hold as a float.
    """

    JSON_DEFAULT = float

    model: str
    model_name: str
    gpu: str
    step_s: float
    compute_s: float
    exposed_comm_s: float
    bubble_s: float
    optimizer_s: float
    path_latency_s: float
    recompute_s: float
    compute_parts_s: Mapping[str, float]
    gpu_utilization: float
    mfu: float
    tokens_per_s: float
    tokens_per_step: int
    comm_s: Mapping[str, CommTime]
    layout: Mapping[str, Any]
    gpus: int
    gpus_idle: int
    compute_efficiency: float
    schedule: str
    recompute: str
    peak_flops: float
    flops_per_token: float
    model_flops_per_step: float
    parameters: int
    active_parameters: int
    model_state_bytes_per_gpu: float
    activation_bytes_per_gpu: float
    micro_batch_compute_s: float
    collectives: tuple[TimedCollective, ...]
    job: Mapping[str, Any]
    notes: tuple[str, ...]
    assumptions: tuple[str, ...]
    engine_s: float
