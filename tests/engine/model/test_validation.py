"""Every problem class of validation and expansion: a working scenario broken in one place.

Each case starts from a generator or a preset that expands cleanly, breaks one thing and
checks that `expand` refuses it with a `Problem` at the right element and field whose message
says what is wrong.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from engine.analysis.evaluation import evaluate
from engine.catalog.devices import default_catalog
from engine.model.errors import Problem, ScenarioError
from engine.model.overrides import apply_override
from engine.model.scenario import DeviceGroup, LinkBundle, LinkFailure, Scenario, SwitchFailure
from engine.model.validation import check_structure
from engine.presets.scenarios import PRESETS, load_preset
from engine.topology.expand import expand
from engine.topology.generators import leaf_spine, rail_only, single_switch


def leaf_spine_128() -> Scenario:
    """16 DGX H100, 4 ToR leaves (full, blocks=4), 2 spines (full, 16 links per pair)."""
    return leaf_spine(128, "dgx-h100", "qm9700")


def leaf_spine_1k() -> Scenario:
    """128 DGX H100, 32 leaves, 16 spines, 2 links per leaf-spine pair: every port used."""
    return leaf_spine(1024, "dgx-h100", "qm9700")


def single_16() -> Scenario:
    """2 DGX H100 (16 NICs) on one QM9700."""
    return single_switch(16, "dgx-h100", "qm9700")


def rail_1k() -> Scenario:
    """The default preset: rail-optimized, 32 leaves (4 units of 8 rails), 16 spines."""
    return load_preset("dgx-h100-ib-ndr-1k")


def problems_of(scenario: Scenario) -> list[Problem]:
    with pytest.raises(ScenarioError) as info:
        expand(scenario, default_catalog())
    assert info.value.problems, "ScenarioError without problems"
    return info.value.problems


def find(problems: list[Problem], where: str, field: str | None) -> list[Problem]:
    return [p for p in problems if p.where == where and p.field == field]


def assert_problem(
    problems: list[Problem], where: str, field: str | None, *fragments: str
) -> Problem:
    matches = find(problems, where, field)
    assert matches, f"no problem at {where}.{field}; got {[str(p) for p in problems]}"
    for p in matches:
        if all(f in p.message for f in fragments):
            return p
    raise AssertionError(f"no message with {fragments!r} at {where}.{field}: {matches}")


def _group(s: Scenario, gid: str, **changes) -> None:
    g = s.group(gid)
    for k, v in changes.items():
        setattr(g, k, v)


def _bundle(s: Scenario, bid: str, **changes) -> None:
    b = s.bundle(bid)
    for k, v in changes.items():
        setattr(b, k, v)


def _add_second_server_group(s: Scenario) -> None:
    extra = copy.deepcopy(s.group("servers"))
    extra.id = "servers2"
    s.groups.append(extra)


# --------------------------------------------------------------------------------------------
# Valid scenarios pass.


@pytest.mark.parametrize("name", [n for n in PRESETS if n.endswith("-1k")])
def test_one_k_presets_are_valid(name: str) -> None:
    s = load_preset(name)
    assert check_structure(s, default_catalog()) == []
    fabric = expand(s)
    assert fabric.n_gpus == 1024
    assert fabric.warnings == []


@pytest.mark.parametrize(
    "build",
    [single_16, leaf_spine_128, leaf_spine_1k, rail_1k],
    ids=["single", "leaf-spine-128", "leaf-spine-1k", "rail-1k"],
)
def test_generated_scenarios_are_valid(build: Callable[[], Scenario]) -> None:
    fabric = expand(build())
    assert fabric.n_gpus > 0
    assert int(fabric.bundle_cables_up.sum()) == int(fabric.bundle_cables.sum())


def test_rail_only_is_valid() -> None:
    assert expand(rail_only(1024, "hgx-h100", "th5-51t", speed_gbps=400)).n_gpus == 1024


def test_boundary_values_are_valid() -> None:
    s = leaf_spine_128()
    s.fabric.header_efficiency = 1.0
    s.fabric.mtu_bytes = 256
    s.fabric.switch_latency_ns = 0.0
    s.failures.links.append(LinkFailure("leaf-spine", 0))
    s.failures.switches.append(SwitchFailure("spine", 1))  # one spine of two is redundant
    fabric = expand(s)
    assert int(fabric.bundle_cables_up[1]) == int(fabric.bundle_cables[1]) // 2


def test_reversed_bundle_sides_are_accepted() -> None:
    s = leaf_spine_128()
    _bundle(s, "leaf-spine", a="spine", b="leaf")
    assert expand(s).n_gpus == 128


# --------------------------------------------------------------------------------------------
# Structural problems: one broken thing each.

Case = tuple[Callable[[], Scenario], Callable[[Scenario], None], str, str | None, tuple[str, ...]]

CASES: dict[str, Case] = {
    # groups
    "unknown switch model": (
        leaf_spine_128,
        lambda s: _group(s, "spine", model="qm9999"),
        "groups[spine]",
        "model",
        ("unknown switch model 'qm9999'", "qm9700"),
    ),
    "unknown server model": (
        leaf_spine_128,
        lambda s: _group(s, "servers", model="dgx-z9"),
        "groups[servers]",
        "model",
        ("unknown server model 'dgx-z9'", "dgx-h100"),
    ),
    "switch model in a server group": (
        leaf_spine_128,
        lambda s: _group(s, "servers", model="qm9700"),
        "groups[servers]",
        "model",
        ("unknown server model 'qm9700'",),
    ),
    "zero count": (
        leaf_spine_128,
        lambda s: _group(s, "spine", count=0),
        "groups[spine]",
        "count",
        ("count must be at least 1, not 0",),
    ),
    "negative count": (
        leaf_spine_128,
        lambda s: _group(s, "servers", count=-3),
        "groups[servers]",
        "count",
        ("count must be at least 1, not -3",),
    ),
    "unknown tier": (
        leaf_spine_128,
        lambda s: _group(s, "spine", tier="top"),
        "groups[spine]",
        "tier",
        ("unknown tier 'top'", "server, leaf, spine, core"),
    ),
    "switch group in server tier": (
        leaf_spine_128,
        lambda s: _group(s, "spine", tier="server"),
        "groups[spine]",
        "tier",
        ("a switch group cannot sit in tier 'server'",),
    ),
    "server group in leaf tier": (
        leaf_spine_128,
        lambda s: _group(s, "servers", tier="leaf"),
        "groups[servers]",
        "tier",
        ("a server group cannot sit in tier 'leaf'",),
    ),
    "unknown kind": (
        leaf_spine_128,
        lambda s: _group(s, "spine", kind="router"),
        "groups[spine]",
        "kind",
        ("unknown kind 'router'", "server, switch"),
    ),
    "empty group id": (
        leaf_spine_128,
        lambda s: _group(s, "spine", id=""),
        "groups[]",
        "id",
        ("every group needs an id",),
    ),
    "duplicate group id": (
        leaf_spine_128,
        lambda s: s.groups.append(copy.deepcopy(s.group("spine"))),
        "groups[spine]",
        "id",
        ("id 'spine' is used by another group",),
    ),
    "negative override": (
        leaf_spine_128,
        lambda s: s.group("leaf").overrides.update(latency_ns=-5.0),
        "groups[leaf]",
        "overrides",
        ("override latency_ns must not be negative",),
    ),
    # bundles
    "duplicate bundle id": (
        leaf_spine_128,
        lambda s: s.bundles.append(copy.deepcopy(s.bundle("leaf-spine"))),
        "bundles[leaf-spine]",
        "id",
        ("id 'leaf-spine' is used by another bundle",),
    ),
    "bundle to missing group b": (
        leaf_spine_128,
        lambda s: _bundle(s, "leaf-spine", b="core"),
        "bundles[leaf-spine]",
        "b",
        ("no group 'core' to connect to",),
    ),
    "bundle from missing group a": (
        leaf_spine_128,
        lambda s: _bundle(s, "servers-leaf", a="gpus"),
        "bundles[servers-leaf]",
        "a",
        ("no group 'gpus' to connect to",),
    ),
    "bundle to its own group": (
        leaf_spine_128,
        lambda s: _bundle(s, "leaf-spine", b="leaf"),
        "bundles[leaf-spine]",
        "b",
        ("two different groups",),
    ),
    "server to server": (
        leaf_spine_128,
        lambda s: (
            _add_second_server_group(s),
            s.bundles.append(LinkBundle("direct", "servers", "servers2", "one-to-one")),
        ),
        "bundles[direct]",
        "b",
        ("servers connect to switches",),
    ),
    "unknown pattern": (
        leaf_spine_128,
        lambda s: _bundle(s, "leaf-spine", pattern="mesh"),
        "bundles[leaf-spine]",
        "pattern",
        ("unknown wiring pattern 'mesh'", "rail, full, one-to-one, striped"),
    ),
    "links_per_pair zero": (
        leaf_spine_128,
        lambda s: _bundle(s, "leaf-spine", links_per_pair=0),
        "bundles[leaf-spine]",
        "links_per_pair",
        ("links_per_pair must be at least 1, not 0",),
    ),
    "links_per_pair negative": (
        single_16,
        lambda s: _bundle(s, "servers-leaf", links_per_pair=-2),
        "bundles[servers-leaf]",
        "links_per_pair",
        ("links_per_pair must be at least 1, not -2",),
    ),
    "blocks zero": (
        leaf_spine_128,
        lambda s: _bundle(s, "servers-leaf", blocks=0),
        "bundles[servers-leaf]",
        "blocks",
        ("blocks must be at least 1, not 0",),
    ),
    "speed zero": (
        leaf_spine_128,
        lambda s: _bundle(s, "leaf-spine", speed_gbps=0.0),
        "bundles[leaf-spine]",
        "speed_gbps",
        ("speed_gbps must be positive",),
    ),
    "length negative": (
        leaf_spine_128,
        lambda s: _bundle(s, "leaf-spine", length_m=-1.0),
        "bundles[leaf-spine]",
        "length_m",
        ("length_m must be positive, not -1",),
    ),
    "unknown cable": (
        leaf_spine_128,
        lambda s: _bundle(s, "leaf-spine", cable="cat6"),
        "bundles[leaf-spine]",
        "cable",
        ("unknown cable 'cat6'", "'auto'"),
    ),
    "cable that is not a cable": (
        leaf_spine_128,
        lambda s: _bundle(s, "leaf-spine", cable="qm9700"),
        "bundles[leaf-spine]",
        "cable",
        ("qm9700 is a switch, not a cable or transceiver",),
    ),
    "cable too short": (
        leaf_spine_128,
        lambda s: _bundle(s, "leaf-spine", cable="dac-400g"),  # 3 m DAC on a 30 m run
        "bundles[leaf-spine]",
        "length_m",
        ("dac-400g reaches 3 m", "30 m long"),
    ),
    "speed the switch lacks": (
        leaf_spine_128,
        lambda s: _bundle(s, "leaf-spine", speed_gbps=800.0),
        "bundles[leaf-spine]",
        "speed_gbps",
        ("qm9700 (leaf) has no 800G ports", "200, 400 Gb/s"),
    ),
    "rail with switch count not a multiple of rails": (
        rail_1k,
        lambda s: _group(s, "leaf", count=30),
        "bundles[servers-leaf]",
        "pattern",
        ("multiple of 8 switches", "leaf has 30"),
    ),
    "rail between two switch groups": (
        leaf_spine_128,
        lambda s: _bundle(s, "leaf-spine", pattern="rail"),
        "bundles[leaf-spine]",
        "pattern",
        ("a rail bundle joins a server group (a) to a switch group (b)",),
    ),
    "rail from the switch side": (
        rail_1k,
        lambda s: _bundle(s, "servers-leaf", a="leaf", b="servers"),
        "bundles[servers-leaf]",
        "pattern",
        ("a rail bundle joins a server group (a)",),
    ),
    "full blocks do not divide": (
        leaf_spine_128,
        lambda s: _bundle(s, "servers-leaf", blocks=3),
        "bundles[servers-leaf]",
        "blocks",
        ("3 blocks do not divide leaf (4 members)",),
    ),
    "full blocks more than side a has": (
        leaf_spine_128,
        lambda s: _bundle(s, "leaf-spine", a="spine", b="leaf", blocks=4),
        "bundles[leaf-spine]",
        "blocks",
        ("4 blocks for spine's 2 members leave some empty",),
    ),
    "striped planes do not divide": (
        leaf_spine_128,
        lambda s: _bundle(s, "leaf-spine", pattern="striped", blocks=3),
        "bundles[leaf-spine]",
        "blocks",
        ("3 planes do not divide spine (2 members)",),
    ),
    "one-to-one unequal": (
        leaf_spine_128,
        lambda s: _bundle(s, "leaf-spine", pattern="one-to-one"),
        "bundles[leaf-spine]",
        "pattern",
        ("one-to-one needs equal members", "leaf has 4", "spine has 2"),
    ),
    "one-to-one servers to one switch": (
        single_16,
        lambda s: _bundle(s, "servers-leaf", pattern="one-to-one"),
        "bundles[servers-leaf]",
        "pattern",
        ("servers has 16", "leaf has 1"),
    ),
    # fabric, routing, workload
    "unknown technology": (
        leaf_spine_128,
        lambda s: setattr(s.fabric, "technology", "ethernet"),
        "fabric",
        "technology",
        ("unknown technology 'ethernet'", "infiniband, roce"),
    ),
    "negative switch latency": (
        leaf_spine_128,
        lambda s: setattr(s.fabric, "switch_latency_ns", -1.0),
        "fabric",
        "switch_latency_ns",
        ("must not be negative",),
    ),
    "negative NIC latency": (
        leaf_spine_128,
        lambda s: setattr(s.fabric, "nic_latency_ns", -0.5),
        "fabric",
        "nic_latency_ns",
        ("must not be negative",),
    ),
    "header efficiency zero": (
        leaf_spine_128,
        lambda s: setattr(s.fabric, "header_efficiency", 0.0),
        "fabric",
        "header_efficiency",
        ("header_efficiency must be between 0.5 and 1", "not 0"),
    ),
    "header efficiency above one": (
        leaf_spine_128,
        lambda s: setattr(s.fabric, "header_efficiency", 1.5),
        "fabric",
        "header_efficiency",
        ("must be between 0.5 and 1", "not 1.5"),
    ),
    "header efficiency negative": (
        leaf_spine_128,
        lambda s: setattr(s.fabric, "header_efficiency", -0.2),
        "fabric",
        "header_efficiency",
        ("must be between 0.5 and 1",),
    ),
    "compute efficiency denormal": (
        leaf_spine_128,
        lambda s: setattr(s.workload.training, "compute_efficiency", 1e-320),
        "workload.training",
        "compute_efficiency",
        ("between 0.01 and 1",),
    ),
    "header efficiency denormal": (
        leaf_spine_128,
        lambda s: setattr(s.fabric, "header_efficiency", 1e-320),
        "fabric",
        "header_efficiency",
        ("must be between 0.5 and 1",),
    ),
    "mtu too small": (
        leaf_spine_128,
        lambda s: setattr(s.fabric, "mtu_bytes", 255),
        "fabric",
        "mtu_bytes",
        ("mtu_bytes must be at least 256, not 255",),
    ),
    "unknown routing mode": (
        leaf_spine_128,
        lambda s: setattr(s.routing, "mode", "random"),
        "routing",
        "mode",
        ("unknown mode 'random'", "ecmp, adaptive, spray"),
    ),
    "flows per connection zero": (
        leaf_spine_128,
        lambda s: setattr(s.routing, "flows_per_connection", 0),
        "routing",
        "flows_per_connection",
        ("at least 1, not 0",),
    ),
    "unknown hash scope": (
        leaf_spine_128,
        lambda s: setattr(s.routing, "hash_scope", "vendor"),
        "routing",
        "hash_scope",
        ("unknown hash_scope 'vendor'", "switch, tier, model, fabric"),
    ),
    "unknown workload": (
        leaf_spine_128,
        lambda s: setattr(s.workload, "kind", "allreduce"),
        "workload",
        "kind",
        ("unknown workload 'allreduce'", "permutation"),
    ),
    "message size zero": (
        leaf_spine_128,
        lambda s: setattr(s.workload, "message_bytes", 0.0),
        "workload",
        "message_bytes",
        ("message_bytes must be at least one byte",),
    ),
    # failures
    "failure of unknown switch group": (
        leaf_spine_128,
        lambda s: s.failures.switches.append(SwitchFailure("core", 0)),
        "failures.switches[0]",
        "group",
        ("no switch group 'core'",),
    ),
    "failure of a server group as a switch": (
        leaf_spine_128,
        lambda s: s.failures.switches.append(SwitchFailure("servers", 0)),
        "failures.switches[0]",
        "group",
        ("no switch group 'servers'",),
    ),
    "failure index past the group": (
        leaf_spine_128,
        lambda s: s.failures.switches.extend(
            [SwitchFailure("spine", 0), SwitchFailure("spine", 2)]
        ),
        "failures.switches[1]",
        "index",
        ("index 2 outside spine (0..1)",),
    ),
    "failure index negative": (
        leaf_spine_128,
        lambda s: s.failures.switches.append(SwitchFailure("leaf", -1)),
        "failures.switches[0]",
        "index",
        ("index -1 outside leaf (0..3)",),
    ),
    "failure of unknown bundle": (
        leaf_spine_128,
        lambda s: s.failures.links.append(LinkFailure("spine-core", 3)),
        "failures.links[0]",
        "bundle",
        ("no bundle 'spine-core'",),
    ),
    "negative links down": (
        leaf_spine_128,
        lambda s: s.failures.links.append(LinkFailure("leaf-spine", -1)),
        "failures.links[0]",
        "links_down",
        ("links_down must not be negative (-1)",),
    ),
    # the scenario as a whole
    "no server group": (
        leaf_spine_128,
        lambda s: (s.groups.pop(0), s.bundles.pop(0)),
        "groups",
        None,
        ("no server group",),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_broken_scenario_names_the_problem(name: str) -> None:
    build, breaks, where, field, fragments = CASES[name]
    s = build()
    expand(s)  # the starting point is valid
    breaks(s)
    p = assert_problem(problems_of(s), where, field, *fragments)
    assert p.severity == "error"
    location = where if field is None else f"{where}.{field}"
    assert str(p) == f"error: {location}: {p.message}"


def test_speed_only_the_switch_lacks_blames_the_switch_only() -> None:
    s = leaf_spine_128()
    _bundle(s, "servers-leaf", speed_gbps=100.0)  # ConnectX-7 runs 100G, QM9700 does not
    problems = problems_of(s)
    assert_problem(problems, "bundles[servers-leaf]", "speed_gbps", "qm9700 (leaf) has no 100G")
    assert not any("NIC" in p.message for p in problems)
    assert len(problems) == 1


def test_speed_only_the_nic_lacks_blames_the_nic_only() -> None:
    s = single_switch(16, "hgx-h100", "sn5600")  # SN5600 has 800G ports, ConnectX-7 not
    _bundle(s, "servers-leaf", speed_gbps=800.0)
    problems = problems_of(s)
    assert_problem(
        problems,
        "bundles[servers-leaf]",
        "speed_gbps",
        "NIC connectx-7 of servers does not run at 800G",
        "400 Gb/s",
    )
    assert len(problems) == 1


def test_speed_neither_end_supports_reports_both_ends() -> None:
    s = single_16()
    _bundle(s, "servers-leaf", speed_gbps=800.0)
    problems = find(problems_of(s), "bundles[servers-leaf]", "speed_gbps")
    assert len(problems) == 2
    assert any("NIC connectx-7" in p.message for p in problems)
    assert any("qm9700 (leaf) has no 800G" in p.message for p in problems)


def test_bundles_to_a_broken_group_are_not_checked_further() -> None:
    s = leaf_spine_128()
    _group(s, "spine", model="qm9999")
    _bundle(s, "leaf-spine", speed_gbps=100.0)  # would be a speed problem on a real spine
    problems = problems_of(s)
    assert [(p.where, p.field) for p in problems] == [("groups[spine]", "model")]


# --------------------------------------------------------------------------------------------
# Port, NIC and reachability checks of the expansion.


def test_switch_wired_to_more_ports_than_it_has() -> None:
    s = leaf_spine_1k()  # 32 down + 2 x 16 up: all 64 leaf ports used
    _bundle(s, "leaf-spine", links_per_pair=3)
    problems = problems_of(s)
    leaf = assert_problem(
        problems,
        "groups[leaf]",
        "count",
        "32 of 32 switches are wired to more ports than a qm9700 has",
        "48 at 400G (has 64)",
        "reduce links_per_pair",
    )
    assert "32 at 400G (has 64)" in leaf.message  # the server-facing ports are counted too
    assert_problem(problems, "groups[spine]", "count", "16 of 16 switches", "96 at 400G (has 64)")


def test_ports_are_counted_across_speeds() -> None:
    # 128 x 200G ports on a QM9700: one leaf of 16 NICs at 200G and 112 more 200G links fit
    # (128 ports); one more does not.
    def build(extra: int) -> Scenario:
        s = single_16()
        _bundle(s, "servers-leaf", speed_gbps=200.0)
        s.groups.append(DeviceGroup("spine", "switch", "qm9700", 1, "spine"))
        s.bundles.append(LinkBundle("up", "leaf", "spine", "full", extra, speed_gbps=200.0))
        return s

    expand(build(112))
    p = assert_problem(problems_of(build(113)), "groups[leaf]", "count", "1 of 1 switches")
    assert "16 at 200G (has 128), 113 at 200G (has 128)" in p.message


def test_nic_over_cabled_by_links_per_pair() -> None:
    s = single_16()
    _bundle(s, "servers-leaf", links_per_pair=2)
    problems = problems_of(s)
    assert_problem(
        problems,
        "groups[servers]",
        "count",
        "NICs of servers carry 2 cables but a connectx-7 has 1 port(s)",
    )
    assert not find(problems, "groups[leaf]", "count")  # 32 of 64 switch ports: fine


def test_nic_over_cabled_by_two_bundles() -> None:
    s = single_16()
    s.groups.append(DeviceGroup("leaf2", "switch", "qm9700", 1, "leaf"))
    s.bundles.append(LinkBundle("servers-leaf2", "servers", "leaf2", "full"))
    assert_problem(
        problems_of(s), "groups[servers]", "count", "carry 2 cables", "two bundles on the same NICs"
    )


def test_failing_every_spine_cuts_off_gpus() -> None:
    s = leaf_spine_128()  # servers spread over 4 leaves, 32 GPUs each
    s.failures.switches = [SwitchFailure("spine", 0), SwitchFailure("spine", 1)]
    problems = problems_of(s)
    assert len(problems) == 1
    assert_problem(
        problems, "topology", None, "96 of 128 GPUs", "in servers", "have no path", "failures"
    )


def test_deleting_the_spine_bundle_cuts_off_gpus() -> None:
    s = rail_1k()  # 4 scalable units joined only through the spines
    s.bundles = [b for b in s.bundles if b.id != "leaf-spine"]
    assert_problem(problems_of(s), "topology", None, "768 of 1024 GPUs", "no path")


def test_failing_every_cable_of_a_bundle_cuts_off_gpus() -> None:
    s = leaf_spine_128()
    s.failures.links = [LinkFailure("leaf-spine", 10_000)]  # more than installed: all down
    assert_problem(problems_of(s), "topology", None, "96 of 128 GPUs")


def test_unconnected_server_group_is_cut_off() -> None:
    s = leaf_spine_128()
    _add_second_server_group(s)
    assert_problem(problems_of(s), "topology", None, "128 of 256 GPUs", "in servers2")


# --------------------------------------------------------------------------------------------
# Several problems are reported together.


def test_several_problems_are_all_reported() -> None:
    s = leaf_spine_128()
    _group(s, "spine", count=0)
    _bundle(s, "servers-leaf", pattern="mesh")
    s.fabric.header_efficiency = 2.0
    s.routing.mode = "random"
    s.workload.message_bytes = -1.0
    s.failures.links.append(LinkFailure("nope", 1))
    problems = problems_of(s)
    expected = {
        ("groups[spine]", "count"),
        ("bundles[servers-leaf]", "pattern"),
        ("fabric", "header_efficiency"),
        ("routing", "mode"),
        ("workload", "message_bytes"),
        ("failures.links[0]", "bundle"),
    }
    assert expected <= {(p.where, p.field) for p in problems}
    with pytest.raises(ScenarioError) as info:
        expand(s)
    text = str(info.value)
    assert len(text.splitlines()) == len(info.value.problems)
    for where, field in expected:
        assert f"error: {where}.{field}: " in text


def test_port_problems_on_several_groups_are_reported_together() -> None:
    s = leaf_spine_128()
    _bundle(s, "servers-leaf", links_per_pair=2)  # NICs over-cabled, leaves over-wired
    problems = problems_of(s)
    assert find(problems, "groups[servers]", "count")
    assert find(problems, "groups[leaf]", "count")


def test_expand_does_not_modify_the_scenario() -> None:
    s = rail_1k()
    before = copy.deepcopy(s)
    expand(s)
    broken = copy.deepcopy(s)
    broken.routing.mode = "random"
    broken_before = copy.deepcopy(broken)
    problems_of(broken)
    assert s == before
    assert broken == broken_before


@pytest.mark.parametrize(
    ("path", "value"),
    [("routing.seed", "-1"), ("workload.seed", "-1"), ("routing.seed", str(2**64 - 1))],
)
def test_seeds_out_of_range_are_problems_not_crashes(path, value):
    scenario = apply_override(load_preset("rail-only-h100-1k"), path, value)
    with pytest.raises(ScenarioError) as info:
        expand(scenario)
    assert any(p.field == "seed" and p.where == path.split(".")[0] for p in info.value.problems)


def test_a_lone_server_without_cables_evaluates_with_no_network_traffic():
    scenario = Scenario(groups=[DeviceGroup("s", "server", "dgx-h100", 1, "server")])
    report = evaluate(scenario)
    assert report.topology.gpus == 8
    assert report.permutation.connections == 0


@pytest.mark.parametrize(
    "make,path,value,field,fragment",
    [
        (single_16, "transport.pfc", "true", "pfc", "RoCE setting"),
        (single_16, "transport.ecn_kmin_bytes", "1e5", "ecn_kmin_bytes", "RoCE setting"),
        (
            lambda: single_switch(16, "dgx-h100", "sn5600"),
            "transport.ib_cc",
            "on",
            "ib_cc",
            "RoCE uses",
        ),
        (single_16, "transport.model", "perfect", "model", "mechanistic, ideal"),
        (single_16, "transport.port_buffer_bytes", "100", "port_buffer_bytes", "4 KiB"),
        (single_16, "transport.dcqcn_profile", "dcqcn-x", "dcqcn_profile", "dcqcn-nvidia"),
    ],
)
def test_transport_settings_that_cannot_hold_are_refused(make, path, value, field, fragment):
    problems = problems_of(apply_override(make(), path, value))
    assert_problem(problems, "transport", field, fragment)


def test_ecn_thresholds_must_rise():
    s = single_switch(16, "dgx-h100", "sn5600")
    s = apply_override(
        apply_override(s, "transport.ecn_kmin_bytes", "2e5"), "transport.ecn_kmax_bytes", "1e5"
    )
    assert_problem(problems_of(s), "transport", "ecn_kmax_bytes", "above ecn_kmin_bytes")


def test_a_kmin_above_the_switch_catalog_kmax_is_refused():
    # Kmax left at the SN5600's catalog 1.5 MB, Kmin set to 2 MB.
    s = apply_override(single_switch(16, "dgx-h100", "sn5600"), "transport.ecn_kmin_bytes", "2e6")
    assert_problem(problems_of(s), "transport", "ecn_kmin_bytes", "sn5600's catalog value")
