"""Routing is done once per fabric and traffic: its tables and its routes, kept by what they read.

An edit that leaves the graph alone (a latency, a protocol, a model size, a price) expands
to a new `Fabric` whose links, capacities, GPUs and switch groups are those of the last
one. Routing reads exactly those, so it does not run again: `routing_digest` is a hash of
everything the router reads of a fabric (never the link latencies, which a route only sums
afterwards), `TABLES` keeps the router's tables (adjacency, ECMP salts and the distance rows
it has computed so far) per digest, `ROUTES` keeps each routed traffic pattern per digest,
policy and demand, and `LATENCIES` the path latencies of each pattern per set of link
latencies. All three are least-recently-used caches bounded in bytes, shared by every caller
in the process (the app's worker, a sweep, the CLI), and safe to use from threads.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from typing import Any

import numpy as np

from engine.routing.path_latency import SIGNATURES, SUMMED_ONCE
from engine.runtime.lru import ByteLRU
from engine.topology.expand import Fabric

TABLES_BYTES = 256 * 2**20  # a 131,072-GPU fabric's tables with its distance rows: ~60 MB
ROUTES_BYTES = 1024 * 2**20  # a 131,072-GPU permutation's routes: ~130 MB


def routing_digest(fabric: Fabric) -> str:
    """A hash of everything routing reads of `fabric`: the links (ends, capacity, bundle),
    the GPUs' servers, rails, NVLink links and line rates, the nodes' kinds and groups, and
    each group's tier and model (the ECMP salts). Link latencies are left out on purpose."""
    arrays = array_digest(
        fabric.link_src,
        fabric.link_dst,
        fabric.link_capacity,
        fabric.link_bundle,
        fabric.node_kind,
        fabric.node_group,
        fabric.gpu_server,
        fabric.gpu_local,
        fabric.server_first_gpu,
        fabric.gpu_nvlink_up,
        fabric.gpu_nvlink_down,
        fabric.gpu_line_rate,
    )
    salts = repr([(g.tier, g.model) for g in fabric.scenario.groups])
    return hashlib.sha1(f"{arrays}|{salts}".encode()).hexdigest()


# Digests of read-only arrays, by identity: a schedule's stage arrays are hashed as keys
# again and again (every point of a sweep); a read-only array cannot change under its digest.
_KNOWN: dict[int, tuple[weakref.ref, str]] = {}
_KNOWN_LOCK = threading.Lock()


def _one_digest(array: np.ndarray) -> str:
    a = np.ascontiguousarray(array)
    h = hashlib.sha1(f"{a.dtype}{a.shape}".encode())
    h.update(memoryview(a).cast("B"))
    return h.hexdigest()


def _forget(key: int) -> None:
    with _KNOWN_LOCK:
        _KNOWN.pop(key, None)


def _digest_of(array: Any) -> str:
    """One array's digest, remembered for a read-only contiguous array while it lives."""
    if not (
        isinstance(array, np.ndarray)
        and not array.flags.writeable
        and array.flags.c_contiguous
        and array.base is None
    ):
        return _one_digest(np.asarray(array))
    key = id(array)
    with _KNOWN_LOCK:
        known = _KNOWN.get(key)
    if known is not None and known[0]() is array:
        return known[1]
    digest = _one_digest(array)
    with _KNOWN_LOCK:
        _KNOWN[key] = (weakref.ref(array, lambda _r, k=key: _forget(k)), digest)
    return digest


def array_digest(*arrays: np.ndarray) -> str:
    """A hash of some arrays' values, shapes and types (a traffic pattern's key).

    A read-only array that owns its data is hashed once in its life: the digest is
    remembered by identity (a read-only array cannot change under it).
    """
    if len(arrays) == 1:
        return _digest_of(arrays[0])
    h = hashlib.sha1()
    for array in arrays:
        h.update(_digest_of(array).encode())
    return h.hexdigest()


TABLES: ByteLRU[Any] = ByteLRU(TABLES_BYTES)
ROUTES: ByteLRU[Any] = ByteLRU(ROUTES_BYTES)
# Path latencies per route and link latencies (a sweep of a timing field sums them once).
LATENCIES: ByteLRU[np.ndarray] = ByteLRU(128 * 2**20)
# Bytes per routed flow per route and demand bytes (read-only: their digests are taken once).
FLOW_BYTES: ByteLRU[np.ndarray] = ByteLRU(128 * 2**20)


def clear() -> None:
    """Forget every routing table, route and path latency (a cold start)."""
    TABLES.clear()
    ROUTES.clear()
    LATENCIES.clear()
    SIGNATURES.clear()
    SUMMED_ONCE.clear()
    FLOW_BYTES.clear()
