"""A training step as ASTRA-sim's layered text workload (data, tensor or hybrid parallel).

The engine's training step (`engine.training.step.train_step`) gives the layout (TP, PP,
DP, micro-batches), the stage's compute per micro-batch, the optimizer step and every
collective with its bytes and count per step. ASTRA-sim's text workload wants one line per
layer with, for the forward, the input gradient and the weight gradient, a compute time and
a collective (`engine.formats.astra_workload`). One pass of the workload is one training
step of one pipeline stage:

- layers: the model's layers over PP (rounded to whole layers, at least one);
- compute: the stage's compute per step (micro-batch compute x micro-batches), spread evenly
  over its layers, a third each to the forward, the input gradient and the weight gradient
  (a backward pass costs twice the forward: the usual 2:1 of its two matmuls per forward
  one, an assumption for attention and memory-bound kernels); the update is the optimizer
  step over the layers;
- tensor parallelism: the forward's and the input gradient's collective are an all-reduce
  of the step's TP bytes per layer and pass (all-gather plus reduce-scatter with sequence
  parallelism move the same bytes, written as one all-reduce);
- data parallelism: the weight gradient's collective is an all-reduce of the step's DP bytes
  per layer (gradient buckets regrouped by layer).

The parallelism line follows: ``DATA`` without TP, ``MODEL`` without DP, else
``HYBRID_DATA_MODEL``. Lost: pipeline send/recv and bubble, expert and context parallelism,
the overlap the engine models (ASTRA-sim schedules its own), and which ranks form a group
(the converter's collectives span every NPU).
"""

from __future__ import annotations

import math
from typing import Any

from engine.catalog.devices import Catalog
from engine.formats.astra_workload import Layer
from engine.model.catalogs import scenario_catalog
from engine.model.scenario import Scenario
from engine.topology.expand import expand
from engine.training.layout import resolve_job
from engine.training.step import train_step

THIRD = 1.0 / 3.0  # forward : input gradient : weight gradient compute = 1 : 1 : 1


def _bytes(step: dict[str, Any], kind: str) -> float:
    """Bytes of `kind` ("tp", "dp") collectives per step."""
    return sum(c["bytes"] * c["count_per_step"] for c in step["collectives"] if c["kind"] == kind)


def _us(seconds: float) -> int:
    return max(1, round(seconds * 1e6))


def astra_training_layers(
    scenario: Scenario, catalog: Catalog | None = None
) -> tuple[str, list[Layer]]:
    """The parallelism and the layers of one pipeline stage of the scenario's training job."""
    catalog = scenario_catalog(scenario, catalog)
    fabric = expand(scenario, catalog)
    job = scenario.workload.training
    step = train_step(fabric, job, catalog)
    layout = step["layout"]
    layers = max(1, round(resolve_job(fabric, job).model.layers / layout["pp"]))
    compute_s = step["micro_batch_compute_s"] * layout["micro_batches"] / layers
    tp_bytes = round(_bytes(step, "tp") / layers / 2)  # forward and input gradient alike
    dp_bytes = round(_bytes(step, "dp") / layers)
    tp_comm = "ALLREDUCE" if layout["tp"] > 1 and tp_bytes > 0 else "NONE"
    dp_comm = "ALLREDUCE" if layout["dp"] > 1 and dp_bytes > 0 else "NONE"
    if tp_comm == "NONE":
        parallelism = "DATA"
    elif dp_comm == "NONE":
        parallelism = "MODEL"
    else:
        parallelism = "HYBRID_DATA_MODEL"
    t = _us(compute_s * THIRD)
    update = _us(step["optimizer_s"] / layers)
    tp_size = tp_bytes if tp_comm != "NONE" else 0
    dp_size = dp_bytes if dp_comm != "NONE" else 0
    width = len(str(layers - 1))
    return parallelism, [
        Layer(
            f"layer{i:0{width}d}",
            t,
            tp_comm,
            tp_size,
            t,
            tp_comm,
            tp_size,
            t,
            dp_comm,
            dp_size,
            update,
        )
        for i in range(layers)
    ]


def step_totals(layers: list[Layer]) -> dict[str, float]:
    """What the layers add up to per pass: compute (s) and bytes per kind of collective."""
    return {
        "compute_s": math.fsum(x.fwd_us + x.ig_us + x.wg_us for x in layers) * 1e-6,
        "tp_bytes": float(sum(x.fwd_bytes + x.ig_bytes for x in layers)),
        "dp_bytes": float(sum(x.wg_bytes for x in layers)),
    }
