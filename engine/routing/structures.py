"""The named groups of arrays the routing kernels take, one per concern.

The kernels work on a dozen arrays of the fabric, seven per flow and four of output; passed
one by one they made parameter lists of twenty and more. Grouped in named tuples (which numba
passes into and between nopython functions as typed structures) each kernel takes a few
arguments and reads its arrays by name. The fabric's groups are built once per `Router`, the
flows' and outputs' per call.

`dist` (the distance table to target switch sets) stays a plain array: it is one array, and it
grows between calls while the fabric's groups do not.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Graph(NamedTuple):
    """The network part of the fabric as a CSR adjacency, sorted for the next-hop search.

    Node `v`'s out-links are ``out_link[out_ptr[v]:out_ptr[v+1]]``, sorted by neighbour with
    GPUs (the lowest node ids) before switches; `first_sw[v]` is where the switch neighbours
    start and `run_end[e]` where the run of parallel cables at position `e` ends.
    `local_index` numbers the fabric switches 0.. (the columns of the distance table).
    """

    out_ptr: np.ndarray
    out_link: np.ndarray
    run_end: np.ndarray
    first_sw: np.ndarray
    link_dst: np.ndarray
    is_switch: np.ndarray
    local_index: np.ndarray
    max_degree: int


class Links(NamedTuple):
    """Per link its capacity; per GPU its NVLink links up to and down from the server."""

    capacity: np.ndarray
    nvlink_up: np.ndarray
    nvlink_down: np.ndarray


class Flows(NamedTuple):
    """The flows to place, one entry each.

    A flow goes from GPU `src` to GPU `dst`, entering the network at GPU `entry` (-1: it
    stays inside its server) and leaving it at GPU `exit`; `key` is the row of the distance
    table toward `exit`, `hash` its ECMP hash and `nbytes` its bytes (read by adaptive
    routing only; zeros under the other policies). `key`, `entry` and `exit` are int32,
    `src` and `dst` of the router's index type (int32 unless a fabric is enormous), as are
    `Paths.counts`: at four million flows each int64 array would cost 16 MB more.
    """

    key: np.ndarray
    src: np.ndarray
    entry: np.ndarray
    exit: np.ndarray
    dst: np.ndarray
    hash: np.ndarray
    nbytes: np.ndarray


class Paths(NamedTuple):
    """The routed flows as CSR arrays: flow f's entries are ``[flow_ptr[f], flow_ptr[f+1])``.

    `counts` receives the number of entries per flow (or UNREACHABLE); in the counting pass
    `flow_ptr`, `entry_link` and `entry_weight` are not used.
    """

    flow_ptr: np.ndarray
    entry_link: np.ndarray
    entry_weight: np.ndarray
    counts: np.ndarray


class Walk(NamedTuple):
    """Scratch of a next-hop walk: the candidate links of one node and per-node BFS state."""

    buf: np.ndarray
    order: np.ndarray
    weight: np.ndarray
    stamp: np.ndarray


class Search(NamedTuple):
    """Scratch of the adaptive path search, a row (or entry) per hop of the path.

    `cand[h, :n_cand[h]]` are the candidates at hop `h`, `pos[h]` the next one to try and
    `rot[h]` the hashed rotation of their order; `part_max`, `part_count` and `part_idle`
    describe the path prefix so far and `trial` holds its links.

    The rest remembers subtrees that held no better path (`adaptive_path`): `node_at[h]` is
    the node at hop `h` and `enter_version[h]` the version when it was entered; per node,
    `memo_version`, `memo_max` and `memo_count` the version and the prefix (busiest
    utilization, links at it) with which its subtree last held nothing better; `version[0]`
    counts searches and improvements so that a memo is valid only under the same best path.
    """

    cand: np.ndarray
    n_cand: np.ndarray
    pos: np.ndarray
    rot: np.ndarray
    part_max: np.ndarray
    part_count: np.ndarray
    part_idle: np.ndarray
    trial: np.ndarray
    node_at: np.ndarray
    enter_version: np.ndarray
    memo_version: np.ndarray
    memo_max: np.ndarray
    memo_count: np.ndarray
    version: np.ndarray
