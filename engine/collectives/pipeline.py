"""Which flows of a ring or tree stage pass on which flows' data, and the transport's gates.

NCCL runs a ring or a tree as a pipeline: a rank forwards what reaches it, and a sender
can run ahead of its receiver only by the receiver's buffer (`engine.transport.gates`).
`forwarding_edges` reads the pairs (i, j), "flow j passes on flow i's data", off a stage's
`Pipeline` labels. `network_gates` turns them into gates between the transport's flow
classes: hops over NVLink are not in the transport, so a chain of them is looked through
(a ring's network flow out of a server passes on the one into it, seven NVLink hops
later), and each class may lead its neighbours by one connection buffer per flow.
"""

from __future__ import annotations

import numpy as np

from engine.collectives.stages import Stage
from engine.routing.route_cache import array_digest
from engine.routing.router import RoutedFlows
from engine.runtime.lru import ByteLRU
from engine.transport.gates import Gates, gates_from_edges
from engine.transport.network import TransportNetwork


def forwarding_edges(stage: Stage) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of stage flows (i, j) where j passes on the data i delivers: j leaves the node
    i enters, in the same pipeline and phase, or i comes up into a tree's root (a node
    no flow of its pipeline leaves upward) and j goes down from it. Empty without a
    pipeline."""
    p = stage.pipeline
    if p is None or stage.src.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    width = int(max(stage.src.max(), stage.dst.max())) + 1
    pipe = p.pipe.astype(np.int64)
    key_out = pipe * width + stage.src
    key_in = pipe * width + stage.dst
    order = np.argsort(key_out, kind="stable")
    sorted_out = key_out[order]
    lo = np.searchsorted(sorted_out, key_in, side="left")
    hi = np.searchsorted(sorted_out, key_in, side="right")
    counts = hi - lo
    i = np.repeat(np.arange(stage.src.size), counts)
    j = order[
        np.repeat(lo, counts) + np.arange(i.size) - np.repeat(np.cumsum(counts) - counts, counts)
    ]
    up_out = np.sort(key_out[p.phase == 0])
    goes_on_up = np.zeros(i.size, dtype=bool)
    if up_out.size:
        k = np.searchsorted(up_out, key_in[i])
        goes_on_up = (k < up_out.size) & (up_out[np.minimum(k, up_out.size - 1)] == key_in[i])
    same = p.phase[i] == p.phase[j]
    turn = (p.phase[i] == 0) & (p.phase[j] == 1) & ~goes_on_up
    keep = (same | turn) & (i != j)
    return i[keep], j[keep]


def _through(i: np.ndarray, j: np.ndarray, on_network: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The edges between network flows, looking through flows that are not on the
    network: (a, b) whenever b is reached from a over flows off the network only."""
    n = on_network.shape[0]
    order = np.argsort(i, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(i, minlength=n), out=ptr[1:])
    nxt = j[order]
    start = on_network[i]
    a, b = i[start], j[start]
    found_a, found_b = [a[on_network[b]]], [b[on_network[b]]]
    a, b = a[~on_network[b]], b[~on_network[b]]
    for _ in range(n):  # each pass looks one hop further; no path is longer than n
        if a.size == 0:
            break
        counts = ptr[b + 1] - ptr[b]
        a = np.repeat(a, counts)
        b = nxt[
            np.repeat(ptr[b], counts)
            + np.arange(a.size)
            - np.repeat(np.cumsum(counts) - counts, counts)
        ]
        pairs = np.unique(np.stack([a, b], axis=1), axis=0)
        a, b = pairs[:, 0], pairs[:, 1]
        found_a.append(a[on_network[b]])
        found_b.append(b[on_network[b]])
        a, b = a[~on_network[b]], b[~on_network[b]]
    return np.concatenate(found_a), np.concatenate(found_b)


def network_gates(
    stage: Stage, routed: RoutedFlows, network: TransportNetwork, buffer_bytes: float
) -> Gates | None:
    """The gates between `network`'s classes (built from `routed`, the stage's flows as
    connections, with classes kept apart by connection) that the stage's pipeline
    implies; each class may lead by `buffer_bytes` per connection, shared by the
    connection's sub-flows (queue pairs). None when the stage has no pipeline."""
    if stage.pipeline is None:
        return None
    # Kept by what they read: the paths (the routing key), how flows fell into classes,
    # the pipeline and the buffer; a sweep of a latency builds them once.
    key = ""
    if routed.key:
        digest = array_digest(stage.pipeline.pipe, stage.pipeline.phase, network.flow_class)
        key = f"{routed.key}|{digest}|{buffer_bytes!r}"
        known = GATES.get(key)
        if known is not None:
            return known
    gates = _gates(stage, routed, network, buffer_bytes)
    if key and gates is not None:
        GATES.put(key, gates)
    return gates


# Gates kept per process (least recently used out first).
GATES: ByteLRU[Gates] = ByteLRU(32 * 2**20)


def _gates(
    stage: Stage, routed: RoutedFlows, network: TransportNetwork, buffer_bytes: float
) -> Gates | None:
    """`network_gates` without the cache."""
    i, j = forwarding_edges(stage)
    if i.size == 0:
        return None
    n_conn = routed.n_connections
    of_flow = network.flow_class
    carried = of_flow >= 0
    conn_of_class = np.full(network.classes.n_classes, -1, dtype=np.int64)
    conn_of_class[of_flow[carried]] = routed.connection[carried]
    on_network = np.zeros(n_conn, dtype=bool)
    on_network[conn_of_class] = True
    a, b = _through(i, j, on_network)
    # Every class of connection a against every class of connection b.
    by_conn = np.argsort(conn_of_class, kind="stable")
    ptr = np.zeros(n_conn + 1, dtype=np.int64)
    np.cumsum(np.bincount(conn_of_class, minlength=n_conn), out=ptr[1:])
    na, nb = ptr[a + 1] - ptr[a], ptr[b + 1] - ptr[b]
    pair_a = np.repeat(a, na * nb)
    pair_b = np.repeat(b, na * nb)
    within = np.arange(pair_a.size) - np.repeat(np.cumsum(na * nb) - na * nb, na * nb)
    nb_rep = np.repeat(nb, na * nb)
    feeder = by_conn[ptr[pair_a] + within // nb_rep]
    forwarder = by_conn[ptr[pair_b] + within % nb_rep]
    sub_flows = np.bincount(routed.connection, minlength=n_conn).astype(np.float64)
    slack = buffer_bytes * network.classes.multiplicity / sub_flows[conn_of_class]
    return gates_from_edges(network.classes.n_classes, feeder, forwarder, slack)
