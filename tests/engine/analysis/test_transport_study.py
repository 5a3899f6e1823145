"""The transport study through the door: what physics says of an N:1 incast, a victim behind
a back-pressured uplink, and the other workloads, on small fabrics.

The closed forms are those of `tests/validation/test_transport.py` (docs/transport.md): an
N:1 incast gives each sender C/N with the receiver's link full; a flow sharing a paused (or
credit-starved) uplink with one of the incast's senders gets about C/N instead of the
ideal C(1 - 1/N), a slowdown of about N - 1; a receiving NIC drains at line rate, so the
port into it queues and is never paused, while PFC pauses every sender's port 1 - 1/N of
the time in the steady state.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from engine.analysis import (
    Progress,
    RunCancelledError,
    TransportStudy,
    TransportWorkload,
    transport_study,
)
from engine.model.errors import ScenarioError
from engine.model.scenario import Failures, LinkFailure, Scenario, TransportSettings
from engine.topology.generators import leaf_spine, single_switch

N = 16
LINE_BPS = 400e9 / 8  # the DGX H100's 400G NICs, before header overhead
MIB = 2**20


def incast(
    victim: bool = False, senders: int = N, bytes_per_flow: float = 8 * MIB, **more
) -> TransportWorkload:
    """An N:1 incast, 8 MiB per sender unless told."""
    return TransportWorkload(senders=senders, bytes_per_flow=bytes_per_flow, victim=victim, **more)


def window_mean(
    time_s: tuple[float, ...], values: tuple[float, ...], t0: float, t1: float
) -> float:
    """Time-weighted mean of a series between t0 and t1 (row i covers time[i-1]..time[i])."""
    end = np.asarray(time_s)
    start = np.concatenate([[0.0], end[:-1]])
    overlap = np.clip(np.minimum(end, t1) - np.maximum(start, t0), 0.0, None)
    return float(overlap @ np.asarray(values) / overlap.sum())


@pytest.fixture(scope="module")
def ib() -> Scenario:
    """32 DGX H100 on a 2-tier InfiniBand NDR leaf-spine (credits, IB CC off)."""
    return leaf_spine(256, "dgx-h100", "qm9700")


@pytest.fixture(scope="module")
def roce() -> Scenario:
    """The same on Spectrum-4 (RoCE: PFC, ECN and DCQCN by default)."""
    return leaf_spine(256, "dgx-h100", "sn5600")


@pytest.fixture(scope="module")
def roce_pfc(roce: Scenario) -> Scenario:
    """RoCE with PFC only: nothing slows the senders but the pauses."""
    return replace(roce, transport=TransportSettings(dcqcn=False))


@pytest.fixture(scope="module")
def ib_incast(ib: Scenario) -> TransportStudy:
    return transport_study(ib, incast())


@pytest.fixture(scope="module")
def pfc_incast(roce_pfc: Scenario) -> TransportStudy:
    return transport_study(roce_pfc, incast())


def assert_fair_share(study: TransportStudy, tolerance: float = 0.02) -> None:
    """Every flow within `tolerance` of the max-min ideal, which is C/N of the receiver."""
    ideal = study.ideal_throughput_Bps
    assert ideal.min == pytest.approx(ideal.max)
    assert 0.95 * LINE_BPS / N <= ideal.mean <= LINE_BPS / N
    assert study.throughput_Bps.min >= (1 - tolerance) * ideal.mean
    assert study.throughput_Bps.max <= (1 + tolerance) * ideal.mean
    receiver = study.hottest[0]
    assert receiver.link.startswith("leaf[0] -> gpu[0] ")
    assert receiver.utilization > 0.99


def test_ib_incast_shares_the_line_without_loss(ib_incast: TransportStudy) -> None:
    s = ib_incast
    assert (s.technology, s.mechanisms) == ("infiniband", ("credit",))
    assert (s.flows, s.classes) == (N, N)
    assert_fair_share(s)
    assert s.finished and s.efficiency >= 0.95
    assert s.makespan_s >= s.ideal_makespan_s * (1 - 1e-9)
    assert s.lossless and s.dropped_bytes == 0.0
    assert all(p.headroom_ok and p.dropped_bytes == 0.0 for p in s.hottest)
    # credits hold the senders back without a pause frame
    assert set(s.bundle_pause_fraction) == {"servers-leaf", "leaf-spine"}
    assert max(s.bundle_pause_fraction.values()) == 0.0
    assert s.victim_slowdown is None


def test_pfc_incast_pauses_the_senders_not_the_receiver(pfc_incast: TransportStudy) -> None:
    s = pfc_incast
    assert (s.technology, s.mechanisms) == ("roce", ("pfc",))
    assert_fair_share(s)
    assert s.finished and s.efficiency >= 0.95
    assert s.lossless and s.dropped_bytes == 0.0
    receiver = s.hottest[0]
    assert receiver.pause_fraction == 0.0 and receiver.max_queue_bytes > 0.0
    assert s.bundle_pause_fraction["servers-leaf"] > 0.5
    assert s.bundle_pause_fraction["leaf-spine"] > 0.5


def test_pfc_pause_share_is_one_minus_one_over_n() -> None:
    """On one switch every sender's port is paused 1 - 1/N of the steady state."""
    senders = 15
    scenario = replace(
        single_switch(128, "dgx-h100", "sn5600"), transport=TransportSettings(dcqcn=False)
    )
    s = transport_study(scenario, incast(senders=senders))
    senders_ports = [p for p in s.port_series if p.link.startswith("gpu[")]
    assert len(senders_ports) == 3  # the receiver's port first, then three senders'
    for port in senders_ports:
        paused = window_mean(
            port.time_s, port.paused_share, 0.25 * s.makespan_s, 0.75 * s.makespan_s
        )
        assert paused == pytest.approx(1 - 1 / senders, abs=0.05)
        assert max(port.queue_bytes) == 0.0  # a NIC injects what the link takes: no queue


def test_roce_incast_with_dcqcn_runs_lossless(roce: Scenario) -> None:
    s = transport_study(roce, incast())
    assert s.mechanisms == ("pfc", "dcqcn")
    assert s.finished and s.lossless and s.dropped_bytes == 0.0
    assert 0.5 < s.efficiency <= 1.0 + 1e-9
    assert s.bundle_mark_fraction["servers-leaf"] > 0.0  # the receiver's port marks


def test_victim_behind_back_pressure_gets_about_one_nth(
    ib: Scenario, roce: Scenario, roce_pfc: Scenario
) -> None:
    """Credits and PFC both hold the shared uplink back: the victim gets about C/N."""
    slowdown = {}
    for name, scenario in (("ib", ib), ("pfc", roce_pfc), ("dcqcn", roce)):
        s = transport_study(scenario, incast(victim=True))
        assert s.flows == N + 1 and s.finished and s.lossless
        assert any("victim: gpu 8 -> " in note for note in s.notes)
        labels = [f.label for f in s.flow_series]
        assert sum(label.endswith("(victim)") for label in labels) == 1
        slowdown[name] = s.victim_slowdown
    assert 0.75 * (N - 1) <= slowdown["ib"] <= 1.1 * (N - 1)
    assert 0.75 * (N - 1) <= slowdown["pfc"] <= 1.1 * (N - 1)
    assert slowdown["pfc"] > 1.5
    # DCQCN cuts the senders before PFC pauses the uplink: the victim fares better
    assert slowdown["dcqcn"] < slowdown["pfc"]


def test_series_are_aligned_and_short(pfc_incast: TransportStudy) -> None:
    s = pfc_incast
    assert s.steps > 400 and len(s.port_series) == 4 and len(s.flow_series) == 4
    times = s.port_series[0].time_s
    assert 10 < len(times) <= 400 and list(times) == sorted(times)
    assert times[-1] == pytest.approx(s.makespan_s, rel=1e-6)
    for series in s.port_series:
        assert series.time_s == times
        assert len(series.queue_bytes) == len(series.paused_share) == len(times)
    for series in s.flow_series:
        assert series.time_s == times and len(series.rate_Bps) == len(times)
        assert series.label.startswith("gpu ") and series.label.endswith(" -> gpu 0")
    assert [p.index for p in s.port_series] == [p.index for p in s.hottest[:4]]


def test_horizon_stops_the_run_and_says_so(ib: Scenario) -> None:
    s = transport_study(ib, incast(bytes_per_flow=64 * MIB, horizon_s=2e-4))
    assert not s.finished
    assert s.makespan_s > 2e-4  # projected at the pace so far
    assert s.efficiency == pytest.approx(1.0, abs=0.1)
    assert any("unfinished" in note and "horizon" in note for note in s.notes)
    json.loads(s.to_json())  # no infinity in the JSON form


def test_fifo_bins_widened_by_the_memory_bound_are_said(
    roce_pfc: Scenario, pfc_incast: TransportStudy, monkeypatch
) -> None:
    from engine.transport import fifo_shape

    assert not any("bins" in note for note in pfc_incast.notes)
    monkeypatch.setattr(fifo_shape, "MAX_FIFO_BYTES", 16 * 1024)
    s = transport_study(roce_pfc, incast(bytes_per_flow=MIB))
    assert any("us bins" in note and "memory bound" in note for note in s.notes)


@pytest.mark.parametrize(
    "workload",
    [
        TransportWorkload("permutation", bytes_per_flow=4 * MIB, seed=3),
        TransportWorkload("all-to-all", ranks=32, bytes_per_flow=MIB),
        TransportWorkload("collective", ranks=64, bytes_per_flow=4 * MIB),
        TransportWorkload("collective", algorithm="hierarchical", ranks=32, bytes_per_flow=4 * MIB),
    ],
    ids=["permutation", "all-to-all", "ring", "hierarchical"],
)
def test_other_workloads_run_and_round_trip(workload: TransportWorkload) -> None:
    s = transport_study(single_switch(64, "dgx-h100", "qm9700"), workload)
    assert s.flows > 0 and s.finished and s.lossless
    assert 0.9 <= s.efficiency <= 1.0 + 1e-9
    assert TransportStudy.from_dict(s.to_dict()) == s
    assert TransportStudy.from_dict(json.loads(s.to_json())) == s
    if workload.kind == "all-to-all":
        assert s.flows == 32 * 24  # pairs on other servers only
    if workload.algorithm == "hierarchical":
        assert any("stage 2 of 3" in note for note in s.notes)  # stage 1 is NVLink only


def test_progress_reports_and_cancels() -> None:
    scenario = single_switch(64, "dgx-h100", "qm9700")
    seen: list[str] = []
    transport_study(
        scenario, incast(senders=4), progress=Progress(lambda f, stage: seen.append(stage))
    )
    assert seen[0] == "expand" and "transport" in seen and seen[-1] == "done"
    stop = Progress(should_stop=lambda: True)
    with pytest.raises(RunCancelledError):
        transport_study(scenario, incast(senders=4), progress=stop)


SMALL = single_switch(64, "dgx-h100", "qm9700")  # 8 servers


def hashed(scenario: Scenario) -> Scenario:
    """`scenario` with per-flow ECMP hashing."""
    return replace(scenario, routing=replace(scenario.routing, mode="ecmp"))


def sprayed_with_a_cable_down() -> Scenario:
    """Spraying over a leaf-spine fabric with one cable down: uneven sets."""
    scenario = leaf_spine(256, "dgx-h100", "qm9700")
    return replace(
        scenario,
        routing=replace(scenario.routing, mode="spray"),
        failures=Failures(links=[LinkFailure("leaf-spine", 1)]),
    )


def test_a_sprayed_permutation_is_studied_per_port() -> None:
    scenario = leaf_spine(256, "dgx-h100", "qm9700")
    sprayed = replace(scenario, routing=replace(scenario.routing, mode="spray"))
    study = transport_study(sprayed, TransportWorkload("permutation"))
    assert study.efficiency == pytest.approx(1.0, abs=1e-3)  # no collisions to queue behind
    assert study.flows > 0 and study.classes <= study.flows


@pytest.mark.parametrize(
    ("scenario", "workload", "where", "name"),
    [
        (SMALL, TransportWorkload("storm"), "transport", "kind"),
        (SMALL, TransportWorkload(senders=0), "transport", "senders"),
        (SMALL, TransportWorkload(senders=8), "transport", "senders"),
        (SMALL, TransportWorkload(bytes_per_flow=0.0), "transport", "bytes_per_flow"),
        (SMALL, TransportWorkload(bytes_per_flow=float("nan")), "transport", "bytes_per_flow"),
        (SMALL, TransportWorkload("permutation", victim=True), "transport", "victim"),
        (SMALL, TransportWorkload(horizon_s=-1.0), "transport", "horizon_s"),
        (SMALL, TransportWorkload("collective", op="gather"), "transport", "op"),
        (SMALL, TransportWorkload("collective", algorithm="auto"), "transport", "algorithm"),
        (SMALL, TransportWorkload("collective", algorithm="sharp"), "transport", "algorithm"),
        (SMALL, TransportWorkload("collective", ranks=8), "transport", "ranks"),
        (SMALL, TransportWorkload("all-to-all", ranks=1), "transport", "ranks"),
        (SMALL, TransportWorkload("all-to-all", ranks=65), "transport", "ranks"),
        (
            hashed(leaf_spine(256, "dgx-h100", "qm9700")),  # too many pairs, and not by kinds
            TransportWorkload("all-to-all"),
            "transport",
            "ranks",
        ),
        (
            single_switch(16, "dgx-h100", "qm9700"),
            TransportWorkload(senders=1, victim=True),
            "transport",
            "victim",
        ),
        (
            sprayed_with_a_cable_down(),
            TransportWorkload("permutation"),
            "routing",
            "mode",
        ),
        (
            replace(SMALL, fabric=replace(SMALL.fabric, technology="token-ring")),
            TransportWorkload(),
            "fabric",
            "technology",
        ),
    ],
)
def test_bad_workloads_name_the_field(
    scenario: Scenario, workload: TransportWorkload, where: str, name: str
) -> None:
    with pytest.raises(ScenarioError) as caught:
        transport_study(scenario, workload)
    problem = caught.value.problems[0]
    assert (problem.where, problem.field) == (where, name), problem
    assert problem.message
