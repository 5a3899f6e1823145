"""Routing: which links each flow crosses, under ECMP, adaptive routing or packet spraying.

Given GPU-to-GPU connections, the router picks where each one enters and leaves the network
(its own NIC, or with PXN / where its NIC cannot reach, the NIC of a server-local GPU over
NVLink), splits ECMP connections into independently hashed sub-flows (NCCL's queue pairs per
connection), and places every flow on shortest paths through the switches, each switch
hashing with the salt its policy's hash scope gives it (shared salts polarize). Distances are
computed per destination switch set and cached, never per GPU pair, so routing scales with
the number of switches. Failed cables and switches are absent from the fabric arrays, so
flows route around them; a destination that became unreachable is reported.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

import numpy as np

from engine.model.scenario import RoutingPolicy
from engine.routing.adaptive import refine_adaptive
from engine.routing.endpoints import endpoints
from engine.routing.hashing import flow_hashes, node_salts
from engine.routing.kernels import (
    MODE_ADAPTIVE,
    MODE_ADAPTIVE_LOCAL,
    MODE_ECMP,
    MODE_SPRAY,
    UNREACHABLE,
    route_flows,
)
from engine.routing.path_latency import (
    SIGNATURES,
    SUMMED_ONCE,
    path_latencies_reference,
    path_signatures,
    signature_latencies,
)
from engine.routing.route_cache import (
    FLOW_BYTES,
    LATENCIES,
    ROUTES,
    TABLES,
    array_digest,
    routing_digest,
)
from engine.routing.structures import Flows, Graph, Links, Paths
from engine.topology.expand import NODE_SWITCH, Fabric
from engine.topology.graph_kernels import component_labels, distances_to_targets

MODES = {"ecmp": MODE_ECMP, "adaptive": MODE_ADAPTIVE, "spray": MODE_SPRAY}
# Re-placement rounds of adaptive routing after the greedy first placement.
ADAPTIVE_PASSES = 2
# Above this many flows adaptive routing decides hop by hop (least-loaded next link), as a
# switch does, instead of searching whole paths: the search costs ~40 us a flow.
ADAPTIVE_PATH_SEARCH_MAX_FLOWS = 200_000
# Spraying writes one entry per (flow, equal-cost link); past this many the arrays would
# outgrow a laptop's memory.
MAX_ENTRIES = 400_000_000


@dataclass
class RoutedFlows:
    """Routed flows as CSR arrays: flow f uses ``entry_link[flow_ptr[f]:flow_ptr[f+1]]``.

    A flow uses ``entry_weight`` of its rate on each entry's link (1 on a single path, a
    fraction when sprayed). `connection` maps each flow (sub-flow) to the connection it
    belongs to; `unreachable` lists connections that could not be routed. `key` names the
    paths (the routing cache's key: graph, policy and demand), so work that depends only on
    them can be kept by it without hashing the arrays again ("" when not known).
    """

    n_connections: int
    connection: np.ndarray
    src_gpu: np.ndarray
    dst_gpu: np.ndarray
    flow_bytes: np.ndarray
    flow_ptr: np.ndarray
    entry_link: np.ndarray
    entry_weight: np.ndarray
    latency: np.ndarray
    unreachable: np.ndarray
    key: str = ""

    @property
    def n_flows(self) -> int:
        """Number of routed (sub-)flows."""
        return int(self.connection.shape[0])


def _csr(index: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(index, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(index, minlength=n), out=ptr[1:])
    return ptr, order.astype(np.int64)


def _run_ends(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """For each position of links sorted by (src, dst): where its run of equal pairs ends."""
    n = src.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    new_run = np.ones(n, dtype=bool)
    new_run[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
    starts = np.flatnonzero(new_run)
    ends = np.append(starts[1:], n)
    return np.repeat(ends, np.diff(np.append(starts, n))).astype(np.int64)


class _Tables:
    """What the router computes from a fabric's graph once and every router of an equal
    graph shares (`engine.routing.route_cache.TABLES`): adjacency in CSR form, switch
    indices, components, attachment keys, ECMP salts, and the distance rows computed so far
    (grown under `lock`)."""

    def __init__(self, fabric: Fabric):
        net = np.flatnonzero(fabric.network_link_mask())
        self.net_links = net
        src, dst = fabric.link_src[net], fabric.link_dst[net]
        n = fabric.n_nodes
        out_ptr, _ = _csr(src, n)
        by_neighbour = np.lexsort((net, dst, src))  # per node, parallel cables side by side
        self.out_ptr, self.out_link = out_ptr, net[by_neighbour]
        self.run_end = _run_ends(src[by_neighbour], dst[by_neighbour])
        # Node ids put GPUs and NVLink switches before fabric switches, so each node's
        # switch neighbours follow its GPU neighbours in the sorted out-links.
        sorted_dst_switch = fabric.node_kind[dst[by_neighbour]] == NODE_SWITCH
        not_switch = np.concatenate([[0], np.cumsum(~sorted_dst_switch)])
        self.first_sw = out_ptr[:-1] + (not_switch[out_ptr[1:]] - not_switch[out_ptr[:-1]])
        in_ptr, in_order = _csr(dst, n)
        self.in_ptr, self.in_src = in_ptr, src[in_order]
        self.max_degree = int(np.max(np.diff(out_ptr))) if n else 0
        self.is_switch = fabric.node_kind == NODE_SWITCH
        self.local_index = np.full(n, -1, dtype=np.int64)
        switch_nodes = np.flatnonzero(self.is_switch)
        self.local_index[switch_nodes] = np.arange(switch_nodes.shape[0])
        self.n_switches = switch_nodes.shape[0]
        if self.n_switches >= np.iinfo(np.int16).max:
            raise ValueError(f"{self.n_switches} switches: routing tables hold at most 32,766")
        self.net_label = component_labels(n, src, dst).astype(np.int64)
        self.has_net = fabric.gpu_line_rate > 0
        self.attach_key, self.key_sets = _attachment_keys(fabric, out_ptr, self.out_link)
        self.dist = np.empty((0, self.n_switches + 1), dtype=np.int16)
        self.dist_row: dict[int, int] = {}
        self.lock = threading.Lock()
        # What the kernels read of the fabric, grouped once for every call.
        self.graph = Graph(
            self.out_ptr,
            self.out_link,
            self.run_end,
            self.first_sw,
            fabric.link_dst,
            self.is_switch,
            self.local_index,
            self.max_degree,
        )
        self.links = Links(fabric.link_capacity, fabric.gpu_nvlink_up, fabric.gpu_nvlink_down)
        self.salts: dict[str, np.ndarray] = {}


def _attachment_keys(
    f: Fabric, net_out: np.ndarray, out_link: np.ndarray
) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """Per GPU: the id of the set of switches it is cabled to (-1 when none), and the sets."""
    keys = np.full(f.n_gpus, -1, dtype=np.int64)
    key_sets: list[tuple[int, ...]] = []
    index: dict[tuple[int, ...], int] = {}
    starts, ends = net_out[: f.n_gpus], net_out[1 : f.n_gpus + 1]
    degree = ends - starts
    cabled = degree > 0
    first = np.full(f.n_gpus, -1, dtype=np.int64)
    last = np.full(f.n_gpus, -1, dtype=np.int64)
    first[cabled] = f.link_dst[out_link[starts[cabled]]]
    last[cabled] = f.link_dst[out_link[ends[cabled] - 1]]
    # Out-links are sorted by neighbour: all cables go to one switch when first == last.
    simple = cabled & (first == last)
    uniq, inverse = np.unique(first[simple], return_inverse=True)
    for sw in uniq:
        index[(int(sw),)] = len(key_sets)
        key_sets.append((int(sw),))
    keys[simple] = inverse
    for g in np.flatnonzero((degree > 0) & ~simple):
        dsts = tuple(sorted(set(int(x) for x in f.link_dst[out_link[starts[g] : ends[g]]])))
        if dsts not in index:
            index[dsts] = len(key_sets)
            key_sets.append(dsts)
        keys[g] = index[dsts]
    return keys, key_sets


class Router:
    """Routes connections on one expanded fabric.

    Its tables (and the distance rows computed so far) are shared with every router of a
    fabric with the same graph, and each routed traffic pattern is kept: routing the same
    demand with the same policy on an equal graph again costs a lookup, the path latencies
    summed afresh from this fabric's link latencies (`engine.routing.route_cache`).
    """

    def __init__(self, fabric: Fabric):
        self.fabric = fabric
        self.digest = routing_digest(fabric)
        tables = TABLES.get(self.digest)
        if tables is None:
            tables = _Tables(fabric)
            TABLES.put(self.digest, tables)
        self._t = tables

    def node_salt(self, hash_scope: str) -> np.ndarray:
        """Per node: the salt of its ECMP hash function under `hash_scope` (cached).

        Nodes of one group share their group's tier and catalog model, which is what the
        ``tier`` and ``model`` scopes key on; ``switch`` salts each node by its id and
        ``fabric`` gives every node one salt.
        """
        salts = self._t.salts
        if hash_scope not in salts:
            groups = self.fabric.scenario.groups
            salts[hash_scope] = node_salts(
                hash_scope,
                self.fabric.node_group,
                [g.tier for g in groups],
                [g.model for g in groups],
            )
        return salts[hash_scope]

    def _distance_rows(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Row in the distance table of each attachment key, computing missing ones; with
        the table they index (rows are only ever added, so the table stays valid)."""
        t = self._t
        with t.lock:
            missing = [int(k) for k in np.unique(keys) if int(k) not in t.dist_row]
            if missing:
                sets = [t.key_sets[k] for k in missing]
                ptr = np.zeros(len(sets) + 1, dtype=np.int64)
                np.cumsum([len(s) for s in sets], out=ptr[1:])
                targets = np.array([x for s in sets for x in s], dtype=np.int64)
                rows = np.empty((len(sets), t.n_switches + 1), dtype=np.int16)
                distances_to_targets(
                    t.in_ptr, t.in_src, t.is_switch, ptr, targets, t.local_index, rows
                )
                # Last column: the local index of a single-switch target set (-1 otherwise).
                rows[:, -1] = [t.local_index[s[0]] if len(s) == 1 else -1 for s in sets]
                start = t.dist.shape[0]
                t.dist = np.concatenate([t.dist, rows])
                for i, k in enumerate(missing):
                    t.dist_row[k] = start + i
                TABLES.resize(self.digest)
            lookup = np.zeros(len(t.key_sets), dtype=np.int64)
            for k, row in t.dist_row.items():
                lookup[k] = row
            return lookup[keys], t.dist

    def _endpoints(
        self, src: np.ndarray, dst: np.ndarray, pxn: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        """Where each connection enters and leaves the network (-1: inside one server; -2: none)."""
        f, t = self.fabric, self._t
        return endpoints(
            src,
            dst,
            bool(pxn),
            f.gpu_server,
            f.gpu_local,
            f.server_first_gpu,
            t.has_net,
            t.net_label,
        )

    def route(
        self,
        src_gpu: np.ndarray,
        dst_gpu: np.ndarray,
        policy: RoutingPolicy,
        connection_bytes: np.ndarray | float = 1.0,
    ) -> RoutedFlows:
        """Route one flow per (src, dst) connection (several sub-flows under ECMP/adaptive).

        The same demand under the same policy on an equal graph is routed once per process:
        the paths come from the cache and only the bytes and path latencies are this call's.
        (Adaptive routing places flows by their bytes, so there the bytes are part of the key.)
        """
        src = np.asarray(src_gpu, dtype=np.int64)
        dst = np.asarray(dst_gpu, dtype=np.int64)
        n_conn = src.shape[0]
        nbytes = np.asarray(connection_bytes, dtype=np.float64)
        if nbytes.shape != (n_conn,):
            nbytes = np.broadcast_to(nbytes, (n_conn,))
        mode = MODES[policy.mode]
        q = 1 if mode == MODE_SPRAY else max(1, int(policy.flows_per_connection))
        demand = (src, dst, nbytes) if mode == MODE_ADAPTIVE else (src, dst)
        key = f"{self.digest}|{policy!r}|{array_digest(*demand)}"
        paths = ROUTES.get(key)
        if paths is None:
            paths = self._route(src, dst, nbytes, policy)
            for array in vars(paths).values():
                if isinstance(array, np.ndarray):
                    array.flags.writeable = False  # shared by every later caller
            ROUTES.put(key, paths)
        return replace(self._with_bytes_and_latency(paths, nbytes, q, key), key=key)

    def _with_bytes_and_latency(
        self, paths: RoutedFlows, nbytes: np.ndarray, q: int, key: str
    ) -> RoutedFlows:
        """`paths` (kept under `key`) with this call's bytes per flow and this fabric's path
        latencies (kept per paths and link latencies: a sweep of anything else reuses them)."""
        fab = self.fabric
        signatures_key = f"{key}|{array_digest(fab.link_latency_class)}"
        latency_key = f"{signatures_key}|{array_digest(fab.class_latency)}"
        latency = LATENCIES.get(latency_key)
        if latency is None:
            latency = self._path_latencies(paths, signatures_key)
            latency.flags.writeable = False
            LATENCIES.put(latency_key, latency)
        bytes_key = f"{key}|{array_digest(nbytes)}|{q}"
        flow_bytes = FLOW_BYTES.get(bytes_key)
        if flow_bytes is None:
            flow_bytes = _per_flow(nbytes, paths.connection, q)
            if not (q == 1 and _frozen_float_array(flow_bytes)):
                flow_bytes = flow_bytes / q  # else x / 1 == x: the caller's array, shared
            flow_bytes.flags.writeable = False
            FLOW_BYTES.put(bytes_key, flow_bytes)
        return replace(paths, flow_bytes=flow_bytes, latency=latency)

    def _path_latencies(self, paths: RoutedFlows, signatures_key: str) -> np.ndarray:
        """Each flow's path latency: summed entry by entry the first time a route's latencies
        are asked for, through its path shapes (`path_latency`) from the second time on (a
        sweep of a latency), so that a single evaluation never pays for the shapes."""
        fab = self.fabric
        signatures = SIGNATURES.get(signatures_key)
        if signatures is None and signatures_key not in SUMMED_ONCE:
            SUMMED_ONCE[signatures_key] = None
            while len(SUMMED_ONCE) > 4096:
                SUMMED_ONCE.pop(next(iter(SUMMED_ONCE)))
            return path_latencies_reference(
                paths.flow_ptr, paths.entry_link, paths.entry_weight, fab.link_latency
            )
        if signatures is None:
            signatures = path_signatures(
                paths.flow_ptr,
                paths.entry_link,
                paths.entry_weight,
                fab.link_latency_class,
                fab.class_latency.shape[0],
            )
            SIGNATURES.put(signatures_key, signatures)
        return signature_latencies(signatures, fab.class_latency)

    def _route(
        self, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray, policy: RoutingPolicy
    ) -> RoutedFlows:
        """Route the demand (see `route`); the result's bytes and latencies are filled by the
        caller. Kept indices (connection, GPUs, links) are int32, which holds them exactly,
        and temporaries are dropped as soon as they are used: at 131,072 GPUs an all-to-all
        has four million connections, and its arrays are what the evaluation's peak is."""
        n_conn = src.shape[0]
        mode = MODES[policy.mode]
        salt = self.node_salt(policy.hash_scope)
        q = 1 if mode == MODE_SPRAY else max(1, int(policy.flows_per_connection))
        index = _index_dtype(max(n_conn * q, self.fabric.n_links, self.fabric.n_gpus))
        entry, exit_ = self._endpoints(src, dst, policy.pxn)
        conn = np.arange(n_conn, dtype=index)
        sub = np.zeros(n_conn, dtype=index)
        if q > 1:
            conn = np.repeat(conn, q)
            sub = np.tile(np.arange(q, dtype=index), n_conn)
        keep = (entry if q == 1 else entry[conn]) != -2  # with q 1, conn is 0, 1, 2, ...
        if not keep.all():
            conn, sub = conn[keep], sub[keep]
        del keep
        if q == 1 and conn.shape[0] == n_conn:
            # One flow per connection, every one routed: the flows are the connections.
            # GPU ids are kept in the index type (they are the result's too).
            f_src, f_dst, f_entry, f_exit = src.astype(index), dst.astype(index), entry, exit_
        else:
            f_src, f_dst = src[conn].astype(index), dst[conn].astype(index)
            f_entry, f_exit = entry[conn], exit_[conn]
        del entry, exit_
        hashes = flow_hashes(f_src, f_dst, sub, int(policy.seed))
        del sub
        if mode == MODE_ADAPTIVE:
            f_bytes = _per_flow(nbytes, conn, q) / q
        else:
            # Only adaptive routing places flows by their bytes; zeros cost no memory
            # until written, and these never are.
            f_bytes = np.zeros(conn.shape[0])
        f_key = np.zeros(conn.shape[0], dtype=np.int32)  # rows of the distance table
        routed_entry = f_entry >= 0
        rows, dist = self._distance_rows(self._t.attach_key[np.maximum(f_exit[routed_entry], 0)])
        f_key[routed_entry] = rows
        del rows, routed_entry
        fab = self.fabric
        load = np.zeros(fab.n_links)
        counts = np.zeros(conn.shape[0], dtype=np.int32)  # entries per flow (or UNREACHABLE)
        flows = Flows(f_key, f_src, f_entry, f_exit, f_dst, hashes, f_bytes)
        del f_key, f_src, f_entry, f_exit, f_dst, hashes, f_bytes
        counting = Paths(np.zeros(1, dtype=np.int64), np.empty(0, index), np.empty(0), counts)
        graph, links = self._t.graph, self._t.links
        route_flows(mode, False, graph, links, dist, salt, flows, load, counting)
        reachable = counts != UNREACHABLE
        if not np.all(reachable):
            conn, counts = conn[reachable], counts[reachable]
            flows = Flows(*(a[reachable] for a in flows))
        del reachable
        total = int(counts.sum(dtype=np.int64))
        if total > MAX_ENTRIES:
            what = "spraying" if mode == MODE_SPRAY else "routing"
            fix = "use routing.mode=adaptive" if mode == MODE_SPRAY else "route fewer flows"
            raise MemoryError(
                f"{what} {conn.shape[0]:,} flows needs {total:,} path entries "
                f"(over {MAX_ENTRIES:,}); {fix} for a fabric this large"
            )
        if mode == MODE_ADAPTIVE and conn.shape[0] > ADAPTIVE_PATH_SEARCH_MAX_FLOWS:
            mode = MODE_ADAPTIVE_LOCAL
        flow_ptr = np.zeros(conn.shape[0] + 1, dtype=np.int64)
        np.cumsum(counts, out=flow_ptr[1:], dtype=np.int64)
        entry_link = np.empty(total, dtype=index)
        entry_weight = np.empty(total)
        paths = Paths(flow_ptr, entry_link, entry_weight, counts)
        route_flows(mode, True, graph, links, dist, salt, flows, load, paths)
        if mode == MODE_ADAPTIVE and ADAPTIVE_PASSES:
            refine_adaptive(ADAPTIVE_PASSES, graph, links, dist, flows, load, paths)
        del paths, counts, load
        routed_mask = np.zeros(n_conn, dtype=bool)
        routed_mask[conn] = True
        unreachable = np.flatnonzero(~routed_mask)
        return RoutedFlows(
            n_connections=n_conn,
            connection=conn,
            src_gpu=flows.src,
            dst_gpu=flows.dst,
            flow_bytes=np.zeros(0),  # this call's bytes are set by `route`
            flow_ptr=flow_ptr,
            entry_link=entry_link,
            entry_weight=entry_weight,
            latency=np.zeros(0),
            unreachable=unreachable.astype(np.int64),
        )


def _per_flow(per_connection: np.ndarray, connection: np.ndarray, q: int) -> np.ndarray:
    """`per_connection[connection]`, without the gather when the flows are the connections:
    with one flow per connection (`q` 1) `connection` rises strictly, so as many flows as
    connections means it is 0, 1, 2, ..."""
    if q == 1 and connection.shape[0] == per_connection.shape[0]:
        return per_connection
    return per_connection[connection]


def _frozen_float_array(a: np.ndarray) -> bool:
    """Whether `a` is a read-only, contiguous float64 array owning its data (a schedule's
    shares): safe to keep as it is, nobody can change it."""
    return (
        a.dtype == np.float64 and a.flags.c_contiguous and not a.flags.writeable and a.base is None
    )


def _index_dtype(largest: int) -> type:
    """int32 when it holds every index up to `largest` exactly, else int64."""
    return np.int32 if largest < np.iinfo(np.int32).max else np.int64
