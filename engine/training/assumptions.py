"""The modelling assumptions reported with every training-step result.

A result is only as good as what the step model leaves out; these lines say it, together
with the preset figures that are the preset's own assumption (not a published value) when the
job did not give its own.
"""

from __future__ import annotations

from engine.training.layout import Plan

# What the step model leaves out or simplifies, reported with every result.
METHOD_ASSUMPTIONS = (
    "communication is timed for stage 0 and stands for every stage (the same on any fabric "
    "position); compute is the slowest stage's, which sets the pipeline's pace",
    "kernels run back to back at their catalog speeds (matmul ceiling on a roofline, attention "
    "kernel efficiency, HBM streams); launch gaps, kernel overlap and data loading take no time",
    "DP traffic hides only behind the last micro-batch's backward (first forward for the "
    "ZeRO parameter all-gather); the last bucket is always exposed",
    "TP and EP collectives and PP send/recv sit on the critical path unless tp_overlap / "
    "ep_overlap say otherwise",
)
# Preset fields whose assumption (when the preset's value is used) is worth showing.
_SHOWN_ASSUMPTIONS = ("virtual_stages", "micro_batch", "sequence_parallel")


def assumptions(plan: Plan) -> list[str]:
    """The modelling assumptions behind a result, with the preset's own where used."""
    job, model = plan.job, plan.model
    given = {
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
