"""The engine's work caches, seen from the door: how much a run reused, and a cold start.

An evaluation runs in stages, and the expensive ones keep their results keyed by a hash of
exactly the inputs they read: the expanded graph (`engine.topology.graph_cache`: structure,
failures, catalog; each expansion fills in its own latencies), routing tables, routes and
path latencies (`engine.routing.route_cache`: the fabric's graph, the routing policy and the
demand; the latency of each link class only for the path sums, which
`engine.routing.path_latency` does once per distinct path shape), each collective's schedule
(`engine.collectives.timing`: the op, algorithm, ranks and servers), each collective stage's
max-min timing
(`engine.collectives.stage_rates`: paths, bytes, capacities), the transport verdict of each
collective stage (`engine.collectives.stage_transport`: the kernel's tables and the
transport settings), the pipeline gates of a ring or tree stage (`engine.collectives.pipeline`:
its paths, classes and NCCL's buffer) and the permutation's steady state
(`engine.analysis.permutation_transport`). An edit therefore re-runs the stages downstream
of the fields it changed and reuses the rest; a cache entry can never outlive an edit of an
input it reads, because that edit changes its key. Each cache is bounded in bytes.
"""

from __future__ import annotations

from engine.analysis.permutation_transport import STEADY_STATES
from engine.collectives.pipeline import GATES
from engine.collectives.stage_rates import STAGE_RATES
from engine.collectives.stage_transport import VERDICTS
from engine.collectives.work_cache import NETWORK_FLOWS, SCHEDULES
from engine.routing import route_cache
from engine.routing.path_latency import SIGNATURES, SUMMED_ONCE
from engine.runtime.lru import ByteLRU
from engine.topology.graph_cache import GRAPHS

CACHES: dict[str, ByteLRU] = {
    "routes": route_cache.ROUTES,
    "expanded graphs": GRAPHS,
    "routing tables": route_cache.TABLES,
    "path latencies": route_cache.LATENCIES,
    "path shapes": SIGNATURES,
    "flow bytes": route_cache.FLOW_BYTES,
    "schedules": SCHEDULES,
    "network flows": NETWORK_FLOWS,
    "stage rates": STAGE_RATES,
    "transport": VERDICTS,
    "pipeline gates": GATES,
    "steady states": STEADY_STATES,
}


def cache_counts() -> dict[str, tuple[int, int]]:
    """Hits and misses of each cache since the process started (or the last clear)."""
    return {name: (cache.hits, cache.misses) for name, cache in CACHES.items()}


def reused_since(before: dict[str, tuple[int, int]]) -> tuple[str, ...]:
    """What a run reused, from the counts before it: ``"routes 11 of 11"`` per cache that
    answered at least one lookup (the status bar says it when a run saved work)."""
    out = []
    for name, (hits, misses) in cache_counts().items():
        h0, m0 = before.get(name, (0, 0))
        hit, looked = hits - h0, hits - h0 + misses - m0
        if hit > 0:
            out.append(f"{name} {hit} of {looked}")
    return tuple(out)


def clear_caches() -> None:
    """Forget every kept result: the next run computes everything afresh."""
    for cache in CACHES.values():
        cache.clear()
    SUMMED_ONCE.clear()  # a route summed before the clear is summed once again
