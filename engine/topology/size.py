"""How big a scenario's fabric and its run will be, known before anything is built.

Counting needs only the groups, the bundles' patterns and the catalog (GPUs and NICs per
server), so a scenario of a billion cables is refused in milliseconds with the fields that
make it large, instead of after the arrays have eaten the machine's memory.

Bytes per element are measured, not derived: peak resident memory of `evaluate` with every
part, above the interpreter's own, on this project's 2-core machine on 2026-12-04 —
h100-ib-ndr-16k at 1 and 4 flows per connection (175 MB and 417 MB above a 105 MB
baseline) give 720 B per directed link and 4,900 B per GPU per flow of a connection;
h100-roce-128k then estimates 1.40 GB against 1.07 GB measured, so the estimate errs large.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.catalog.devices import Catalog
from engine.model.errors import Problem, ScenarioError
from engine.model.networks import split_networks
from engine.model.scenario import LinkBundle, Scenario
from engine.model.validation import bundle_where, group_where, members

BYTES_PER_DIRECTED_LINK = 720
BYTES_PER_GPU_FLOW = 4_900
MANY_GPUS = 2**20  # past a million GPUs a run takes minutes: said as a warning


@dataclass(frozen=True)
class SizeEstimate:
    """Counts of the expanded fabric and the bytes a full evaluation of it needs."""

    gpus: int
    nodes: int
    directed_links: int
    flows: int
    bytes: int
    drivers: tuple[str, ...]  # the fields that make it large, largest first


def _cables(b: LinkBundle, n_a: int, n_b: int, servers: int, rails: int) -> int:
    """Cables of one bundle, as `engine.topology.expand.wire_bundle` would lay them."""
    blocks = max(b.blocks, 1)
    if b.pattern in ("full", "striped"):
        pairs = n_a * (n_b // blocks)
    elif b.pattern == "rail":
        pairs = servers * rails
    else:  # one-to-one
        pairs = n_a
    return pairs * b.links_per_pair


def estimate_size(scenario: Scenario, catalog: Catalog) -> SizeEstimate:
    """The size of a structurally valid scenario (`engine.model.validation` passed): of
    its compute fabric, the one `expand` returns (a storage network beside it is sized
    when it is expanded)."""
    scenario = split_networks(scenario, catalog).compute
    groups = {g.id: g for g in scenario.groups}
    gpus = nodes = 0
    weights: list[tuple[int, str]] = []
    for g in scenario.groups:
        if g.kind == "server":
            per = int(catalog.get(g.model, "server").value("gpus_per_server"))
            gpus += g.count * per
            nodes += g.count * (per + 1)  # its GPUs and its NVLink switch
            weights.append((2 * g.count * per, f"{group_where(g)}.count ({g.count:,} servers)"))
        else:
            nodes += g.count
    cables = 0
    for b in scenario.bundles:
        ga, gb = groups[b.a], groups[b.b]
        rails = (
            int(catalog.get(ga.model, "server").value("nics_per_server"))
            if ga.kind == "server"
            else 1
        )
        n = _cables(b, members(ga, catalog), members(gb, catalog), ga.count, rails)
        cables += n
        weights.append(
            (2 * n, f"{bundle_where(b)} ({n:,} cables, links_per_pair {b.links_per_pair})")
        )
    links = 2 * (cables + gpus)
    flows = gpus * max(scenario.routing.flows_per_connection, 1)
    total = links * BYTES_PER_DIRECTED_LINK + flows * BYTES_PER_GPU_FLOW
    if scenario.routing.flows_per_connection > 1:
        weights.append(
            (
                flows * BYTES_PER_GPU_FLOW // BYTES_PER_DIRECTED_LINK,
                f"routing.flows_per_connection ({scenario.routing.flows_per_connection})",
            )
        )
    drivers = tuple(text for _, text in sorted(weights, key=lambda w: -w[0])[:3])
    return SizeEstimate(gpus, nodes, links, flows, total, drivers)


def _gib(n: float) -> str:
    return f"{n / 2**30:,.1f} GiB"


def check_fits(size: SizeEstimate, limit_bytes: int | None, limit_source: str) -> list[Problem]:
    """Refuse (`ScenarioError`) a fabric larger than `limit_bytes`; warnings for a huge one."""
    if limit_bytes is not None and size.bytes > limit_bytes:
        fits = int(size.gpus * limit_bytes / size.bytes)
        raise ScenarioError(
            Problem(
                "scenario",
                f"too large: about {_gib(size.bytes)} for {size.gpus:,} GPUs, "
                f"{size.directed_links:,} directed links and {size.flows:,} flows, against "
                f"{_gib(limit_bytes)} ({limit_source}); the size comes from "
                f"{'; '.join(size.drivers)}; about {fits:,} GPUs of this design would fit",
            )
        )
    if size.gpus > MANY_GPUS:
        return [
            Problem(
                "scenario",
                f"{size.gpus:,} GPUs: a full evaluation takes minutes and about "
                f"{_gib(size.bytes)} of memory",
                severity="warning",
            )
        ]
    return []
