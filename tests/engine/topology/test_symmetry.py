"""Colour refinement of a fabric (`engine.topology.symmetry`): what stands alike."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engine.analysis import load_preset
from engine.catalog.devices import default_catalog
from engine.model.errors import ScenarioError
from engine.model.scenario import Failures, LinkFailure
from engine.topology.expand import expand
from engine.topology.symmetry import Colouring, fabric_colours, gpu_nodes, relative_colours
from engine.topology.templates import generate


@pytest.fixture(scope="module")
def catalog():
    return default_catalog()


def neighbourhoods(fabric, colours: Colouring) -> list[Counter]:
    """Per node: how many links of each colour lead to nodes of each colour, each way."""
    out = [Counter() for _ in range(colours.node.size)]
    for li, (u, v) in enumerate(
        zip(fabric.link_src.tolist(), fabric.link_dst.tolist(), strict=True)
    ):
        out[u][("out", int(colours.link[li]), int(colours.node[v]))] += 1
        out[v][("in", int(colours.link[li]), int(colours.node[u]))] += 1
    return out


def assert_equitable(fabric, colours: Colouring) -> None:
    """Nodes of one colour see the same numbers of links of each colour to each colour."""
    seen = neighbourhoods(fabric, colours)
    first: dict[int, Counter] = {}
    for node, colour in enumerate(colours.node.tolist()):
        assert seen[node] == first.setdefault(colour, seen[node]), f"node {node}"


@pytest.mark.parametrize("preset", ["dgx-h100-ib-ndr-1k", "gb200-nvl72-ib-576"])
def test_stable_colours_are_equitable_and_gpus_are_alike(preset, catalog):
    fabric = expand(load_preset(preset), catalog)
    colours = fabric_colours(fabric)
    assert_equitable(fabric, colours)
    assert np.unique(colours.node[gpu_nodes(fabric)]).size == 1


def test_a_gpu_sees_its_superpod_by_distance(catalog):
    """From GPU 0 of the 1k SuperPOD (4 scalable units of 32 DGX, 8 rails): its 7
    server-mates, the 31 GPUs behind its leaf, the 7 x 31 on other rails of its unit, the
    3 x 32 x 8 of the other units (every leaf reaches every spine: rails alike there)."""
    fabric = expand(load_preset("dgx-h100-ib-ndr-1k"), catalog)
    stable = fabric_colours(fabric)
    seen = relative_colours(fabric, stable, int(gpu_nodes(fabric)[0]))
    assert_equitable(fabric, seen)
    counts = sorted(Counter(seen.node[gpu_nodes(fabric)].tolist()).values())
    assert counts == [1, 7, 31, 217, 768]


def test_a_failed_cable_splits_the_colours(catalog):
    """One leaf-spine cable down: the leaf and spine it joined no longer stand with the
    rest, nor do the GPUs behind that leaf, and the colours stay equitable."""
    scenario = load_preset("dgx-h100-ib-ndr-1k")
    regular = fabric_colours(expand(scenario, catalog))
    scenario.failures = Failures(links=[LinkFailure("leaf-spine", 1)])
    fabric = expand(scenario, catalog)
    colours = fabric_colours(fabric)
    assert colours.n_node_colours > regular.n_node_colours
    assert np.unique(colours.node[gpu_nodes(fabric)]).size > 1
    assert_equitable(fabric, colours)


@settings(max_examples=15, deadline=None)
@given(
    gpus=st.sampled_from([64, 128, 256]),
    template=st.sampled_from(["leaf-spine", "rail-optimized", "fat-tree"]),
    oversubscription=st.sampled_from([1.0, 2.0, 3.0]),
    down=st.integers(0, 3),
)
def test_colours_are_equitable_on_generated_fabrics(gpus, template, oversubscription, down):
    """On generated fabrics, with or without failed cables: nodes of one colour see the same
    numbers of links of each colour to nodes of each colour (the premise of running kinds)."""
    catalog = default_catalog()
    try:
        scenario = generate(
            template,
            gpus=gpus,
            server="hgx-h100",
            switch="sn5600",
            oversubscription=oversubscription,
        )
    except ScenarioError:
        assume(False)  # a size the template does not build (it says which it does)
    if down:
        scenario.failures = Failures(links=[LinkFailure(scenario.bundles[-1].id, down)])
    fabric = expand(scenario, catalog)
    colours = fabric_colours(fabric)
    assert_equitable(fabric, colours)
    assert_equitable(fabric, relative_colours(fabric, colours, int(gpu_nodes(fabric)[0])))
