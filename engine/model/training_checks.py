"""Checks of a scenario's training job: sizes, the ZeRO stage and the compute efficiency.

Zero means "the model preset's value" for every size, so only negative sizes, a ZeRO stage
outside -1..3 and an efficiency no real step runs at are refused, each naming its field.
"""

from __future__ import annotations

from engine.model.errors import Problem
from engine.model.scenario import TrainingJob


def check_training(job: TrainingJob) -> list[Problem]:
    """The training job's numbers: sizes are 0 (the preset's) or positive, the ZeRO stage
    -1 (the preset's) to 3, the efficiency 0 (the preset's) to 1."""
    where = "workload.training"
    problems = []
    for name in ("tp", "pp", "dp", "ep", "cp", "micro_batch", "global_batch", "seq_len"):
        value = getattr(job, name)
        if value < 0:
            problems.append(
                Problem(where, f"{name} must be 0 (the preset's) or positive, not {value}", name)
            )
    if not -1 <= job.zero_stage <= 3:
        problems.append(
            Problem(
                where,
                f"zero_stage must be 0, 1, 2 or 3 (-1 for the preset's), not {job.zero_stage}",
                "zero_stage",
            )
        )
    # A GPU doing under 1% of its peak on a training step's matmuls runs no training job
    # (a denormal efficiency once made the step infinitely long).
    eff = job.compute_efficiency
    if not (eff == 0.0 or 0.01 <= eff <= 1.0):
        problems.append(
            Problem(
                where,
                f"compute_efficiency must be 0 (the preset's) or between 0.01 and 1, not {eff:g}",
                "compute_efficiency",
            )
        )
    return problems
