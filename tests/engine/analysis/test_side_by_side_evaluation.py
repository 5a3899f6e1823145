"""An evaluation with its training step on a second thread gives the figures of one run in
order, and a cancel still stops all of it."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from engine.analysis import Progress, RunCancelledError, clear_caches, evaluate
from engine.analysis.interactive import PARTS
from engine.catalog.devices import default_catalog
from engine.presets.scenarios import load_preset
from tests.engine.analysis.test_cache_equivalence import SMALL, figures

SIZES = np.array([2.0**20, 2.0**30])


@pytest.mark.parametrize(
    "scenario", [SMALL, load_preset("dgx-h100-ib-ndr-1k")], ids=["small", "1k"]
)
def test_side_by_side_gives_the_figures_of_one_lane(scenario) -> None:
    catalog = default_catalog()
    runs = {}
    for side_by_side in (False, True):
        clear_caches()
        result = evaluate(
            scenario, catalog, PARTS, SIZES, keep_going=True, side_by_side=side_by_side
        )
        runs[side_by_side] = figures(result)
    assert runs[True] == runs[False]
    assert runs[True]["training"] is not None and runs[True]["collective"] is not None


def test_a_cancel_during_a_side_by_side_evaluation_stops_both_lanes() -> None:
    clear_caches()
    stages: list[str] = []
    stop = threading.Event()

    def report(_fraction: float, stage: str) -> None:
        stages.append(stage)
        if stage.startswith("collective"):
            stop.set()  # the user presses Cancel while the collective runs

    before = threading.active_count()
    with pytest.raises(RunCancelledError):
        evaluate(
            load_preset("dgx-h100-ib-ndr-1k"),
            default_catalog(),
            PARTS,
            SIZES,
            progress=Progress(report, stop.is_set),
            keep_going=True,
            side_by_side=True,
        )
    assert "done" not in stages
    assert threading.active_count() == before
