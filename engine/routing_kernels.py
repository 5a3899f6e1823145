"""numba kernels that place flows on the equal-cost paths of the expanded fabric.

A flow enters the network at GPU `entry` and leaves it at GPU `exit`; between them it
follows shortest (fewest-hop) paths through switches, using the per-destination hop
distances of `engine.graph_kernels.distances_to_targets`. At each node the equal-cost next
hops are the candidate links. The three policies differ only in what they do with the
candidates: hash one (ECMP), take the one on the least-loaded path (adaptive), or split
evenly over all (spray). NVLink hops before and after the network part are written here too,
so one call yields the whole path of every flow as CSR arrays of (link, weight) entries.

`engine.routing_reference` holds the plain-Python twin used by the tests.
"""

from __future__ import annotations

import numpy as np
from numba import njit

MODE_ECMP, MODE_ADAPTIVE, MODE_SPRAY = 0, 1, 2
UNREACHABLE = -1


@njit(cache=True, nogil=True)
def mix64(x: np.uint64) -> np.uint64:
    """splitmix64 finaliser: a well-spread 64-bit hash of `x`."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True)
def _candidates(node, target, key, out_ptr, out_link, link_dst, is_switch, local_index, dist, buf):
    """Fill `buf` with the equal-cost next-hop links from `node` toward GPU `target`."""
    n = 0
    if is_switch[node]:
        d = dist[key, local_index[node]]
        for e in range(out_ptr[node], out_ptr[node + 1]):
            w = link_dst[out_link[e]]
            if d == 0:
                if w == target:
                    buf[n] = out_link[e]
                    n += 1
            elif is_switch[w] and dist[key, local_index[w]] == d - 1:
                buf[n] = out_link[e]
                n += 1
        return n
    best = -1
    for e in range(out_ptr[node], out_ptr[node + 1]):
        w = link_dst[out_link[e]]
        if is_switch[w]:
            dw = dist[key, local_index[w]]
            if dw >= 0 and (best < 0 or dw < best):
                best = dw
    if best < 0:
        return 0
    for e in range(out_ptr[node], out_ptr[node + 1]):
        w = link_dst[out_link[e]]
        if is_switch[w] and dist[key, local_index[w]] == best:
            buf[n] = out_link[e]
            n += 1
    return n


@njit(cache=True, nogil=True)
def _first_distance(entry, key, out_ptr, out_link, link_dst, is_switch, local_index, dist):
    best = -1
    for e in range(out_ptr[entry], out_ptr[entry + 1]):
        w = link_dst[out_link[e]]
        if is_switch[w]:
            dw = dist[key, local_index[w]]
            if dw >= 0 and (best < 0 or dw < best):
                best = dw
    return best


@njit(cache=True, nogil=True)
def _spray_dag(
    entry,
    target,
    key,
    out_ptr,
    out_link,
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
            node, target, key, out_ptr, out_link, link_dst, is_switch, local_index, dist, buf
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


@njit(cache=True, nogil=True)
def _adaptive_path(
    entry,
    target,
    key,
    out_ptr,
    out_link,
    link_dst,
    is_switch,
    local_index,
    dist,
    buf,
    order,
    best,
    stamp,
    tag,
    load,
    capacity,
    nbytes,
    seed_hash,
    path_out,
):
    """The equal-cost path whose busiest link, after adding this flow, is least loaded."""
    head = 0
    tail = 1
    order[0] = entry
    stamp[entry] = tag
    while head < tail:
        node = order[head]
        head += 1
        if node == target:
            continue
        nc = _candidates(
            node, target, key, out_ptr, out_link, link_dst, is_switch, local_index, dist, buf
        )
        for c in range(nc):
            w = link_dst[buf[c]]
            if stamp[w] != tag:
                stamp[w] = tag
                order[tail] = w
                tail += 1
    best[target] = 0.0
    for i in range(tail - 1, -1, -1):
        node = order[i]
        if node == target:
            continue
        nc = _candidates(
            node, target, key, out_ptr, out_link, link_dst, is_switch, local_index, dist, buf
        )
        value = np.inf
        for c in range(nc):
            link = buf[c]
            after = (load[link] + nbytes) / capacity[link]
            v = max(after, best[link_dst[link]])
            if v < value:
                value = v
        best[node] = value
    node = entry
    hops = 0
    while node != target:
        nc = _candidates(
            node, target, key, out_ptr, out_link, link_dst, is_switch, local_index, dist, buf
        )
        lowest = np.inf
        for c in range(nc):
            link = buf[c]
            v = max((load[link] + nbytes) / capacity[link], best[link_dst[link]])
            if v < lowest:
                lowest = v
        ties = 0
        for c in range(nc):
            link = buf[c]
            v = max((load[link] + nbytes) / capacity[link], best[link_dst[link]])
            if v <= lowest * (1.0 + 1e-12):
                buf[ties] = link
                ties += 1
        pick = buf[int(mix64(seed_hash ^ np.uint64(node)) % np.uint64(ties))]
        path_out[hops] = pick
        hops += 1
        node = link_dst[pick]
    for h in range(hops):
        load[path_out[h]] += nbytes
    return hops


@njit(cache=True, nogil=True)
def route_flows(
    mode,
    write,
    out_ptr,
    out_link,
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
            _first_distance(entry, key, out_ptr, out_link, link_dst, is_switch, local_index, dist)
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
        elif mode == MODE_ADAPTIVE:
            if write:
                hops = _adaptive_path(
                    entry,
                    exit_,
                    key,
                    out_ptr,
                    out_link,
                    link_dst,
                    is_switch,
                    local_index,
                    dist,
                    buf,
                    order,
                    scratch,
                    stamp,
                    f + 1,
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
                n += (
                    _first_distance(
                        entry, key, out_ptr, out_link, link_dst, is_switch, local_index, dist
                    )
                    + 2
                )
        else:
            node = entry
            while node != exit_:
                nc = _candidates(
                    node, exit_, key, out_ptr, out_link, link_dst, is_switch, local_index, dist, buf
                )
                pick = buf[int(mix64(flow_hash[f] ^ mix64(np.uint64(node))) % np.uint64(nc))]
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
