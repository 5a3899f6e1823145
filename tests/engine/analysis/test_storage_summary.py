"""`evaluate`'s storage network part (`engine.analysis.storage_network`): what the storage
network holds, the bandwidth at each end and the checkpoint over it, named by what bounds it.

Closed forms on a 32-GPU DGX H100 design (4 servers, 2 front-end 400G ports each): with the
catalog's drives the nodes' drives bound the checkpoint (nodes x 42 GB/s); with drives made
fast, 8 nodes (6.4 Tb/s of ports) leave the servers' 3.2 Tb/s of front-end ports the bound,
and the checkpoint of 32 x B bytes takes 32 B / front-end plus one path latency.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.analysis import EvaluationResult, evaluate
from engine.topology.storage import add_storage
from engine.topology.templates import generate


def _design(catalog, nodes: int):
    base = generate("leaf-spine", gpus=32, server="dgx-h100", switch="qm9700", catalog=catalog)
    return add_storage(base, nodes, catalog=catalog)


def test_no_storage_network_no_storage_part(catalog):
    base = generate("leaf-spine", gpus=32, server="dgx-h100", switch="qm9700", catalog=catalog)
    result = evaluate(base, catalog, ())
    assert result.storage is None and "storage" not in result.to_dict()


def test_the_drives_bound_the_catalog_node(catalog):
    result = evaluate(_design(catalog, 2), catalog, ())
    s = result.storage
    node = catalog.get("storage-node-2x400g", "storage")
    drives = 2 * node.value("drives") * node.value("drive_write_GBps") * 1e9
    assert (s.nodes, s.frontend_ports, s.cables_total) == (2, 8, 8 + 4)
    assert dict(s.switches) == {"leaf": 2}
    assert s.node_drives_Bps == pytest.approx(drives)
    assert s.checkpoint_bound == "storage nodes' drives"
    assert s.checkpoint_Bps == pytest.approx(drives, rel=1e-9)
    assert s.node_ports_Bps == pytest.approx(s.frontend_Bps / 2)  # 4 x 400G vs 8 x 400G
    assert EvaluationResult.from_dict(result.to_dict()) == result


def test_with_fast_drives_the_servers_front_end_bounds_it(catalog):
    node = catalog.get("storage-node-2x400g", "storage")
    fast = replace(
        node,
        fields={
            **node.fields,
            "drive_write_GBps": replace(node.fields["drive_write_GBps"], value=1e3),
        },
    )
    quick = replace(catalog, devices={**catalog.devices, node.id: fast})
    s = evaluate(_design(catalog, 8), quick, ()).storage
    assert s.checkpoint_bound == "servers' front-end ports"
    assert s.checkpoint_Bps == pytest.approx(s.frontend_Bps, rel=1e-9)
    total = s.checkpoint_gpus * s.checkpoint_bytes_per_gpu
    assert s.checkpoint_s > total / s.frontend_Bps
