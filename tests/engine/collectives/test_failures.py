"""A failed part is routed around and reported, not a refusal of the whole collective."""

from __future__ import annotations

import numpy as np
import pytest

from engine.catalog.devices import default_catalog
from engine.collectives.placement import placement
from engine.collectives.timing import CollectiveEngine
from engine.model.errors import ScenarioError
from engine.model.overrides import apply_override
from engine.presets.scenarios import load_preset
from engine.topology.expand import expand

GIB = np.array([2.0**30])


def _leaf_down(name: str = "dgx-h100-ib-ndr-1k"):
    failures = '[{"group": "leaf", "index": 0}]'
    return apply_override(load_preset(name), "failures.switches", failures)


def test_auto_routes_around_a_failed_leaf_and_leaves_sharp_out(catalog):
    fabric = expand(_leaf_down(), catalog)
    engine = CollectiveEngine(fabric, catalog)
    ranks = placement(fabric, 0)
    assert "sharp" not in engine.algorithms("all-reduce", ranks)
    broken = engine.run("all-reduce", ranks, GIB).rows[0]
    intact_fabric = expand(load_preset("dgx-h100-ib-ndr-1k"), catalog)
    intact = CollectiveEngine(intact_fabric, catalog).run(
        "all-reduce", placement(intact_fabric, 0), GIB
    )
    assert 0 < broken["busbw_GBps"] < intact.rows[0]["busbw_GBps"]


def test_sharp_asked_for_by_name_still_says_why_it_cannot_run(catalog):
    fabric = expand(_leaf_down(), catalog)
    with pytest.raises(ScenarioError, match="in-network reduction needs every rank"):
        CollectiveEngine(fabric, catalog).run("all-reduce", placement(fabric, 0), GIB, "sharp")


def test_the_fabric_says_what_the_failure_cost(catalog):
    warnings = [str(w) for w in expand(_leaf_down(), catalog).warnings]
    assert len(warnings) == 1
    assert "64 of 2,048 cables down (3.1%)" in warnings[0]
    assert "32 of 1,024 GPUs have no working link of their own" in warnings[0]
    assert expand(load_preset("dgx-h100-ib-ndr-1k"), catalog).warnings == []


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # zero capacities divide by zero on the way
def test_a_collective_with_no_usable_capacity_is_a_refusal_not_a_traceback():
    """Links that carry nothing leave every algorithm without a finite time: the engine says
    so by field instead of failing to pick a best algorithm (a KeyError once)."""
    catalog = default_catalog()
    fabric = expand(load_preset("rail-only-h100-1k"), catalog)
    engine = CollectiveEngine(fabric, catalog)
    engine.capacity = engine.capacity * 0.0
    with pytest.raises(ScenarioError, match="no finite time"):
        engine.run("all-reduce", np.arange(16), np.array([2.0**20]), "ring")
