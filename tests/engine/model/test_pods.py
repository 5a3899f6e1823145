"""The pods of a design, found from its structure: the 3-tier NVL72 template's scalable units
(racks, leaves and spines of each, not the core), the hybrid template's InfiniBand pods (not
the gateways cabled beside the Ethernet core, nor the core), none in a design of one server
group, and never the storage network."""

from __future__ import annotations

import dataclasses

from engine.model.networks import storage_ids
from engine.model.pods import pods
from engine.presets.scenarios import load_preset
from engine.topology.templates import generate


def test_the_nvl72_superpod_has_one_pod_a_scalable_unit(catalog):
    found = pods(generate("nvl72", gpus=72 * 32, catalog=catalog))
    assert found == [[f"p{p}-servers", f"p{p}-leaf", f"p{p}-spine"] for p in range(1, 5)]


def test_hybrid_pods_leave_the_gateways_and_the_core_out(catalog):
    for ethernet_pod in (None, "sn5600"):
        s = generate("hybrid", gpus=256, ethernet_pod=ethernet_pod, catalog=catalog)
        assert pods(s) == [
            ["p1-servers", "p1-leaf", "p1-spine"],
            ["p2-servers", "p2-leaf", "p2-spine"],
        ]


def test_one_server_group_makes_no_pods(catalog):
    for s in (
        load_preset("gb200-nvl72-ib-576"),
        load_preset("h100-ib-ndr-16k"),
        generate("multi-plane", gpus=1024, server="hgx-b300", switch="sn5600", catalog=catalog),
    ):
        assert pods(s) == []


def test_pods_joined_below_their_spines_are_no_pods(catalog):
    s = generate("nvl72", gpus=72 * 32, catalog=catalog)
    # pod 2's racks also cabled to pod 1's leaves: pod 1's leaves serve two pods
    extra = dataclasses.replace(s.bundles[0], id="cross", a="p2-servers")
    s.bundles.append(extra)
    assert pods(s) == [[f"p{p}-servers", f"p{p}-leaf", f"p{p}-spine"] for p in range(2, 5)]


def test_the_storage_network_is_in_no_pod():
    s = load_preset("h100-ib-pods-storage-256")
    storage, _ = storage_ids(s)
    assert {g.kind for g in s.groups if g.id in storage} == {"storage", "switch"}
    assert pods(s) == [["p1-servers", "p1-leaf", "p1-spine"], ["p2-servers", "p2-leaf", "p2-spine"]]
