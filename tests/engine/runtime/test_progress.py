"""Progress reports and cancellation of engine runs (engine.runtime.progress)."""

import pytest

from engine.analysis.evaluation import evaluate
from engine.presets.scenarios import load_preset
from engine.runtime.progress import Progress, RunCancelledError

PARTS = ("permutation", "collective", "training", "cost")


def test_an_evaluation_reports_every_part_in_order_up_to_done(catalog):
    seen: list[tuple[float, str]] = []
    evaluate(
        load_preset("dgx-h100-ib-ndr-1k"),
        catalog,
        parts=PARTS,
        progress=Progress(report=lambda f, s: seen.append((f, s))),
    )
    fractions = [f for f, _ in seen]
    stages = [s for _, s in seen]
    assert fractions == sorted(fractions)
    assert fractions[0] == 0.0 and fractions[-1] == 1.0
    order = ["expand", "permutation test", "max-min rates", "training step", "cost", "done"]
    assert [s for s in stages if s in order] == order
    assert any(s.startswith("collective: ") for s in stages)


@pytest.mark.parametrize("stop_after", [1, 3, 6])
def test_should_stop_ends_the_run_at_the_next_checkpoint(catalog, stop_after):
    calls: list[str] = []

    def should_stop() -> bool:
        return len(calls) >= stop_after

    def report(_fraction: float, stage: str) -> None:
        calls.append(stage)

    with pytest.raises(RunCancelledError):
        evaluate(
            load_preset("dgx-h100-ib-ndr-1k"),
            catalog,
            parts=PARTS,
            progress=Progress(report=report, should_stop=should_stop),
        )
    assert len(calls) == stop_after


def test_a_part_maps_its_progress_into_its_slice():
    seen: list[float] = []
    part = Progress(report=lambda f, _s: seen.append(f)).part(0.2, 0.6)
    part(0.0, "a")
    part(0.5, "b")
    part(1.0, "c")
    assert seen == pytest.approx([0.2, 0.4, 0.6])


def test_a_collective_stops_between_routing_and_rates_when_asked(catalog):
    from engine.collectives.placement import placement
    from engine.collectives.timing import CollectiveEngine
    from engine.topology.expand import expand

    fabric = expand(load_preset("dgx-h100-ib-ndr-1k"), catalog)
    engine = CollectiveEngine(fabric, catalog)
    polls: list[str] = []

    def should_stop() -> bool:
        polls.append("?")
        # the run's checkpoint and the first stage's checkpoint pass; the poll after its
        # routing stops it
        return len(polls) > 2

    with pytest.raises(RunCancelledError, match="cancelled during"):
        engine.run(
            "all-reduce",
            placement(fabric, 1024),
            algorithm="ring",
            progress=Progress(should_stop=should_stop),
        )
    assert len(polls) == 3
