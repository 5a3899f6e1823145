"""The bundle a connection between two groups proposes: pattern and speed from the catalog."""

from __future__ import annotations

import dataclasses

import pytest

from engine.analysis.connect import DEFAULT_SPEED_GBPS, default_bundle
from engine.model.scenario import DeviceGroup
from engine.presets.scenarios import DEFAULT_PRESET, load_preset
from engine.topology.storage import add_storage
from engine.topology.templates import generate


@pytest.fixture
def scenario():
    return load_preset(DEFAULT_PRESET)


def test_servers_to_a_rail_sized_leaf_get_rail_at_the_nic_speed(scenario, catalog):
    bundle = default_bundle(scenario, catalog, "leaf", "servers")  # either order
    assert (bundle.id, bundle.a, bundle.b, bundle.pattern) == (
        "servers-leaf",
        "servers",
        "leaf",
        "rail",
    )
    server = catalog.get("dgx-h100", "server")
    assert bundle.speed_gbps == float(server.value("nic_port_gbps"))


def test_a_leaf_count_that_is_no_multiple_of_the_nics_gets_full(scenario, catalog):
    odd = dataclasses.replace(scenario.group("leaf"), count=7)
    scenario = dataclasses.replace(
        scenario, groups=[odd if g.id == "leaf" else g for g in scenario.groups]
    )
    assert default_bundle(scenario, catalog, "servers", "leaf").pattern == "full"


def test_switches_connect_lower_tier_first_full_at_400g(scenario, catalog):
    bundle = default_bundle(scenario, catalog, "spine", "leaf")
    assert (bundle.a, bundle.b, bundle.pattern) == ("leaf", "spine", "full")
    assert bundle.speed_gbps == DEFAULT_SPEED_GBPS == 400.0


def test_unsuitable_pairs_give_none(scenario, catalog):
    more = DeviceGroup("more", "server", "dgx-h100", 2, "server")
    scenario = dataclasses.replace(scenario, groups=[*scenario.groups, more])
    assert default_bundle(scenario, catalog, "servers", "more") is None
    assert default_bundle(scenario, catalog, "leaf", "leaf") is None
    assert default_bundle(scenario, catalog, "leaf", "nowhere") is None


def test_a_rack_into_the_storage_network_is_striped_over_its_leaves(catalog):
    """An NVL72 rack's 36 front-end ports into 2 storage leaves: round robin (striped, one
    block per leaf) at the front-end speed; a DGX H100's 2 ports: one rail each."""
    s = add_storage(
        generate("nvl72", gpus=144, server="gb200-nvl72", switch="qm9700", catalog=catalog),
        2,
        catalog=catalog,
    )
    rack = next(g.id for g in s.groups if g.kind == "server")
    bundle = default_bundle(s, catalog, rack, "storage-leaf")
    assert (bundle.pattern, bundle.blocks) == ("striped", 2)
    assert bundle.speed_gbps == catalog.get("gb200-nvl72", "server").value("frontend_port_gbps")
    s = add_storage(
        generate("leaf-spine", gpus=32, server="dgx-h100", switch="qm9700", catalog=catalog),
        2,
        catalog=catalog,
    )
    servers = next(g.id for g in s.groups if g.kind == "server")
    assert default_bundle(s, catalog, servers, "storage-leaf").pattern == "rail"
