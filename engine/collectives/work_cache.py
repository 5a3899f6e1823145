"""What a collective's timing computes once and keeps: schedules and which flows use the network.

A sweep of a timing field (a latency, a protocol) expands a new fabric per point but keeps
its graph, so the same collectives are scheduled and routed again and again. Their schedules
(`SCHEDULES`, keyed by op, algorithm, ranks, servers and the switch-reduced algorithms'
per-byte seconds: see `engine.collectives.timing.CollectiveEngine._schedule`) and, per route,
which flows leave NVLink for the network (`NETWORK_FLOWS`, keyed by the route's own key,
which names its paths and the fabric's graph) are kept here, read-only, so that their arrays
also hash once (`engine.routing.route_cache.array_digest`). Bounded in bytes.
"""

from __future__ import annotations

import functools

import numpy as np

from engine.collectives.stages import Stage
from engine.routing.router import RoutedFlows
from engine.runtime.lru import ByteLRU
from engine.topology.expand import NVLINK_BUNDLE, Fabric

SCHEDULES: ByteLRU[list[Stage]] = ByteLRU(256 * 2**20)
NETWORK_FLOWS: ByteLRU[np.ndarray] = ByteLRU(64 * 2**20)


@functools.lru_cache(maxsize=64)
def unit_shares(n: int) -> np.ndarray:
    """A read-only array of `n` ones (a stage at share 1), the same object for every caller,
    so its digest is taken once."""
    ones = np.ones(n)
    ones.flags.writeable = False
    return ones


def network_flows(fabric: Fabric, routed: RoutedFlows) -> np.ndarray:
    """Which of `routed`'s flows cross at least one network (non-NVLink) link; kept per route."""
    known = NETWORK_FLOWS.get(routed.key) if routed.key else None
    if known is not None:
        return known
    # Per link first, then one byte per entry: at four million flows (eight million
    # entries) the bundle ids gathered per entry and summed as int64 took 150 MB.
    network_link = fabric.link_bundle != NVLINK_BUNDLE
    flows = np.logical_or.reduceat(network_link[routed.entry_link], routed.flow_ptr[:-1])
    flows.flags.writeable = False
    if routed.key:
        NETWORK_FLOWS.put(routed.key, flows)
    return flows
