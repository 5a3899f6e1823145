"""The hashes of ECMP: splitmix64 mixing, the per-flow hash of (src, dst, sub-flow, seed) and
the per-node salts of the switches' hash functions.

A switch hashes a flow's header fields to pick one of its equal-cost links; here the fields
are the GPUs and the sub-flow (queue pair) index, salted by the policy's seed, and the hash
is mixed once more with the salt of the node at every hop. Switches that share a salt run the
same hash function, as switches of one model do out of the box: a flow that took port k of
one such switch takes port k of the next one too when both offer as many equal-cost ports
(hash polarization). `node_salts` gives every node its salt under a policy's hash scope;
`engine.routing.reference` has the same hashes on Python integers.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.model.scenario import RoutingPolicy


@njit(cache=True, nogil=True)
def mix64(x: np.uint64) -> np.uint64:
    """splitmix64 finaliser: a well-spread 64-bit hash of `x`."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True)
def flow_hashes(src: np.ndarray, dst: np.ndarray, sub: np.ndarray, seed: int) -> np.ndarray:
    """The ECMP hash of every flow (GPU `src` to `dst`, sub-flow `sub`) under `seed`."""
    out = np.empty(src.shape[0], dtype=np.uint64)
    base = mix64(np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15))
    for i in range(src.shape[0]):
        h = mix64(base ^ np.uint64(src[i]))
        h = mix64(h ^ (np.uint64(dst[i]) << np.uint64(20)))
        out[i] = mix64(h ^ (np.uint64(sub[i]) << np.uint64(44)))
    return out


@njit(cache=True, nogil=True)
def mix64_all(keys: np.ndarray) -> np.ndarray:
    """`mix64` of every entry of the uint64 array `keys`."""
    out = np.empty(keys.shape[0], dtype=np.uint64)
    for i in range(keys.shape[0]):
        out[i] = mix64(keys[i])
    return out


FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK64 = (1 << 64) - 1


def text_key(text: str) -> int:
    """A stable 64-bit key of `text` (FNV-1a of its UTF-8 bytes), the same in every process.

    Python's own `hash` of a string changes between runs, which would make placements differ
    from one run to the next; the salts of shared hash functions are keyed by this instead.
    """
    h = FNV_OFFSET
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * FNV_PRIME) & MASK64
    return h


def scope_text(scope: str, tier: str, model: str) -> str:
    """What the nodes sharing a hash function under `scope` have in common, as text.

    ``tier``: the tier of the node's group; ``model``: its catalog model; ``fabric``: nothing
    (one function everywhere). ``switch`` has no shared text: each node is keyed by its id.
    """
    if scope == "tier":
        return f"tier:{tier}"
    if scope == "model":
        return f"model:{model}"
    if scope == "fabric":
        return "fabric:"
    raise ValueError(
        f"unknown hash_scope {scope!r}; use one of {', '.join(RoutingPolicy.HASH_SCOPES)}"
    )


def node_salts(
    scope: str, node_group: np.ndarray, group_tiers: list[str], group_models: list[str]
) -> np.ndarray:
    """Per node (uint64): the salt its ECMP choice mixes with the flow hash under `scope`.

    ``switch`` salts node v with ``mix64(v)``, every switch its own function (and the
    placement of earlier versions, bit for bit); the other scopes salt every node of a
    group with ``mix64(text_key(scope_text(...)))`` of its group's tier or model, so the
    nodes sharing it hash alike. GPUs belong to their server group: a NIC with several
    ports hashes like the other NICs of its tier or model.
    """
    if scope == "switch":
        return mix64_all(np.arange(node_group.shape[0], dtype=np.uint64))
    group_keys = np.array(
        [
            text_key(scope_text(scope, tier, model))
            for tier, model in zip(group_tiers, group_models, strict=True)
        ],
        dtype=np.uint64,
    )
    return mix64_all(group_keys)[node_group]
