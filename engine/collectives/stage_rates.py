"""How long a routed stage's flows take at one byte of message, under max-min fair sharing.

The ideal transport's answer for a stage: the event-driven fluid simulation of its flows
(each finishing at its own time, the others speeding up), or past `FLUID_MAX_FLOWS` one
max-min allocation whose slowest flow bounds the stage. It depends only on the flows'
paths, their bytes and the links' capacities, so it is kept per process (`STAGE_RATES`,
bounded in bytes) keyed by a hash of exactly those: a sweep of a latency or a protocol
solves each stage once.
"""

from __future__ import annotations

import numpy as np

from engine.flows.solver import link_loads, max_min_rates, simulate_fluid
from engine.routing.route_cache import array_digest
from engine.runtime.lru import ByteLRU

FLUID_MAX_FLOWS = 50_000  # past this the event-driven simulation costs seconds per stage
STAGE_RATES: ByteLRU[tuple[float, np.ndarray]] = ByteLRU(256 * 2**20)


def stage_rates(
    flow_ptr: np.ndarray,
    entry_link: np.ndarray,
    entry_weight: np.ndarray,
    capacity: np.ndarray,
    sizes: np.ndarray,
    paths_key: str = "",
    capacity_key: str = "",
) -> tuple[float, np.ndarray]:
    """The stage's makespan (s) and the bytes each link carries, for flows of `sizes` bytes
    on the given paths and link capacities (bytes/s). `paths_key` and `capacity_key`, when
    given, stand for the paths and the capacities in the cache key (the routing cache's key
    names the paths already; hashing them again costs more than a small stage's solve)."""
    parts = [sizes]
    if not paths_key:
        parts += [flow_ptr, entry_link, entry_weight]
    if not capacity_key:
        parts.append(capacity)
    key = f"{paths_key}|{capacity_key}|{array_digest(*parts)}"
    known = STAGE_RATES.get(key)
    if known is not None:
        return known
    n_flows = flow_ptr.shape[0] - 1
    if n_flows <= FLUID_MAX_FLOWS:
        result = simulate_fluid(flow_ptr, entry_link, entry_weight, capacity, sizes)
        answer = (result.makespan, result.link_bytes)
    else:
        rates = max_min_rates(flow_ptr, entry_link, entry_weight, capacity)
        answer = (
            float(np.max(sizes / rates)),
            link_loads(flow_ptr, entry_link, entry_weight, sizes, capacity.shape[0]),
        )
    answer[1].flags.writeable = False  # shared by every later caller
    STAGE_RATES.put(key, answer)
    return answer


def route_rates(
    flow_ptr: np.ndarray,
    entry_link: np.ndarray,
    entry_weight: np.ndarray,
    capacity: np.ndarray,
    paths_key: str = "",
) -> np.ndarray:
    """Max-min fair rates (bytes/s) of routed flows on links of `capacity`; kept by
    `paths_key` when given (the routing cache's key, which names the fabric's capacities
    too: pass it only with the capacities the router saw)."""
    key = f"rates|{paths_key}" if paths_key else ""
    known = STAGE_RATES.get(key) if key else None
    if known is not None:
        return known[1]
    rates = max_min_rates(flow_ptr, entry_link, entry_weight, capacity)
    if key:
        rates.flags.writeable = False
        STAGE_RATES.put(key, (0.0, rates))
    return rates
