"""A collective workload as steps of flows, for the formats that can say "after": htsim's
connection matrices chain steps with barrier triggers, so a collective exported there runs
as the DAG the engine times, step after step.

The steps come from the engine's own schedule (`engine.collectives.schedules`) of the
workload's op and algorithm over its ranks: each stage's concurrent flows, `repeat` times,
each flow ``share × message_bytes`` bytes. ``auto`` takes the op's first algorithm (ring for
the reductions and gathers), since choosing per size is the timing model's business; stages
the switches reduce themselves (SHARP, NVLS) have no flows to write and are refused.
"""

from __future__ import annotations

from engine.collectives.placement import placement
from engine.collectives.schedules import ALGORITHMS, build_schedule, layout
from engine.formats.graph import Flow
from engine.formats.lines import refuse
from engine.topology.expand import Fabric

MAX_FLOWS = 2_000_000  # connections a written DAG may hold (htsim keeps each in memory)


def collective_steps(fabric: Fabric) -> tuple[str, list[list[Flow]]]:
    """(algorithm used, steps) of the scenario's collective workload; each step's flows
    start when every flow of the step before has been received."""
    w = fabric.scenario.workload
    algorithm = ALGORITHMS[w.op][0] if w.algorithm == "auto" else w.algorithm
    lay = layout(placement(fabric, w.ranks), fabric.gpu_server)
    steps: list[list[Flow]] = []
    total = 0
    for stage in build_schedule(w.op, algorithm, lay):
        if stage.analytic_s_per_byte is not None:
            raise refuse(
                "workload",
                None,
                f"{algorithm} {w.op}: its {stage.name} stage is reduced in the switches "
                "(no flows to write); choose another algorithm to export it",
            )
        step = [
            Flow(int(a), int(b), max(1, round(share * w.message_bytes)))
            for a, b, share in zip(stage.src, stage.dst, stage.share, strict=True)
            if a != b and share > 0
        ]
        if not step:
            continue
        total += len(step) * stage.repeat
        if total > MAX_FLOWS:
            raise refuse(
                "workload",
                None,
                f"{algorithm} {w.op} over {lay.n} ranks is more than {MAX_FLOWS:,} flows; "
                "export fewer ranks (workload.ranks)",
            )
        steps += [step] * stage.repeat
    return algorithm, steps
