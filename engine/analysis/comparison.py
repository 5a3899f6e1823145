"""Side-by-side comparison of two scenarios, and InfiniBand <-> Ethernet conversion.

`convert_technology` turns a scenario's fabric into the other technology while keeping its
topology: every switch group gets the other technology's catalog switch that runs the same
port speeds with at least the ports the group uses (the smallest such), the technology
profile changes, transport settings that exist only on the old technology (PFC, ECN and
DCQCN on RoCE, IB CC on InfiniBand) go back to the new technology's catalog defaults, and the
routing policy stays unless the new switches cannot do it. So an IB
vs RoCE question is one call. `compare` evaluates both and returns a `ComparisonResult`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from engine.analysis.results import ComparisonResult, ComparisonRow, EvaluationResult
from engine.catalog.devices import Catalog, default_catalog
from engine.model.catalogs import scenario_catalog
from engine.model.errors import Problem, ScenarioError
from engine.model.networks import storage_ids
from engine.model.scenario import Scenario
from engine.model.transport_checks import ROCE_ONLY

SWITCH_TECHNOLOGY = {"infiniband": "infiniband", "roce": "ethernet"}
# The transport settings that exist on one technology only (engine.model.transport_checks).
_ONLY_ON = {
    "roce": (*ROCE_ONLY, "dcqcn_profile"),
    "infiniband": ("ib_cc",),
}


def _ports_needed(scenario: Scenario, group_id: str, catalog: Catalog) -> dict[float, int]:
    """Cables at each speed on the busiest member of a switch group (failed ones included)."""
    from engine.model.validation import members
    from engine.topology.expand import wire_bundle

    groups = {g.id: g for g in scenario.groups}
    needed: dict[float, int] = {}
    for b in scenario.bundles:
        if group_id not in (b.a, b.b):
            continue
        ga, gb = groups[b.a], groups[b.b]
        rails = (
            int(catalog.get(ga.model, "server").value("nics_per_server"))
            if ga.kind == "server"
            else 0
        )
        wiring = wire_bundle(b, members(ga, catalog), members(gb, catalog), rails, ga.count)
        side = wiring.b if b.b == group_id else wiring.a
        used = int(np.bincount(side).max()) if side.size else 0
        needed[b.speed_gbps] = needed.get(b.speed_gbps, 0) + used
    return needed


def convert_technology(scenario: Scenario, to: str, catalog: Catalog | None = None) -> Scenario:
    """A copy of `scenario` on `to` ("infiniband" or "roce") switches, same topology; the
    switches of a storage network (`engine.model.networks`) stay as they are."""
    cat = scenario_catalog(scenario, catalog)
    if to not in SWITCH_TECHNOLOGY:
        raise ScenarioError(Problem("--to", f"unknown technology {to!r}; use infiniband or roce"))
    result = copy.deepcopy(scenario)
    if scenario.fabric.technology != to:
        for name in _ONLY_ON.get(scenario.fabric.technology, ()):
            setattr(result.transport, name, None)  # the new technology's catalog default
    result.fabric.technology = to
    wanted = SWITCH_TECHNOLOGY[to]
    candidates = [d for d in cat.of_kind("switch") if d.technology == wanted]
    adaptive_everywhere = True
    storage, _ = storage_ids(scenario)  # the storage network stays Ethernet
    for g in result.groups:
        if g.kind != "switch" or g.id in storage:
            continue
        needed = _ports_needed(scenario, g.id, cat)
        fitting = []
        for sw in candidates:
            modes = cat.switch_port_modes(sw.id)
            if (
                all(speed in modes for speed in needed)
                and sum(n / modes[s] for s, n in needed.items()) <= 1
            ):
                fitting.append((max(modes.values()), sw.id))
        if not fitting:
            speeds = ", ".join(f"{s:g}G x {n}" for s, n in needed.items())
            raise ScenarioError(
                Problem(f"groups[{g.id}]", f"no {to} switch in the catalog runs {speeds}", "model")
            )
        g.model = min(fitting)[1]
        adaptive_everywhere &= bool(cat.get(g.model, "switch").value("adaptive_routing"))
    if result.routing.mode == "adaptive" and not adaptive_everywhere:
        result.routing.mode = "ecmp"
    result.metadata.name = f"{scenario.metadata.name} ({to})"
    return result


def compare(
    a: Scenario,
    b: Scenario,
    catalog: Catalog | None = None,
    parts: tuple[str, ...] = ("permutation", "collective", "training", "cost"),
) -> ComparisonResult:
    """The headline figures of two scenarios side by side, with the ratio b / a.

    A figure is left out when either scenario lacks it (its part was not asked for).
    """
    from engine.analysis.evaluation import evaluate

    cat = catalog or default_catalog()
    reports = [evaluate(s, cat, parts) for s in (a, b)]
    rows = []
    for label, getter in _FIGURES:
        try:
            va, vb = (float(getter(r)) for r in reports)
        except (AttributeError, IndexError, TypeError):  # a part that was not evaluated
            continue
        rows.append(ComparisonRow(label, va, vb, vb / va if va else None))
    return ComparisonResult(a.metadata.name, b.metadata.name, tuple(rows))


# The compared figures: row title, and where each sits in an evaluation.
_FIGURES: tuple[tuple[str, Callable[[EvaluationResult], Any]], ...] = (
    ("GPUs", lambda r: r.topology.gpus),
    ("switches", lambda r: r.topology.switches_total),
    ("cables", lambda r: r.topology.cables_total),
    ("permutation mean throughput", lambda r: r.permutation.throughput_fraction.mean),
    ("collective busbw (GB/s)", lambda r: r.collective.rows[0].busbw_GBps),
    ("collective time (s)", lambda r: r.collective.rows[0].time_s),
    ("training step (s)", lambda r: r.training.step_s),
    ("GPU utilization", lambda r: r.training.gpu_utilization),
    ("MFU", lambda r: r.training.mfu),
    ("capex (USD)", lambda r: r.cost.capex_usd),
    ("network capex (USD)", lambda r: r.cost.network_capex_usd),
    ("power (W)", lambda r: r.cost.power_w),
    ("cost per GPU (USD)", lambda r: r.cost.cost_per_gpu_usd),
)
