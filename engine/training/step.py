"""One training step on the fabric: the step of a job, and how it changes with switch latency.

`train_step` resolves a `TrainingJob` (engine.model.scenario) against the fabric and follows
Megatron-LM's 1F1B pipeline schedule (or ZB-H1), assembling the breakdown from the parts beside it:

* `knobs`: the step-model knobs ``TrainingJob.overrides`` may set, and their checks;
* `layout`: the job resolved for this fabric (zero fields take the preset's published value,
  fitted to the fabric's GPU count), as a parallel `Layout` inside a `Plan`;
* `placement`: where each rank sits (Megatron's ``tp-cp-ep-dp-pp`` or Llama 3's
  ``tp-cp-pp-dp`` order) and the rank groups of stage 0, the stage that finishes last in 1F1B;
* `timer`: each collective timed by `CollectiveEngine` once per distinct (op, group, size);
* `compute`, `kernels`: parameters, FLOPs per token and a micro-batch's kernel time at the
  slowest GPU, kernel class by kernel class, with recomputation;
* `communication`: the TP, CP, EP and PP collectives of every micro-batch;
* `data_parallel`: gradient and ZeRO parameter traffic in buckets, and what the backward
  (first forward) pass hides of it;
* `pipeline`: the schedule's slots and bubble; `memory`: whether states and activations fit,
  and the optimizer step's time;
* `assumptions`: what the model leaves out, reported with every result.

So ``step = compute + exposed communication + bubble + optimizer``. GPU utilization is the
computing share of the step (recomputation included); MFU = model FLOPs / (step x GPUs x
peak) = utilization x compute_efficiency, the latter being the share of peak the compute
phase achieves (engine.training.kernels times it kernel by kernel).

Concurrent groups. A DP, CP, EP or PP collective is timed for one group with the other
groups of the same stage running at the same time (``concurrent=``), so they share the
fabric; at most ``max_concurrent_groups`` (64) of them, the nearest in rank order, to bound
the routing work. TP groups are NVLink-only and timed alone.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from engine.catalog.devices import Catalog
from engine.collectives.timing import CollectiveEngine
from engine.model.catalogs import scenario_catalog
from engine.model.overrides import apply_override
from engine.model.scenario import TrainingJob
from engine.runtime.progress import Progress
from engine.topology.expand import Fabric, expand
from engine.training.assumptions import assumptions
from engine.training.communication import (
    cp_per_microbatch,
    ep_per_microbatch,
    pp_per_microbatch,
    tp_per_microbatch,
)
from engine.training.compute import (
    flops_per_token,
    micro_batch_compute,
    parameter_counts,
    slowest_gpu,
)
from engine.training.context import StepContext
from engine.training.data_parallel import dp_step
from engine.training.kernels import GpuSpeed
from engine.training.knobs import CHOICES
from engine.training.layout import gpus_per_server, resolve_job
from engine.training.memory import activation_bytes, check_memory, optimizer_step_s
from engine.training.pipeline import pipeline_step
from engine.training.placement import rank_grid
from engine.training.timer import CollectiveTimer

KINDS = ("tp", "cp", "ep", "pp", "dp")


def train_step(
    fabric: Fabric,
    job: TrainingJob | None = None,
    catalog: Catalog | None = None,
    engine: CollectiveEngine | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """One training step of `job` (default: the fabric scenario's) on `fabric`; `progress`
    can stop it between and inside its collectives (`RunCancelledError`).

    Returns step_s, compute_s, exposed_comm_s, bubble_s, optimizer_s (``step_s = compute_s +
    exposed_comm_s + bubble_s + optimizer_s``), recompute_s and compute_parts_s (compute by
    kernel class), gpu_utilization (computing share of the step), mfu,
    tokens_per_s, comm_s (per kind tp/pp/dp/ep/cp: raw_s per step on one GPU and exposed_s),
    layout, collectives (each timed collective with its count per step), model figures and
    notes (every layout adjustment and approximation that applies).
    """
    t0 = time.perf_counter()
    catalog = scenario_catalog(
        fabric.scenario, catalog or (engine.catalog if engine is not None else None)
    )
    plan = resolve_job(fabric, job)
    notes = list(plan.notes)
    gpu_id, peak, hbm = slowest_gpu(fabric, catalog, notes)
    if engine is not None and engine.fabric is not fabric:
        raise ValueError("engine was built for another fabric; pass one made for this fabric")
    engine = engine or CollectiveEngine(fabric, catalog)
    lay, model = plan.layout, plan.model
    ctx = StepContext(
        plan=plan,
        grid=rank_grid(lay),
        timer=CollectiveTimer(engine, progress),
        gpu=GpuSpeed.of(catalog, gpu_id),
        limit=int(plan.knobs["max_concurrent_groups"]),
        notes=notes,
        gpus_per_server=gpus_per_server(fabric),
    )
    fpt = flops_per_token(model, lay.seq_len)
    mb = micro_batch_compute(ctx, fpt)

    per_mb = {
        "tp": tp_per_microbatch(ctx),
        "cp": cp_per_microbatch(ctx, mb.attention_layer_s),
        "ep": ep_per_microbatch(ctx),
        "pp": pp_per_microbatch(ctx),
    }
    dp_comm, zero3_raw_mb, zero3_exposed_mb = dp_step(ctx, mb.backward_s, mb.forward_s)
    per_mb["dp"] = (zero3_raw_mb, zero3_exposed_mb)

    schedule = int(plan.knobs["schedule"])
    times = pipeline_step(
        lay, mb.total_s, mb.weight_grad_s, per_mb, dp_comm, optimizer_step_s(ctx), schedule
    )
    comm, compute_s, step_s = times.comm, times.compute_s, times.step_s
    exposed_comm_s, bubble_s = times.exposed_comm_s, times.bubble_s

    tokens = lay.global_batch * lay.seq_len
    recompute = int(plan.knobs["recompute"])
    activations = activation_bytes(ctx, plan.knobs["flash_attention"] >= 0.5, recompute)
    states_bytes = check_memory(ctx, hbm, activations)
    params = parameter_counts(model)
    return {
        "model": model.id,
        "model_name": model.name,
        "gpu": gpu_id,
        "step_s": step_s,
        "compute_s": compute_s,
        "exposed_comm_s": exposed_comm_s,
        "bubble_s": bubble_s,
        "optimizer_s": times.optimizer_s,
        "path_latency_s": path_latency_s(engine),
        "recompute_s": lay.micro_batches * mb.recompute_s,
        "compute_parts_s": {k: lay.micro_batches * v for k, v in mb.parts.items()},
        "gpu_utilization": compute_s / step_s,
        "mfu": tokens * fpt / (step_s * lay.gpus * peak),
        "tokens_per_s": tokens / step_s,
        "tokens_per_step": tokens,
        "comm_s": {k: {"raw_s": comm[k].raw_s, "exposed_s": comm[k].exposed_s} for k in KINDS},
        "layout": lay.to_dict(),
        "gpus": lay.gpus,
        "gpus_idle": fabric.n_gpus - lay.gpus,
        "compute_efficiency": tokens * fpt / (compute_s * lay.gpus * peak),
        "schedule": CHOICES["schedule"][schedule],
        "recompute": CHOICES["recompute"][recompute],
        "peak_flops": peak,
        "flops_per_token": fpt,
        "model_flops_per_step": tokens * fpt,
        "parameters": params.total,
        "active_parameters": params.active,
        "model_state_bytes_per_gpu": states_bytes,
        "activation_bytes_per_gpu": activations,
        "micro_batch_compute_s": mb.total_s,
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


def path_latency_s(engine: CollectiveEngine) -> float:
    """One-way latency across the fabric: GPU 0 to the first GPU of the last server.

    NICs, cables and every switch on the route (what the field quotes as "network latency",
    unlike the per-switch forwarding figure); 0 on a single server.
    """
    fabric = engine.fabric
    starts = fabric.server_first_gpu
    if len(starts) < 3:  # server_first_gpu ends with the GPU count
        return 0.0
    src, dst = np.array([0], dtype=np.int64), np.array([starts[-2]], dtype=np.int64)
    routed = engine.router.route(src, dst, fabric.scenario.routing)
    return float(routed.latency.mean()) if routed.latency.size else 0.0


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
    Rows hold the latency, the end-to-end path latency it gives (`path_latency_s`), step_s, gpu_utilization, mfu, exposed_comm_s, bubble_s, the
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
    catalog = scenario_catalog(fabric.scenario, catalog)
    job = job if job is not None else fabric.scenario.workload.training
    rows: list[dict[str, Any]] = []
    for latency in latencies_ns:
        scenario = apply_override(fabric.scenario, "fabric.switch_latency_ns", repr(float(latency)))
        result = train_step(expand(scenario, catalog), job, catalog)
        rows.append(
            {
                "switch_latency_ns": float(latency),
                "path_latency_ns": 1e9 * result["path_latency_s"],
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
