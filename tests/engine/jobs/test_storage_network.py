"""A storage network beside the compute fabric (`engine.model.networks`,
`engine.topology.storage`): checkpoints written there, its parts priced, the compute fabric
untouched.

Closed form: on a non-blocking storage network every checkpoint write crosses only the
writer's front-end port and a storage node's port, so a checkpoint of B bytes takes
B / min(writers' front-end bandwidth, storage nodes' bandwidth) plus one path latency, each
bandwidth the ports' line rate after RoCE's header efficiency (catalog figures), a storage
node's bandwidth no more than its drives write (drives x sequential write); behind a
thin storage spine, the cross-section between the writers' and the nodes' leaves takes the
place of the narrower end.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.analysis import convert_technology, shared_run
from engine.cost.bom import bill_of_materials
from engine.jobs.interference import interference
from engine.model.errors import ScenarioError
from engine.model.jobs import Job
from engine.model.scenario import DeviceGroup, LinkBundle, from_json, to_json
from engine.model.validation import check_structure
from engine.reliability.parts import part_counts
from engine.topology.expand import expand, header_efficiency
from engine.topology.storage import add_storage
from engine.topology.templates import generate


def _design(catalog, nodes: int, gpus: int = 32):
    base = generate("leaf-spine", gpus=gpus, server="dgx-h100", switch="qm9700", catalog=catalog)
    return base, add_storage(base, nodes, catalog=catalog)


def _drive_Bps(node) -> float:  # noqa: N802 (bytes per second)
    """What one storage node's drives write: drives x sequential write (catalog)."""
    return node.value("drives") * node.value("drive_write_GBps") * 1e9


def _roce_Bps(catalog, gbps: float) -> float:  # noqa: N802 (bytes per second)
    tech = catalog.technology("roce")
    eff = header_efficiency(
        float(tech.value("header_bytes_per_packet")), float(tech.value("mtu_bytes"))
    )
    return gbps * 1e9 / 8 * eff


@pytest.mark.parametrize("nodes", [1, 2, 8])
def test_checkpoint_time_is_bytes_over_the_narrower_of_writers_and_storage_nodes(catalog, nodes):
    _, s = _design(catalog, nodes)
    size = 2.0**30
    s.jobs = [Job("ckpt", 32, "checkpoint", message_bytes=size)]
    assert check_structure(s, catalog) == []
    server = catalog.get("dgx-h100", "server")
    node = catalog.get("storage-node-2x400g", "storage")
    writers = 4 * server.value("frontend_nics_per_server") * server.value("frontend_port_gbps")
    storage = nodes * node.value("ports") * node.value("port_gbps")
    traffic, alone, shared = interference(expand(s, catalog), s.jobs)[0]
    assert traffic.on_storage and traffic.src.size == 32
    limit = min(_roce_Bps(catalog, min(writers, storage)), nodes * _drive_Bps(node))
    expected = 32 * size / limit
    assert alone.time_s - alone.latency_s == pytest.approx(expected, rel=1e-9)
    assert shared.time_s == pytest.approx(alone.time_s)


def test_checkpoints_on_the_storage_network_leave_the_compute_jobs_alone(catalog):
    _, s = _design(catalog, 2, gpus=64)
    s.jobs = [Job("train", 32), Job("ckpt", 32, "checkpoint")]
    result = shared_run(s, catalog)
    train, ckpt = result.jobs
    assert train.slowdown == pytest.approx(1.0) and ckpt.slowdown == pytest.approx(1.0)
    assert result.storage_servers == 0  # no GPU server is free, and none needs to be
    assert any("2 storage nodes" in note for note in result.notes)
    # the checkpoint needs no free server when there is a storage network
    s.jobs = [Job("train", 32), Job("ckpt", 32, "checkpoint")]
    assert check_structure(s, catalog) == []


def test_the_compute_fabric_is_the_same_with_or_without_a_storage_network(catalog):
    base, s = _design(catalog, 4)
    plain, both = expand(base, catalog), expand(s, catalog)
    assert plain.storage is None and both.storage is not None
    assert [g.id for g in both.scenario.groups] == [g.id for g in base.groups]
    np.testing.assert_array_equal(both.link_capacity, plain.link_capacity)
    np.testing.assert_array_equal(both.link_src, plain.link_src)
    # the storage network: every GPU server's 2 front-end ports and the nodes' ports, once
    net = both.storage
    assert net.n_servers == plain.n_servers + 4
    cables = net.bundle_cables.sum()
    assert cables == 4 * 2 + 4 * 2
    assert part_counts(both, catalog) == part_counts(plain, catalog)


def test_the_storage_network_is_priced_on_lines_of_its_own(catalog):
    base, s = _design(catalog, 4)
    plain = bill_of_materials(expand(base, catalog), catalog)
    both = bill_of_materials(expand(s, catalog), catalog)
    theirs = [line for line in both if line.tier.startswith("storage")]
    ours = [line for line in both if not line.tier.startswith("storage")]
    assert ours == plain
    node = next(line for line in theirs if line.kind == "storage")
    price = catalog.get("storage-node-2x400g", "storage").value("price_usd")
    assert node.count == 4 and node.price_usd == 4 * price and not node.network
    switches = [line for line in theirs if line.kind == "switch"]
    assert [(line.catalog_id, line.count) for line in switches] == [("sn5600", 2)]
    assert sum(line.count for line in theirs if line.kind in ("cable", "fiber")) >= 16


def test_a_large_storage_network_gets_spines_and_builds(catalog):
    s = add_storage(
        generate("leaf-spine", gpus=1024, server="dgx-h100", switch="qm9700", catalog=catalog),
        32,
        catalog=catalog,
    )
    assert "storage-spine" in {g.id for g in s.groups}
    assert check_structure(s, catalog) == []
    net = expand(s, catalog).storage
    assert net is not None and net.n_servers == 128 + 32


def _without_front_end(catalog, model: str):
    """`catalog` with `model`'s front-end ports taken out (as a user-defined server may be)."""
    d = catalog.devices[model]
    fields = {k: v for k, v in d.fields.items() if not k.startswith("frontend_")}
    return replace(catalog, devices={**catalog.devices, model: replace(d, fields=fields)})


def test_a_server_without_front_end_ports_cannot_join_the_storage_network(catalog):
    bare = _without_front_end(catalog, "hgx-h100")
    _, s = _design(catalog, 2)
    s.groups[0] = replace(s.groups[0], model="hgx-h100")
    wheres = {p.where: p.message for p in check_structure(s, bare)}
    assert "front-end" in wheres[f"groups[{s.groups[0].id}]"]
    with pytest.raises(ScenarioError, match="front-end"):
        add_storage(
            generate("leaf-spine", gpus=32, server="hgx-h100", switch="sn5600", catalog=bare),
            2,
            catalog=bare,
        )


def test_every_catalog_server_has_sourced_front_end_ports(catalog):
    """Each GPU server names its front-end NIC, port count and speed, each with a source or
    an assumption, and the NIC runs at that speed."""
    for server in catalog.of_kind("server"):
        for name in ("frontend_nic", "frontend_nics_per_server", "frontend_port_gbps"):
            figure = server.fields[name]
            assert figure.source or figure.assumption, (server.id, name)
        nic = catalog.get(server.value("frontend_nic"), "nic")
        assert float(server.value("frontend_port_gbps")) in {
            float(v) for v in nic.value("port_modes_gbps")
        }, server.id


@pytest.mark.parametrize(
    ("template", "server", "gpus", "switch"),
    [
        ("leaf-spine", "dgx-b200", 32, "qm9700"),
        ("leaf-spine", "hgx-h100", 32, "qm9700"),
        ("leaf-spine", "hgx-h100-bf3", 32, "sn5600"),
        ("leaf-spine", "hgx-b300", 32, "q3400"),
        ("leaf-spine", "dgx-a100", 32, "qm8700"),
        ("nvl72", "gb200-nvl72", 144, "qm9700"),
    ],
)
def test_a_storage_network_on_other_servers_takes_bytes_over_the_narrower_end(
    catalog, template, server, gpus, switch
):
    """The closed form of the DGX H100 case on each server's own front-end ports: a
    checkpoint of B bytes per GPU takes G x B / min(servers' front-end, nodes' ports)."""
    base = generate(template, gpus=gpus, server=server, switch=switch, catalog=catalog)
    s = add_storage(base, 2, catalog=catalog)
    assert check_structure(s, catalog) == []
    size = 2.0**30
    srv, node = catalog.get(server, "server"), catalog.get("storage-node-2x400g", "storage")
    servers = gpus // srv.value("gpus_per_server")
    s.jobs = [Job("ckpt", gpus, "checkpoint", message_bytes=size)]
    fe = servers * srv.value("frontend_nics_per_server") * srv.value("frontend_port_gbps")
    ports = 2 * node.value("ports") * node.value("port_gbps")
    fabric = expand(s, catalog)
    traffic, alone, _ = interference(fabric, s.jobs)[0]
    assert traffic.on_storage and traffic.src.size == gpus
    limit = min(_roce_Bps(catalog, fe), _roce_Bps(catalog, ports), 2 * _drive_Bps(node))
    assert alone.time_s - alone.latency_s == pytest.approx(gpus * size / limit, rel=1e-9)


@pytest.mark.parametrize("nodes", [1, 2, 4])
def test_a_checkpoint_bound_by_the_drives_takes_bytes_over_nodes_times_drive_bandwidth(
    catalog, nodes
):
    """Closed form: the catalog node's six drives write 6 x 7 GB/s = 42 GB/s, below its two
    400G ports (about 97 GB/s after RoCE headers), so a checkpoint of B bytes in all takes
    B / (nodes x 42 GB/s) plus a path latency (the writes spread evenly: the node count
    divides each front-end port's 16 writers); with drives as fast as the ports the ports
    bound it again."""
    node = catalog.get("storage-node-2x400g", "storage")
    assert nodes * _drive_Bps(node) < _roce_Bps(catalog, nodes * 2 * 400.0)
    _, s = _design(catalog, nodes)
    size = 2.0**30
    s.jobs = [Job("ckpt", 32, "checkpoint", message_bytes=size)]
    _, alone, shared = interference(expand(s, catalog), s.jobs)[0]
    total = 32 * size
    assert alone.time_s - alone.latency_s == pytest.approx(
        total / (nodes * _drive_Bps(node)), rel=1e-9
    )
    assert shared.time_s == pytest.approx(alone.time_s)
    fast = replace(
        node,
        fields={
            **node.fields,
            "drive_write_GBps": replace(node.fields["drive_write_GBps"], value=1e3),
        },
    )
    quick = replace(catalog, devices={**catalog.devices, node.id: fast})
    _, alone, _ = interference(expand(s, quick), s.jobs)[0]
    ports = _roce_Bps(catalog, nodes * 2 * 400.0)
    assert alone.time_s - alone.latency_s == pytest.approx(total / ports, rel=1e-9)


def test_an_unknown_storage_model_is_named(catalog):
    _, s = _design(catalog, 2)
    i = next(i for i, g in enumerate(s.groups) if g.kind == "storage")
    s.groups[i] = replace(s.groups[i], model="no-such-node")
    problems = check_structure(s, catalog)
    assert any(p.where == "groups[storage-nodes]" and p.field == "model" for p in problems)


def test_a_hand_drawn_storage_network_round_trips_and_expands(catalog):
    base, _ = _design(catalog, 1)
    s = replace(
        base,
        groups=[
            *base.groups,
            DeviceGroup("nas", "storage", "storage-node-2x400g", 2, "server"),
            DeviceGroup("fe", "switch", "sn5600", 2, "leaf"),
        ],
        bundles=[
            *base.bundles,
            LinkBundle("srv-fe", base.groups[0].id, "fe", "rail"),
            LinkBundle("nas-fe", "nas", "fe", "rail"),
        ],
    )
    assert from_json(to_json(s)) == s
    assert check_structure(s, catalog) == []
    assert expand(s, catalog).storage.n_servers == 4 + 2


def test_a_technology_variant_keeps_the_storage_network_on_ethernet(catalog):
    _, s = _design(catalog, 2)
    variant = convert_technology(s, "roce", catalog)
    models = {g.id: g.model for g in variant.groups}
    assert models["storage-leaf"] == "sn5600" and models["leaf"] != "qm9700"
    back = convert_technology(variant, "infiniband", catalog)
    assert {g.id: g.model for g in back.groups}["storage-leaf"] == "sn5600"
    assert check_structure(back, catalog) == []


def test_a_thin_storage_spine_bounds_the_checkpoint_by_its_cross_section(catalog):
    """Servers on two leaves, storage nodes on two others, one 400G cable from each leaf to
    the one spine: every write crosses the servers' leaves' two uplinks, so a checkpoint of
    B bytes takes B / (2 x 400G after RoCE headers), below both ends' port bandwidth."""
    base, _ = _design(catalog, 1)
    servers = base.groups[0].id
    s = replace(
        base,
        groups=[
            *base.groups,
            DeviceGroup("nas", "storage", "storage-node-2x400g", 4, "server"),
            DeviceGroup("fe-a", "switch", "sn5600", 2, "leaf"),
            DeviceGroup("fe-b", "switch", "sn5600", 2, "leaf"),
            DeviceGroup("fe-spine", "switch", "sn5600", 1, "spine"),
        ],
        bundles=[
            *base.bundles,
            LinkBundle("srv-fe", servers, "fe-a", "rail"),
            LinkBundle("nas-fe", "nas", "fe-b", "rail"),
            LinkBundle("fe-a-spine", "fe-a", "fe-spine", "full"),
            LinkBundle("fe-b-spine", "fe-b", "fe-spine", "full"),
        ],
    )
    size = 2.0**30
    s.jobs = [Job("ckpt", 32, "checkpoint", message_bytes=size)]
    assert check_structure(s, catalog) == []
    _, alone, _ = interference(expand(s, catalog), s.jobs)[0]
    cross = 2 * 400.0  # Gb/s: the two leaf uplinks; ends: 4 x 2 x 400G each side
    assert alone.time_s - alone.latency_s == pytest.approx(
        32 * size / _roce_Bps(catalog, cross), rel=1e-9
    )


def test_inference_runs_on_the_front_end_network_through_the_front_end_ports(catalog):
    """With a front-end (storage) network, an inference job's requests and responses are
    north-south traffic through both servers' front-end ports: 4 GPUs share each 400G port,
    so each request of B bytes takes 4 B / 400G (after RoCE headers) plus two path
    latencies, and the training job on the compute fabric keeps its speed."""
    _, s = _design(catalog, 2)
    size = 2.0**28
    s.jobs = [Job("train", 16), Job("serve", 8, "inference", message_bytes=size)]
    assert check_structure(s, catalog) == []
    found = interference(expand(s, catalog), s.jobs)
    (train, t_alone, t_shared), (serve, alone, shared) = found
    assert not train.on_storage and t_shared.time_s == pytest.approx(t_alone.time_s)
    assert serve.on_storage and serve.src.size == 16  # 8 requests in, 8 responses out
    net = expand(s, catalog).storage
    assert set(net.gpu_server[serve.src]) == {2, 3}  # the serving and the front-end server
    assert np.all(net.gpu_line_rate[serve.src] > 0)  # each flow starts at a front-end port
    expected = 4 * size / _roce_Bps(catalog, 400.0)
    assert alone.time_s - 2 * alone.latency_s == pytest.approx(expected, rel=1e-9)
    assert shared.time_s == pytest.approx(alone.time_s)
    notes = shared_run(s, catalog).notes
    assert any("front-end (storage) network" in note for note in notes)
