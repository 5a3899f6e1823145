"""Link errors of a scenario: post-FEC packet loss per link and what it costs a training step.

The front ends' one call for "what does a link bit error ratio of b cost this job?". The
loss a link leaves after its RS(544,514) FEC (`engine.reliability.link_errors`) becomes the
transport's own per-link loss (``fabric.packet_loss_rate``, combined with any loss the
scenario already sets) and the training step runs again under each recovery the engine models
(`engine.collectives.timing`: ``link-retransmit`` divides the link capacity by ``1 + p``,
``go-back-n`` resends the window in flight and waits a round trip, ``selective-repeat``
resends the packet and waits a round trip), so nothing here re-models recovery. The
fabric's own recovery is the link retry where the technology has one (InfiniBand), else the
scenario's ``loss_recovery``. At a BER of 0 the loss is exactly 0 and every step time is the
old one. The FEC's latency per link (catalog ``fec_latency_ns``) is priced apart
(`with_fec_latency`: on every link of every path, the step run again), since vendors quote
switch latencies port to port and may count their FEC in them already.
"""

from __future__ import annotations

from dataclasses import replace

from engine.analysis.results import LinkErrorsResult, RecoveryCost
from engine.catalog.devices import Catalog
from engine.collectives.schedules import bus_factor
from engine.model.catalogs import scenario_catalog
from engine.model.errors import Problem, ScenarioError
from engine.model.scenario import Scenario
from engine.reliability.link_errors import (
    codeword_loss_probability,
    combined_loss,
    expected_losses,
    link_profile,
    packet_loss_per_link,
)
from engine.topology.expand import expand
from engine.training.step import train_step

RECOVERIES = ("link-retransmit", "go-back-n", "selective-repeat")
ON_NVLINK = ("tp",)  # tensor parallelism stays inside the NVLink domain (the layout's rule)


def _step_s(scenario: Scenario, catalog: Catalog, loss: float, recovery: str) -> float:
    """The training step time with `loss` per link recovered by `recovery`."""
    fabric_settings = replace(scenario.fabric, packet_loss_rate=loss, loss_recovery=recovery)
    variant = replace(scenario, fabric=fabric_settings)
    fabric = expand(variant, catalog)
    return float(train_step(fabric, variant.workload.training, catalog)["step_s"])


def with_fec_latency(scenario: Scenario, catalog: Catalog, fec_latency_ns: float) -> Scenario:
    """`scenario` with the FEC's decode latency on every link of a path: each switch's
    forwarding latency gains `fec_latency_ns` (the link into it) and each NIC's half of it
    at either end (the link into the receiving NIC; a path counts the NIC latency twice,
    sending and receiving), as group overrides, or on the fabric-wide latencies where the
    scenario sets those. A leaf-spine path of 4 links gains exactly 4 x `fec_latency_ns`."""
    f = scenario.fabric
    groups = []
    for g in scenario.groups:
        overrides = dict(g.overrides)
        if g.kind == "switch":
            base = catalog.get(g.model, "switch").value("latency_ns", g.overrides)
            overrides["latency_ns"] = float(base) + fec_latency_ns
        elif g.kind == "server":
            nic = catalog.get(catalog.get(g.model, "server").value("nic"), "nic")
            base = nic.value("latency_ns", g.overrides)
            overrides["latency_ns"] = float(base) + fec_latency_ns / 2
        groups.append(replace(g, overrides=overrides))
    settings = replace(
        f,
        switch_latency_ns=None
        if f.switch_latency_ns is None
        else f.switch_latency_ns + fec_latency_ns,
        nic_latency_ns=None if f.nic_latency_ns is None else f.nic_latency_ns + fec_latency_ns / 2,
    )
    return replace(scenario, groups=groups, fabric=settings)


def network_packets_per_step(step: dict, packet_payload_bytes: float) -> float:
    """Packets the whole job sends over the network in one step: for each collective of
    the step outside the NVLink domain, ``count x busbw factor x bytes`` per GPU (what each
    rank puts on the wire, nccl-tests' definition), times the job's GPUs, over the payload
    of a packet. An estimate: a collective NCCL runs inside a server is counted too."""
    per_gpu = sum(
        float(c["count_per_step"]) * bus_factor(str(c["op"]), int(c["ranks"])) * float(c["bytes"])
        for c in step.get("collectives", ())
        if c["kind"] not in ON_NVLINK and int(c["ranks"]) > 1
    )
    return per_gpu * float(step["gpus"]) / packet_payload_bytes


def _links_per_path(scenario: Scenario) -> int:
    """Links a packet crosses on the longest path: up and down through every switch tier."""
    tiers = {g.tier for g in scenario.groups if g.kind == "switch"}
    return 2 * max(1, len(tiers))


def link_errors(
    scenario: Scenario,
    catalog: Catalog,
    pre_fec_ber: float | None = None,
) -> LinkErrorsResult:
    """Post-FEC loss per link at `pre_fec_ber` (default: the catalog's operating BER) and
    the time it costs the scenario's training step under each recovery.

    Raises `ScenarioError` naming ``pre_fec_ber`` for a ratio outside [0, 1).
    """
    catalog = scenario_catalog(scenario, catalog)
    technology = scenario.fabric.technology
    profile = link_profile(catalog, technology)
    ber = profile.operating_pre_fec_ber if pre_fec_ber is None else float(pre_fec_ber)
    if not 0.0 <= ber < 1.0:
        raise ScenarioError(
            Problem("link errors", f"a bit error ratio lies in [0, 1), not {ber:g}", "pre_fec_ber")
        )
    tech = catalog.technology(technology)
    mtu = float(scenario.fabric.mtu_bytes or tech.value("mtu_bytes"))
    packet_bytes = mtu + float(tech.value("header_bytes_per_packet"))
    p_link = packet_loss_per_link(ber, packet_bytes, profile.code)
    set_loss = float(
        scenario.fabric.packet_loss_rate
        if scenario.fabric.packet_loss_rate is not None
        else tech.value("packet_loss_rate")
    )
    own = scenario.fabric.loss_recovery or str(tech.value("loss_recovery"))
    recovery = "link-retransmit" if profile.link_retry else own
    fabric = expand(scenario, catalog)
    step = train_step(fabric, scenario.workload.training, catalog)
    base = float(step["step_s"])
    loss = combined_loss(set_loss, p_link)
    costs = []
    for way in (recovery, *[r for r in RECOVERIES if r != recovery]):
        if loss == 0.0 or (loss == set_loss and way == own):
            step_s = base  # nothing lost, or nothing changed: the step already run
        else:
            step_s = _step_s(scenario, catalog, loss, way)
        costs.append(RecoveryCost(recovery=way, step_s=step_s, cost_s=step_s - base))
    links = _links_per_path(scenario)
    fec_scenario = with_fec_latency(scenario, catalog, profile.fec_latency_ns)
    fec_step = train_step(expand(fec_scenario, catalog), fec_scenario.workload.training, catalog)
    packets = network_packets_per_step(step, mtu)
    notes = [
        f"{profile.code.name}: up to {profile.code.correctable_symbols} wrong "
        f"{profile.code.symbol_bits}-bit symbols corrected per codeword; independent bit "
        "errors assumed (bursts lose more)",
        "link-level retry: "
        + (
            "the link resends from its replay buffer"
            if profile.link_retry
            else "none on IEEE 802.3 Ethernet; the NIC resends end to end"
        ),
    ]
    if ber > profile.pre_fec_ber_limit:
        notes.append(f"BER {ber:g} is above the {profile.pre_fec_ber_limit:g} the PMDs allow")
    return LinkErrorsResult(
        technology=technology,
        scenario=scenario.metadata.name,
        fec=profile.code.name,
        pre_fec_ber=ber,
        pre_fec_ber_limit=profile.pre_fec_ber_limit,
        within_limit=ber <= profile.pre_fec_ber_limit,
        codeword_loss=codeword_loss_probability(ber, profile.code),
        packet_bytes=packet_bytes,
        packet_loss_per_link=p_link,
        links_per_path=links,
        fec_latency_ns=profile.fec_latency_ns,
        fec_path_latency_ns=links * profile.fec_latency_ns,
        fec_path_latency_added_s=float(fec_step["path_latency_s"]) - float(step["path_latency_s"]),
        fec_latency_cost_s=float(fec_step["step_s"]) - base,
        link_retry=profile.link_retry,
        network_packets_per_step=packets,
        expected_losses_per_step=expected_losses(packets, links, p_link),
        base_step_s=base,
        recovery=recovery,
        step_s=costs[0].step_s,
        cost_s=costs[0].cost_s,
        costs=tuple(costs),
        notes=tuple(notes),
    )
