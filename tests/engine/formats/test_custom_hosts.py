"""Import of hosts no catalog server matches (one GPU, one NIC): a user-defined server made
by the import, carried by the scenario, and the same after export and import again."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from engine.analysis import cost_run
from engine.formats.export import export_texts
from engine.formats.graph import fabric_graph
from engine.formats.importer import import_topology, topology_from_text
from engine.formats.linklist import write_link_csv
from engine.model.scenario import from_json, to_json
from engine.topology.expand import expand

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "samples"


def _imported(catalog):
    return import_topology(SAMPLES / "one-nic-hosts.links.csv", catalog, switch_model="qm9700")


def _shape(s):
    groups = [(g.id, g.kind, g.model, g.count, g.tier) for g in s.groups]
    bundles = [(b.a, b.b, b.pattern, b.blocks, b.links_per_pair, b.speed_gbps) for b in s.bundles]
    return groups, bundles


def test_one_nic_hosts_become_a_user_defined_one_gpu_one_nic_server(catalog):
    s = _imported(catalog)
    (device,) = s.devices
    assert device.id == "host-1x400g" and device.kind == "server"
    assert device.fields["gpus_per_server"] == 1 and device.fields["nics_per_server"] == 1
    assert device.fields["nic_port_gbps"] == 400
    groups, bundles = _shape(s)
    assert groups[0] == ("servers", "server", "host-1x400g", 4, "server")
    assert [g[1:] for g in groups[1:]] == [
        ("switch", "qm9700", 2, "leaf"),
        ("switch", "qm9700", 1, "spine"),
    ]
    assert [b[:2] for b in bundles] == [("servers", "leaf"), ("leaf", "spine")]
    fabric = expand(s, catalog)
    assert fabric.n_gpus == 4 and fabric.n_servers == 4
    assert fabric.bundle_cables.tolist() == [4, 2]  # the file's six cables
    # price and power: the base server's per-GPU share, as the entry's note says
    base = catalog.get(device.based_on, "server")
    per_gpu = float(base.value("price_usd")) / int(base.value("gpus_per_server"))
    server_row = next(r for r in cost_run(s, catalog).bom if r.kind == "server")
    assert math.isclose(server_row.unit_price_usd, per_gpu)
    assert "per-GPU share" in device.note
    assert from_json(to_json(s)) == s


def test_one_nic_hosts_round_trip_through_graphml_and_a_link_list(catalog):
    original = _imported(catalog)
    text = export_texts(original, "graphml", catalog)["fabric.graphml"]
    back = topology_from_text(text, "fabric.graphml", catalog)
    assert _shape(back) == _shape(original)
    assert back.devices == original.devices
    csv = write_link_csv(fabric_graph(expand(original, catalog)))
    again = topology_from_text(csv, "fabric.csv", catalog, switch_model="qm9700")
    assert [g[1:] for g in _shape(again)[0]] == [g[1:] for g in _shape(original)[0]]
    assert [d.fields for d in again.devices] == [d.fields for d in original.devices]
    f, g = expand(original, catalog), expand(again, catalog)
    np.testing.assert_array_equal(np.sort(f.link_capacity), np.sort(g.link_capacity))
    np.testing.assert_array_equal(f.link_src, g.link_src)


def test_a_server_model_the_catalog_lacks_is_defined_under_the_file_s_name(catalog):
    text = "node_a,port_a,node_b,port_b,rate_gbps\n" + "".join(
        f"gpu{i},nic{k},sw0,p{2 * i + k},200\n" for i in range(3) for k in range(2)
    )
    s = topology_from_text(text, "two-nic.csv", catalog, switch_model="qm9700")
    (device,) = s.devices
    assert device.id == "host-2x200g"
    assert device.fields["gpus_per_server"] == 2 and device.fields["nic_port_gbps"] == 200
    assert expand(s, catalog).n_gpus == 6
