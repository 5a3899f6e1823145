"""The 1F1B pipeline schedule: from one micro-batch's compute and communication to a step.

A 1F1B slot is one micro-batch's compute plus its exposed TP/CP/EP/PP time; the pipeline
runs ``micro_batches + (pp - 1) / virtual_stages`` slots, the extra ones being the bubble
(Megatron-LM's interleaved schedule); then the exposed DP time. So ``step = compute +
exposed communication + bubble``.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.training.context import Comm
from engine.training.layout import Layout


@dataclass
class StepTimes:
    """One step's seconds: computing, exposed communication, bubble and the total."""

    compute_s: float
    exposed_comm_s: float
    bubble_s: float
    step_s: float
    comm: dict[str, Comm]  # per kind, raw and exposed seconds per step


def one_f_one_b(
    lay: Layout, compute_mb_s: float, per_mb: dict[str, tuple[float, float]], dp_comm: Comm
) -> StepTimes:
    """The step of `lay`'s pipeline from per-micro-batch compute and (raw, exposed) comm.

    `per_mb` holds each kind's seconds per micro-batch; `dp_comm` the DP time paid once per
    step after the pipeline drains.
    """
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
    return StepTimes(compute_s, exposed_comm_s, bubble_s, step_s, comm)
