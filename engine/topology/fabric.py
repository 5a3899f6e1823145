"""The expanded fabric: the flat node and link arrays every engine stage reads.

`engine.topology.expand` builds it from a scenario; routing, flows, transport and timing read
it. Arrays of an expanded graph are shared read-only between expansions of an equal structure
(`engine.topology.graph_cache`), each expansion with its own scenario and link latencies.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.model.errors import Problem
from engine.model.scenario import Scenario

NODE_GPU, NODE_NVSWITCH, NODE_SWITCH = 0, 1, 2
NVLINK_BUNDLE = -1


@dataclass
class Fabric:
    """The expanded fabric: flat node, link and endpoint arrays plus their grouping."""

    scenario: Scenario
    node_kind: np.ndarray  # int8, NODE_*
    node_group: np.ndarray  # int32 index into scenario.groups
    node_member: np.ndarray  # int32 member index within its group (GPU index for GPUs)
    gpu_server: np.ndarray  # int32 global server index of each GPU
    gpu_local: np.ndarray  # int32 GPU index inside its server (its rail)
    server_group: np.ndarray  # int32 group index of each server
    server_first_gpu: np.ndarray  # int64, GPUs of server s are first[s] .. first[s+1]-1
    server_nvswitch: np.ndarray  # int64 node index of each server's NVLink switch
    link_src: np.ndarray  # int64 node
    link_dst: np.ndarray  # int64 node
    link_capacity: np.ndarray  # float64 bytes/s
    link_latency: np.ndarray  # float64 s (= class_latency[link_latency_class])
    link_latency_class: np.ndarray  # int32: links of one class always share their latency
    class_latency: np.ndarray  # float64 s per latency class (see `latency_classes`)
    link_bundle: np.ndarray  # int32 bundle index, NVLINK_BUNDLE for NVLink
    link_upward: np.ndarray  # bool: from bundle side a to side b (toward the upper tier)
    gpu_nvlink_up: np.ndarray  # int64 link GPU -> NVLink switch
    gpu_nvlink_down: np.ndarray  # int64 link NVLink switch -> GPU
    gpu_line_rate: np.ndarray  # float64 bytes/s of each GPU's network links (0: none)
    bundle_cables: np.ndarray  # int64 cables installed per bundle (failed ones included)
    bundle_cables_up: np.ndarray  # int64 cables working per bundle
    group_first_node: np.ndarray  # int64 first node of each switch group (-1 for servers)
    warnings: list[Problem] = field(default_factory=list)
    bundle_ethernet: np.ndarray | None = None  # bool per bundle in a hybrid fabric, else None
    storage: Fabric | None = None  # the design's storage network (engine.model.networks)
    # float64 bytes/s per server that its writes into it cannot exceed (a storage node's
    # drives), inf where only the links bound them; None: no such limit anywhere
    server_write_Bps: np.ndarray | None = None  # noqa: N815 (bytes per second)

    @property
    def n_nodes(self) -> int:
        """Number of nodes (GPUs, NVLink switches, fabric switches)."""
        return int(self.node_kind.shape[0])

    @property
    def n_links(self) -> int:
        """Number of directed links."""
        return int(self.link_src.shape[0])

    @property
    def n_gpus(self) -> int:
        """Number of GPUs."""
        return int(self.gpu_server.shape[0])

    @property
    def n_servers(self) -> int:
        """Number of servers."""
        return int(self.server_group.shape[0])

    def network_link_mask(self) -> np.ndarray:
        """True for fabric links (cables), false for NVLink."""
        return self.link_bundle != NVLINK_BUNDLE


def describe_link(fabric: Fabric, link: int) -> str:
    """A readable name for a directed link, e.g. ``leaf[3] -> spine[12] (leaf-spine)``.

    Parallel cables between the same two nodes (``links_per_pair`` above 1) are told apart
    by their place among them (``leaf[3] -> spine[12] #2/2 (leaf-spine)``), so a list of
    links never shows two identical rows for two different cables.
    """

    def name(node: int) -> str:
        g = fabric.scenario.groups[int(fabric.node_group[node])]
        kind = int(fabric.node_kind[node])
        if kind == NODE_GPU:
            return f"gpu[{node}]"
        if kind == NODE_NVSWITCH:
            return f"nvswitch[{int(fabric.node_member[node])}]"
        return f"{g.id}[{int(fabric.node_member[node])}]"

    bundle = int(fabric.link_bundle[link])
    via = "nvlink" if bundle == NVLINK_BUNDLE else fabric.scenario.bundles[bundle].id
    src, dst = int(fabric.link_src[link]), int(fabric.link_dst[link])
    parallel = np.flatnonzero((fabric.link_src == src) & (fabric.link_dst == dst))
    place = ""
    if parallel.size > 1:
        place = f" #{int(np.searchsorted(parallel, link)) + 1}/{parallel.size}"
    return f"{name(src)} -> {name(dst)}{place} ({via})"
