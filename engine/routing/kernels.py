"""numba kernels that place flows on the equal-cost paths of the expanded fabric.

A flow enters the network at GPU `entry` and leaves it at GPU `exit`; between them it
follows shortest (fewest-hop) paths through switches, using the per-destination hop
distances of `engine.topology.graph_kernels.distances_to_targets`. At each node the equal-cost next
hops are the candidate links. The three policies differ only in what they do with the
candidates: hash one (ECMP), take the one on the least-loaded path (adaptive), or split
evenly over all (spray). NVLink hops before and after the network part are written here too,
so one call yields the whole path of every flow as CSR arrays of (link, weight) entries.

`engine.routing.reference` holds the plain-Python twin used by the tests.
"""

from __future__ import annotations

import numpy as np
from numba import njit

MODE_ECMP, MODE_ADAPTIVE, MODE_SPRAY, MODE_ADAPTIVE_LOCAL = 0, 1, 2, 3
UNREACHABLE = -1


@njit(cache=True, nogil=True)
def mix64(x: np.uint64) -> np.uint64:
    """splitmix64 finaliser: a well-spread 64-bit hash of `x`."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True)
def n_nodes_of(out_ptr):
    """Number of nodes of a CSR adjacency."""
    return out_ptr.shape[0] - 1


@njit(cache=True, nogil=True, inline="always")
def _candidates(
    node,
    target,
    key,
    out_ptr,
    out_link,
    run_end,
    first_sw,
    link_dst,
    is_switch,
    local_index,
    dist,
    buf,
):
    """Fill `buf` with the equal-cost next-hop links from `node` toward GPU `target`.

    `dist` rows end with one extra column: the local index of the target set's switch when
    the set has exactly one, else -1 (fabric switches are the highest, consecutive node ids).
    Out-links are sorted by neighbour, GPUs (the lowest node ids) before switches;
    `first_sw[node]` is where the switch neighbours start and `run_end[e]` skips the
    parallel cables to one neighbour, so each neighbour's distance is looked up once.
    """
    n = 0
    stop = out_ptr[node + 1]
    if is_switch[node]:
        d = dist[key, local_index[node]]
        if d == 0:
            # Binary search for the cables to `target` among the GPU neighbours.
            lo, hi = out_ptr[node], first_sw[node]
            while lo < hi:
                mid = (lo + hi) // 2
                if link_dst[out_link[mid]] < target:
                    lo = mid + 1
                else:
                    hi = mid
            e = lo
            while e < first_sw[node] and link_dst[out_link[e]] == target:
                buf[n] = out_link[e]
                n += 1
                e += 1
            return n
        single = dist[key, dist.shape[1] - 1]
        if d == 1 and single >= 0:
            # One target switch: binary search for it among the switch neighbours.
            wanted = n_nodes_of(out_ptr) - (dist.shape[1] - 1) + single
            lo, hi = first_sw[node], stop
            while lo < hi:
                mid = (lo + hi) // 2
                if link_dst[out_link[mid]] < wanted:
                    lo = mid + 1
                else:
                    hi = mid
            e = lo
            while e < stop and link_dst[out_link[e]] == wanted:
                buf[n] = out_link[e]
                n += 1
                e += 1
            return n
        e = first_sw[node]
        while e < stop:
            w = link_dst[out_link[e]]
            r = run_end[e]
            if dist[key, local_index[w]] == d - 1:
                for k in range(e, r):
                    buf[n] = out_link[k]
                    n += 1
            e = r
        return n
    best = _first_distance(
        node, key, out_ptr, out_link, run_end, first_sw, link_dst, is_switch, local_index, dist
    )
    if best < 0:
        return 0
    e = first_sw[node]
    while e < stop:
        w = link_dst[out_link[e]]
        r = run_end[e]
        if dist[key, local_index[w]] == best:
            for k in range(e, r):
                buf[n] = out_link[k]
                n += 1
        e = r
    return n


@njit(cache=True, nogil=True, inline="always")
def _first_distance(
    entry, key, out_ptr, out_link, run_end, first_sw, link_dst, is_switch, local_index, dist
):
    """Fewest hops from a neighbour switch of `entry` to the target set (-1: none)."""
    best = -1
    e = first_sw[entry]
    while e < out_ptr[entry + 1]:
        dw = dist[key, local_index[link_dst[out_link[e]]]]
        if dw >= 0 and (best < 0 or dw < best):
            best = dw
        e = run_end[e]
    return best


@njit(cache=True, nogil=True)
def _spray_dag(
    entry,
    target,
    key,
    out_ptr,
    out_link,
    run_end,
    first_sw,
    link_dst,
    is_switch,
    local_index,
    dist,
    buf,
    order,
    weight,
    stamp,
    tag,
    links_out,
    weights_out,
    write,
):
    """Walk the equal-cost DAG from `entry`, splitting weight evenly; return entry count."""
    count = 0
    head = 0
    tail = 1
    order[0] = entry
    stamp[entry] = tag
    weight[entry] = 1.0
    while head < tail:
        node = order[head]
        head += 1
        if node == target:
            continue
        nc = _candidates(
            node,
            target,
            key,
            out_ptr,
            out_link,
            run_end,
            first_sw,
            link_dst,
            is_switch,
            local_index,
            dist,
            buf,
        )
        share = weight[node] / nc
        for c in range(nc):
            link = buf[c]
            w = link_dst[link]
            if write:
                links_out[count] = link
                weights_out[count] = share
            count += 1
            if stamp[w] != tag:
                stamp[w] = tag
                weight[w] = 0.0
                order[tail] = w
                tail += 1
            weight[w] += share
    return count


TIE = 1e-12


@njit(cache=True, nogil=True)
def _least_loaded(buf, nc, load, inv_capacity, nbytes):
    """Keep in `buf` the candidates least loaded after adding `nbytes`; return how many."""
    lowest = np.inf
    ties = 0
    for c in range(nc):
        v = (load[buf[c]] + nbytes) * inv_capacity[buf[c]]
        if v < lowest * (1.0 - TIE):
            lowest = v
            buf[0] = buf[c]
            ties = 1
        elif v <= lowest * (1.0 + TIE):
            buf[ties] = buf[c]
            ties += 1
    return ties


@njit(cache=True, nogil=True)
def _extend(after, path_max, path_count):
    """(busiest utilization, links at it) of a path prefix extended by a link at `after`."""
    if after > path_max * (1.0 + TIE):
        return after, 1
    if after >= path_max * (1.0 - TIE):
        return path_max, path_count + 1
    return path_max, path_count


@njit(cache=True, nogil=True)
def _better(m1, c1, m2, c2):
    """Whether (busiest, count) m1, c1 is strictly better than m2, c2."""
    if m1 < m2 * (1.0 - TIE):
        return True
    return m1 <= m2 * (1.0 + TIE) and c1 < c2


@njit(cache=True, nogil=True)
def _adaptive_path(
    entry,
    target,
    key,
    out_ptr,
    out_link,
    run_end,
    first_sw,
    link_dst,
    is_switch,
    local_index,
    dist,
    cand,
    n_cand,
    pos,
    rot,
    part_max,
    part_count,
    part_idle,
    trial,
    load,
    capacity,
    nbytes,
    seed_hash,
    path_out,
):
    """The least-loaded equal-cost path for a flow of `nbytes`; adds the flow to `load`.

    Paths compare by their busiest link after adding the flow, then by how many links are at
    that load (so a flow does not pick a path crossing two busy links over one crossing one).
    An idle path is taken as soon as one is found, as adaptive routing sends to free ports.
    Depth-first search with the candidates visited in a hashed order (ties go to a spread of
    paths) and prefixes already no better than the best path pruned. `cand` etc. are scratch
    arrays with a row per hop. Returns the number of hops written to `path_out`.
    """
    best_max, best_count, best_hops = np.inf, 1 << 30, 0
    depth = 0
    n_cand[0] = _candidates(
        entry,
        target,
        key,
        out_ptr,
        out_link,
        run_end,
        first_sw,
        link_dst,
        is_switch,
        local_index,
        dist,
        cand[0],
    )
    pos[0] = 0
    rot[0] = mix64(seed_hash ^ np.uint64(entry))
    part_max[0] = 0.0
    part_count[0] = 0
    part_idle[0] = True
    while depth >= 0:
        if pos[depth] >= n_cand[depth]:
            depth -= 1
            continue
        link = cand[depth, int((rot[depth] + np.uint64(pos[depth])) % np.uint64(n_cand[depth]))]
        pos[depth] += 1
        m, k = _extend((load[link] + nbytes) / capacity[link], part_max[depth], part_count[depth])
        if best_hops > 0 and not _better(m, k, best_max, best_count):
            continue
        trial[depth] = link
        idle = part_idle[depth] and load[link] == 0.0
        node = link_dst[link]
        if node == target:
            best_max, best_count, best_hops = m, k, depth + 1
            for h in range(depth + 1):
                path_out[h] = trial[h]
            if idle:
                break
            continue
        depth += 1
        n_cand[depth] = _candidates(
            node,
            target,
            key,
            out_ptr,
            out_link,
            run_end,
            first_sw,
            link_dst,
            is_switch,
            local_index,
            dist,
            cand[depth],
        )
        pos[depth] = 0
        rot[depth] = mix64(seed_hash ^ np.uint64(node))
        part_max[depth] = m
        part_count[depth] = k
        part_idle[depth] = idle
    for h in range(best_hops):
        load[path_out[h]] += nbytes
    return best_hops


@njit(cache=True, nogil=True)
def _max_hops(dist):
    """An upper bound on network hops of a shortest path (entry and exit links included)."""
    longest = 0
    for v in dist.ravel():
        if v > longest:
            longest = v
    return int(longest) + 3


@njit(cache=True, nogil=True)
def _dfs_scratch(max_hops, max_degree):
    """Scratch arrays of `_adaptive_path` for paths up to `max_hops` network hops."""
    return (
        np.empty((max_hops, max(max_degree, 1)), dtype=np.int64),
        np.zeros(max_hops, dtype=np.int64),
        np.zeros(max_hops, dtype=np.int64),
        np.zeros(max_hops, dtype=np.uint64),
        np.zeros(max_hops),
        np.zeros(max_hops, dtype=np.int64),
        np.zeros(max_hops, dtype=np.bool_),
        np.zeros(max_hops, dtype=np.int64),
    )


@njit(cache=True, nogil=True)
def route_flows(
    mode,
    write,
    out_ptr,
    out_link,
    run_end,
    first_sw,
    link_dst,
    is_switch,
    local_index,
    dist,
    max_degree,
    flow_key,
    flow_src,
    flow_entry,
    flow_exit,
    flow_dst,
    flow_hash,
    flow_bytes,
    nv_up,
    nv_down,
    load,
    capacity,
    flow_ptr,
    entry_link,
    entry_weight,
    counts,
):
    """Count (write=False) or write (write=True) every flow's (link, weight) entries.

    A flow whose `flow_entry` is -1 stays inside its server (NVLink only). `counts` receives
    the number of entries per flow, or UNREACHABLE. When writing, `flow_ptr` holds the
    offsets computed from the counting pass.
    """
    n_nodes = out_ptr.shape[0] - 1
    buf = np.empty(max(max_degree, 1), dtype=np.int64)
    order = np.empty(n_nodes, dtype=np.int64)
    scratch = np.zeros(n_nodes)
    stamp = np.zeros(n_nodes, dtype=np.int64)
    path = np.empty(n_nodes, dtype=np.int64)
    dfs = _dfs_scratch(_max_hops(dist), max_degree)
    inv_capacity = 1.0 / capacity
    for f in range(flow_src.shape[0]):
        src, dst, entry, exit_ = flow_src[f], flow_dst[f], flow_entry[f], flow_exit[f]
        pos = flow_ptr[f] if write else 0
        n = 0
        if entry < 0:
            if write:
                entry_link[pos] = nv_up[src]
                entry_link[pos + 1] = nv_down[dst]
                entry_weight[pos] = 1.0
                entry_weight[pos + 1] = 1.0
            counts[f] = 2
            continue
        key = flow_key[f]
        if (
            _first_distance(
                entry,
                key,
                out_ptr,
                out_link,
                run_end,
                first_sw,
                link_dst,
                is_switch,
                local_index,
                dist,
            )
            < 0
        ):
            counts[f] = UNREACHABLE
            continue
        if entry != src:
            if write:
                entry_link[pos] = nv_up[src]
                entry_link[pos + 1] = nv_down[entry]
                entry_weight[pos] = 1.0
                entry_weight[pos + 1] = 1.0
            n += 2
        if mode == MODE_SPRAY:
            n += _spray_dag(
                entry,
                exit_,
                key,
                out_ptr,
                out_link,
                run_end,
                first_sw,
                link_dst,
                is_switch,
                local_index,
                dist,
                buf,
                order,
                scratch,
                stamp,
                f + 1,
                entry_link[pos + n :],
                entry_weight[pos + n :],
                write,
            )
        elif not write:
            # Every shortest path has the same length: count without walking it.
            n += (
                _first_distance(
                    entry,
                    key,
                    out_ptr,
                    out_link,
                    run_end,
                    first_sw,
                    link_dst,
                    is_switch,
                    local_index,
                    dist,
                )
                + 2
            )
        elif mode == MODE_ADAPTIVE:
            hops = _adaptive_path(
                entry,
                exit_,
                key,
                out_ptr,
                out_link,
                run_end,
                first_sw,
                link_dst,
                is_switch,
                local_index,
                dist,
                *dfs,
                load,
                capacity,
                flow_bytes[f],
                flow_hash[f],
                path,
            )
            for h in range(hops):
                entry_link[pos + n + h] = path[h]
                entry_weight[pos + n + h] = 1.0
            n += hops
        else:
            # Single-path walk: ECMP hashes one candidate; local adaptive hashes among the
            # least-loaded ones and books the flow on its link.
            node = entry
            while node != exit_:
                nc = _candidates(
                    node,
                    exit_,
                    key,
                    out_ptr,
                    out_link,
                    run_end,
                    first_sw,
                    link_dst,
                    is_switch,
                    local_index,
                    dist,
                    buf,
                )
                if mode == MODE_ADAPTIVE_LOCAL:
                    nc = _least_loaded(buf, nc, load, inv_capacity, flow_bytes[f])
                pick = buf[int(mix64(flow_hash[f] ^ mix64(np.uint64(node))) % np.uint64(nc))]
                if mode == MODE_ADAPTIVE_LOCAL:
                    load[pick] += flow_bytes[f]
                if write:
                    entry_link[pos + n] = pick
                    entry_weight[pos + n] = 1.0
                n += 1
                node = link_dst[pick]
        if exit_ != dst:
            if write:
                entry_link[pos + n] = nv_up[exit_]
                entry_link[pos + n + 1] = nv_down[dst]
                entry_weight[pos + n] = 1.0
                entry_weight[pos + n + 1] = 1.0
            n += 2
        counts[f] = n


@njit(cache=True, nogil=True)
def refine_adaptive(
    passes,
    out_ptr,
    out_link,
    run_end,
    first_sw,
    link_dst,
    is_switch,
    local_index,
    dist,
    max_degree,
    flow_key,
    flow_src,
    flow_entry,
    flow_exit,
    flow_hash,
    flow_bytes,
    load,
    capacity,
    flow_ptr,
    entry_link,
):
    """Re-place each adaptive flow on the best path given all others, `passes` times.

    The first placement is greedy in flow order, so early flows cannot see later ones;
    revisiting them converges toward the balance adaptive routing reaches in a real fabric,
    where every packet keeps choosing. Shortest paths all have the same length, so a flow's
    network entries are rewritten in place. `load` must hold the bytes of the current paths.
    """
    path = np.empty(_max_hops(dist), dtype=np.int64)
    dfs = _dfs_scratch(_max_hops(dist), max_degree)
    for _ in range(passes):
        for f in range(flow_src.shape[0]):
            entry = flow_entry[f]
            if entry < 0:
                continue
            start = flow_ptr[f] + (2 if entry != flow_src[f] else 0)
            hops = (
                _first_distance(
                    entry,
                    flow_key[f],
                    out_ptr,
                    out_link,
                    run_end,
                    first_sw,
                    link_dst,
                    is_switch,
                    local_index,
                    dist,
                )
                + 2
            )
            for h in range(hops):
                load[entry_link[start + h]] -= flow_bytes[f]
            n = _adaptive_path(
                entry,
                flow_exit[f],
                flow_key[f],
                out_ptr,
                out_link,
                run_end,
                first_sw,
                link_dst,
                is_switch,
                local_index,
                dist,
                *dfs,
                load,
                capacity,
                flow_bytes[f],
                flow_hash[f],
                path,
            )
            for h in range(n):
                entry_link[start + h] = path[h]
