"""The engine's work caches change how fast an answer comes, never the answer.

Every preset evaluates to the same figures from cold caches and from warm ones; a random
series of edits, each evaluated with the caches its predecessors left, gives what a cold
run of the edited scenario gives; and an edit of anything routing reads misses the routing
caches, while one it does not read hits them.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.analysis import cache_counts, clear_caches, evaluate, run_evaluation
from engine.catalog.devices import default_catalog
from engine.model.errors import ScenarioError
from engine.model.overrides import apply_override
from engine.model.scenario import Scenario
from engine.presets.scenarios import load_preset, preset_names
from engine.routing.route_cache import routing_digest
from engine.topology.expand import expand
from engine.topology.templates import generate
from tests.golden.cases import blank_wall_clock

SIZES = np.array([2.0**20, 2.0**30])


def figures(result) -> dict:
    """A result's JSON without the wall-clock fields (how long, not what)."""
    data = blank_wall_clock(json.loads(result.to_json()))
    data.pop("ui_elapsed_s", None)
    data.pop("reused", None)
    return data


@pytest.mark.parametrize("preset", preset_names())
def test_every_preset_evaluates_alike_from_cold_and_warm_caches(preset: str) -> None:
    scenario = load_preset(preset)
    catalog = default_catalog()
    clear_caches()
    cold = run_evaluation(scenario, catalog)
    warm = run_evaluation(scenario, catalog)
    assert figures(warm) == figures(cold)
    assert any(note.startswith("routes") for note in warm.reused)
    # A cold run routes what it needs; only a demand one run asks for twice (an NVL72
    # rack's training collective that is also the probe's) may come from its own cache.
    hit, total = _routes_reused(warm.reused)
    assert hit == total > 0
    cold_hit, cold_total = _routes_reused(cold.reused)
    twice = 1 if "nvl72" in preset else 0
    assert cold_total in (0, total) and cold_hit <= twice


def _routes_reused(reused: tuple[str, ...]) -> tuple[int, int]:
    """The "routes k of n" note of a report as (k, n); (0, 0) when nothing was reused."""
    for note in reused:
        if note.startswith("routes "):
            k, _, n = note.removeprefix("routes ").partition(" of ")
            return int(k), int(n)
    return 0, 0


EDITS = {
    "fabric.switch_latency_ns": ["300", "900"],
    "bundles.leaf-spine.length_m": ["10", "100"],
    "bundles.leaf-spine.speed_gbps": ["200", "400"],
    "routing.mode": ["ecmp", "adaptive"],
    "routing.flows_per_connection": ["1", "2"],
    "routing.seed": ["0", "7"],
    "groups.spine.count": ["2", "4"],
    "workload.op": ["all-reduce", "all-gather"],
    "transport.ecn_kmin_bytes": ["50000", "400000"],
}
# 256 GPUs on RoCE, leaves 2:1 oversubscribed: small enough to evaluate cold many times,
# congested enough that the transport and the routing choice matter.
SMALL = generate(
    "rail-optimized", gpus=256, server="hgx-h100", switch="sn5600", oversubscription=2.0
)


def outcome(scenario: Scenario, catalog) -> dict | str:
    """The figures of an evaluation, or the refusal (an edit may make a scenario invalid)."""
    try:
        return figures(evaluate(scenario, catalog, ("permutation", "collective"), SIZES))
    except ScenarioError as exc:
        return str(exc)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from(sorted(EDITS)).flatmap(
            lambda path: st.tuples(st.just(path), st.sampled_from(EDITS[path]))
        ),
        min_size=2,
        max_size=3,
    )
)
def test_a_series_of_edits_evaluates_as_cold_runs_do(edits: list[tuple[str, str]]) -> None:
    catalog = default_catalog()
    scenario = SMALL
    warm_results = []
    for path, text in edits:  # each with the caches the edits before it left
        scenario = apply_override(scenario, path, text)
        warm_results.append((scenario, outcome(scenario, catalog)))
    for edited, warm in warm_results:
        clear_caches()
        assert warm == outcome(edited, catalog)


def test_what_routing_reads_keys_its_caches() -> None:
    catalog = default_catalog()
    base = load_preset("dgx-h100-ib-ndr-1k")
    digest = routing_digest(expand(base, catalog))

    def digest_after(path: str, text: str) -> str:
        return routing_digest(expand(apply_override(base, path, text), catalog))

    # Latencies are summed after routing: the same tables and routes serve.
    assert digest_after("fabric.switch_latency_ns", "900") == digest
    assert digest_after("bundles.leaf-spine.length_m", "100") == digest
    # Capacity, the graph and the GPUs are read: a new key.
    assert digest_after("bundles.leaf-spine.speed_gbps", "200") != digest
    assert digest_after("bundles.leaf-spine.links_per_pair", "1") != digest
    assert digest_after("groups.servers.count", "64") != digest


def test_an_edit_routing_does_not_read_reuses_its_routes_and_one_it_reads_does_not() -> None:
    catalog = default_catalog()
    base = load_preset("dgx-h100-ib-ndr-1k")
    parts = ("permutation",)
    clear_caches()
    evaluate(base, catalog, parts)
    before = cache_counts()["routes"]
    evaluate(apply_override(base, "fabric.switch_latency_ns", "900"), catalog, parts)
    hits, misses = cache_counts()["routes"]
    assert (hits - before[0], misses - before[1]) == (1, 0)
    evaluate(apply_override(base, "bundles.leaf-spine.speed_gbps", "200"), catalog, parts)
    assert cache_counts()["routes"] == (hits, misses + 1)
