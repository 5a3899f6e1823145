"""The pipeline schedule: from one micro-batch's compute and communication to a step.

A slot is one micro-batch's compute plus its exposed TP/CP/EP/PP time. 1F1B runs
``micro_batches`` slots plus a bubble of ``(pp - 1) / virtual_stages`` slots (Megatron-LM's
interleaved schedule, Narayanan et al. 2021, section 2.2). ZB-H1 (Qi et al., 'Zero Bubble
Pipeline Parallelism', ICLR 2024, arXiv 2401.10241, section 3) splits the backward into its
input- and weight-gradient halves and runs the weight gradients in the bubble: with the same
activation memory as 1F1B its bubble is ``(pp - 1) x (F + B - W)`` instead of
``(pp - 1) x (F + B + W)``. Then come the exposed DP time and the optimizer step. So
``step = compute + exposed communication + bubble + optimizer``.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.training.context import Comm
from engine.training.layout import Layout


@dataclass
class StepTimes:
    """One step's seconds: computing, exposed communication, bubble, optimizer and the total."""

    compute_s: float
    exposed_comm_s: float
    bubble_s: float
    optimizer_s: float
    step_s: float
    comm: dict[str, Comm]  # per kind, raw and exposed seconds per step


def pipeline_step(
    lay: Layout,
    compute_mb_s: float,
    weight_grad_mb_s: float,
    per_mb: dict[str, tuple[float, float]],
    dp_comm: Comm,
    optimizer_s: float,
    schedule: int = 0,
) -> StepTimes:
    """The step of `lay`'s pipeline from per-micro-batch compute and (raw, exposed) comm.

    `per_mb` holds each kind's seconds per micro-batch; `dp_comm` the DP time paid once per
    step after the pipeline drains; `weight_grad_mb_s` the weight-gradient share of a
    micro-batch's backward (used by ZB-H1, `schedule` 1).
    """
    m = lay.micro_batches
    slot_comm_s = sum(exposed for _, exposed in per_mb.values())
    slot_s = compute_mb_s + slot_comm_s
    if schedule == 1:
        bubble_s = (lay.pp - 1) * max(0.0, slot_s - 2.0 * weight_grad_mb_s)
    else:
        bubble_s = (lay.pp - 1) / lay.virtual_stages * slot_s
    comm = {kind: Comm(m * raw, m * exposed) for kind, (raw, exposed) in per_mb.items()}
    comm["dp"].raw_s += dp_comm.raw_s
    comm["dp"].exposed_s += dp_comm.exposed_s
    compute_s = m * compute_mb_s
    exposed_comm_s = sum(c.exposed_s for c in comm.values())
    step_s = compute_s + exposed_comm_s + bubble_s + optimizer_s
    return StepTimes(compute_s, exposed_comm_s, bubble_s, optimizer_s, step_s, comm)
