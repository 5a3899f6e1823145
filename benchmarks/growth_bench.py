"""How the permutation's cost grows with the fabric: the exponents of the transport issue.

The transport issue asks that routing and the transport model grow no faster than hosts^1.2.
This times, at each host count, a permutation of 2 MB flows on a generated rail-optimized
RoCE fabric (HGX H100 on 51.2T switches at 400G, static ECMP so each flow is one class): the
routing part (expand, route, max-min ideal, work caches emptied first) and the transport part
(the network built from the routes, then simulated until every flow is done), and fits the
exponent of each against the host count by least squares on log-log axes, over the span the
issue names (1,024 to 131,072 hosts). Until 2026-12-06 the fit stopped at 16,384 hosts, where
the fabric gains its third tier: the last point then carried the tier's step alone. The
largest sizes are slow by design of what is measured (the 131k transport about 80 s);
`sizes` picks them.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

from engine.analysis import clear_caches
from engine.catalog.devices import default_catalog
from engine.flows.solver import max_min_rates
from engine.flows.traffic import permutation
from engine.routing.router import Router
from engine.topology import generators as gen
from engine.topology.expand import expand
from engine.transport.from_scenario import scenario_network, scenario_transport_config
from engine.transport.simulate import simulate

BUDGETS = {
    "permutation_route_growth_exponent": 1.2,
    "permutation_transport_growth_exponent": 1.2,
}
SIZES = (1024, 4096, 16384, 65536, 131072)


def timed_sizes(hosts: int) -> tuple[float, float]:
    """(routing seconds, transport seconds) of one permutation at `hosts` GPUs."""
    catalog = default_catalog()
    clear_caches()
    t0 = time.perf_counter()
    scenario = gen.rail_optimized(hosts, "hgx-h100", "th5-51t", speed_gbps=400, catalog=catalog)
    scenario.routing = replace(scenario.routing, mode="ecmp")
    fabric = expand(scenario, catalog)
    src, dst = permutation(fabric, 0)
    routed = Router(fabric).route(src, dst, scenario.routing, connection_bytes=2e6)
    max_min_rates(routed.flow_ptr, routed.entry_link, routed.entry_weight, fabric.link_capacity)
    t1 = time.perf_counter()
    network = scenario_network(fabric, routed, catalog)
    result = simulate(network, scenario_transport_config(scenario, catalog))
    t2 = time.perf_counter()
    if not result.finished:
        raise RuntimeError(f"the {hosts}-host permutation did not finish")
    return t1 - t0, t2 - t1


def fitted_exponent(sizes: list[int], seconds: list[float]) -> float:
    """Least-squares slope of log(seconds) against log(sizes)."""
    xs = [math.log(s) for s in sizes]
    ys = [math.log(max(t, 1e-9)) for t in seconds]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def growth_timings(sizes: tuple[int, ...] = SIZES) -> dict[str, float]:
    """Each size's seconds and the two fitted exponents (the benchmark's keys)."""
    timed_sizes(sizes[0])  # warm the JIT cache
    out: dict[str, float] = {}
    routes, transports = [], []
    for hosts in sizes:
        route_s, transport_s = timed_sizes(hosts)
        routes.append(route_s)
        transports.append(transport_s)
        out[f"permutation_route_{hosts}_s"] = route_s
        out[f"permutation_transport_{hosts}_s"] = transport_s
    out["permutation_route_growth_exponent"] = fitted_exponent(list(sizes), routes)
    out["permutation_transport_growth_exponent"] = fitted_exponent(list(sizes), transports)
    return out
