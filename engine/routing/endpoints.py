"""Where each connection enters and leaves the network: the NIC a GPU's traffic uses.

A GPU with a NIC of its own sends through it; with PXN (NCCL's PXN: data crosses NVLink to
the GPU whose NIC sits on the destination's rail) or when its own NIC cannot reach the
destination's, the connection enters through the source server's GPU on the exit's rail, or
else through the first GPU of the server whose NIC is in the exit's network component. A
destination without a NIC is reached through its server's first GPU with one. Connections
inside one server never enter the network. Codes: -1 inside one server, -2 no way in.

The kernel runs once per connection in one pass (the all-to-all of a 131,072-GPU fabric has
four million); `endpoints_reference` is the same rule in numpy, for the tests.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def endpoints(
    src: np.ndarray,
    dst: np.ndarray,
    pxn: bool,
    gpu_server: np.ndarray,
    gpu_local: np.ndarray,
    server_first_gpu: np.ndarray,
    has_net: np.ndarray,
    net_label: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(entry GPU, exit GPU) of each connection (see the module's docstring)."""
    n = src.shape[0]
    # GPU ids as int32 (a fabric has far fewer than 2**31 GPUs): four million connections
    # of an all-to-all at 131,072 GPUs would take twice the memory in int64.
    entry = np.full(n, -2, dtype=np.int32)
    exit_ = np.empty(n, dtype=np.int32)
    for i in range(n):
        s, d = src[i], dst[i]
        server_s, server_d = gpu_server[s], gpu_server[d]
        if server_s == server_d:
            entry[i] = -1
            exit_[i] = d
            continue
        first_s = server_first_gpu[server_s]
        size_s = server_first_gpu[server_s + 1] - first_s
        x = d
        if not has_net[d]:
            x = -2
            first_d = server_first_gpu[server_d]
            for g in range(first_d, server_first_gpu[server_d + 1]):
                if has_net[g]:
                    x = g
                    break
        exit_[i] = x
        if x < 0:
            continue
        label = net_label[x]
        if not pxn and has_net[s] and net_label[s] == label:
            entry[i] = s
            continue
        local = gpu_local[x]
        if local < size_s and net_label[first_s + local] == label:
            entry[i] = first_s + local
            continue
        for g in range(first_s, first_s + size_s):
            if net_label[g] == label:
                entry[i] = g
                break
    return entry, exit_


def endpoints_reference(
    src: np.ndarray,
    dst: np.ndarray,
    pxn: bool,
    gpu_server: np.ndarray,
    gpu_local: np.ndarray,
    server_first_gpu: np.ndarray,
    has_net: np.ndarray,
    net_label: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """`endpoints` in numpy, array by array (for the tests)."""
    server_s, server_d = gpu_server[src], gpu_server[dst]
    first_s, first_d = server_first_gpu[server_s], server_first_gpu[server_d]
    size_s = server_first_gpu[server_s + 1] - first_s
    size_d = server_first_gpu[server_d + 1] - first_d
    exit_ = dst.astype(np.int64).copy()
    for i in np.flatnonzero(~has_net[dst]):
        local = np.flatnonzero(has_net[first_d[i] : first_d[i] + size_d[i]])
        exit_[i] = first_d[i] + local[0] if local.size else -2
    entry = np.full(src.shape[0], -2, dtype=np.int64)
    ok_exit = exit_ >= 0
    label_x = np.where(ok_exit, net_label[np.maximum(exit_, 0)], -1)
    own = ok_exit & has_net[src] & (net_label[src] == label_x)
    if not pxn:
        entry[own] = src[own]
    local_x = np.where(ok_exit, gpu_local[np.maximum(exit_, 0)], 0)
    rail_peer = first_s + local_x
    peer_ok = (entry == -2) & ok_exit & (local_x < size_s)
    peer_ok &= net_label[np.where(peer_ok, rail_peer, 0)] == label_x
    entry[peer_ok] = rail_peer[peer_ok]
    for i in np.flatnonzero((entry == -2) & ok_exit):
        candidates = np.arange(first_s[i], first_s[i] + size_s[i])
        fit = candidates[net_label[candidates] == label_x[i]]
        if fit.size:
            entry[i] = fit[0]
    inside = server_s == server_d
    entry[inside] = -1
    exit_[inside] = dst[inside]
    return entry, exit_
