"""Per-packet spraying under the transport: the equal-cost links a flow sprays over, as one.

A sprayed flow splits evenly over every equal-cost next hop (`engine.routing.spray`). In a
fat-tree every flow that crosses one of a hop's parallel links crosses all of them, in equal
shares: the uplinks of its leaf, its pod's spine-to-core links, the links down to its
receiver's leaf. Each link of such a set then carries the same share of the same flows, so
its queue, its pauses and its marks are those of every other link of the set. The fluid
model runs the set as one link of k ports: k times one port's capacity, buffer, ECN
thresholds, PFC thresholds and headroom (`LinkSpec.ports`). For even spraying that is the
same model, not an approximation of it; what it leaves out is what a fluid model leaves out
anyway (packet-level imbalance between the links of a set).

It is exact only when every link belongs to one set: `bundle_sprayed` refuses, naming the
reason, when flows spray over sets that overlap without being equal (a failed or uneven
wiring), when a flow's shares at a hop are not even, or when the ports of a set differ
(speed, capacity, the groups at their ends). The caller then runs the flows at the ideal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from engine.routing.router import RoutedFlows
from engine.topology.expand import Fabric

# A hop's shares sum to 1; floating sums of shares such as 1/3 miss it by ~1e-16 per entry.
SHARE_TOLERANCE = 1e-9
# Entries of a flow lie hop by hop; a hop starts where the shares before it sum to a whole.
_HOP_EPSILON = 1e-6


@dataclass(frozen=True)
class Bundled:
    """Sprayed flows as single paths over sets of links.

    `routed` has one entry per hop and flow (weight 1): the set's lowest fabric link id names
    it. `ports` gives, per fabric link, the number of links in the set it names (1 for
    every other link)."""

    routed: RoutedFlows
    ports: np.ndarray


def bundle_sprayed(routed: RoutedFlows, fabric: Fabric, capacity_Bps: np.ndarray) -> Bundled | str:
    """`routed`'s sprayed flows as single paths over sets of equal links (see the module
    docstring), or why they cannot be: a sentence for the caller's note."""
    ptr, link, weight = routed.flow_ptr, routed.entry_link.astype(np.int64), routed.entry_weight
    n_flows = routed.n_flows
    if link.size == 0:
        return Bundled(routed, np.ones(fabric.n_links, dtype=np.int64))
    owner = np.repeat(np.arange(n_flows), np.diff(ptr))
    before = np.cumsum(weight) - weight
    flow_start = before[ptr[:-1][np.diff(ptr) > 0]]
    starts = np.zeros(n_flows)
    starts[np.diff(ptr) > 0] = flow_start
    hop = np.floor(before - starts[owner] + _HOP_EPSILON).astype(np.int64)
    first = np.ones(link.size, dtype=bool)
    first[1:] = (owner[1:] != owner[:-1]) | (hop[1:] != hop[:-1])
    group_start = np.flatnonzero(first)
    group = np.cumsum(first) - 1
    size = np.diff(np.append(group_start, link.size))
    total = np.add.reduceat(weight, group_start)
    if np.any(np.abs(total - 1.0) > _HOP_EPSILON):
        return "a flow's shares do not add up to whole hops"
    if np.any(np.abs(weight - 1.0 / size[group]) > SHARE_TOLERANCE):
        return "a flow splits unevenly over the links of a hop"
    lowest = np.minimum.reduceat(link, group_start)
    signature = _set_signature(link, group_start)
    # Every link in one set: all hops that cross a link cross the same set.
    order = np.argsort(link, kind="stable")
    same_link = link[order][1:] == link[order][:-1]
    g = group[order]
    differs = (lowest[g][1:] != lowest[g][:-1]) | (signature[g][1:] != signature[g][:-1])
    differs |= size[g][1:] != size[g][:-1]
    if np.any(same_link & differs):
        return "flows spray over sets of links that overlap without being equal"
    for name, values in (
        ("cable bundle", fabric.link_bundle[link]),
        ("capacity", np.asarray(capacity_Bps, dtype=np.float64)[link]),
        ("group at the near end", fabric.node_group[fabric.link_src[link]]),
        ("group at the far end", fabric.node_group[fabric.link_dst[link]]),
    ):
        if np.any(
            np.minimum.reduceat(values, group_start) != np.maximum.reduceat(values, group_start)
        ):
            return f"the links a flow sprays over differ in {name}"
    ports = np.ones(fabric.n_links, dtype=np.int64)
    ports[lowest] = size
    hops = np.bincount(owner[group_start], minlength=n_flows)
    flow_ptr = np.zeros(n_flows + 1, dtype=np.int64)
    np.cumsum(hops, out=flow_ptr[1:])
    single = replace(
        routed,
        flow_ptr=flow_ptr,
        entry_link=lowest.astype(routed.entry_link.dtype),
        entry_weight=np.ones(lowest.size),
        key=f"{routed.key}/sets" if routed.key else "",
    )
    return Bundled(single, ports)


def _set_signature(link: np.ndarray, group_start: np.ndarray) -> np.ndarray:
    """Per hop group, a 64-bit sum of its links' mixed ids: equal sets sum alike, and two
    different sets of one size and lowest link collide with odds of about 2^-64."""
    x = link.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    x ^= x >> np.uint64(29)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(32)
    return np.add.reduceat(x, group_start)
