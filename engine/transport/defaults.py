"""The transport model's defaults, read from the catalog with their sources.

InfiniBand and RoCE differ here only by what the catalog says of them: the lossless
mechanism (`lossless`: credits or PFC), the congestion control their NICs run, the switch
buffers and ECN settings, and the parameter sets of DCQCN (``dcqcn-paper``, ``dcqcn-nvidia``)
and IB CC. Every value keeps its provenance in the catalog (`Figure.provenance`).
"""

from __future__ import annotations

from engine.catalog.devices import Catalog, Device
from engine.transport.params import (
    DcqcnParams,
    EcnParams,
    IbCcParams,
    Mechanisms,
    PfcParams,
    TransportConfig,
)
from engine.transport.readings import DcqcnReadings, alpha_gain, byte_counter_bytes, cnp_pacing

MBPS = 1e6 / 8  # bytes/s per Mb/s
ECN_OFF = EcnParams(0.0, 0.0, 0.0)


def dcqcn_params(
    catalog: Catalog, profile: str = "dcqcn-nvidia", readings: DcqcnReadings | None = None
) -> DcqcnParams:
    """DCQCN parameters of a catalog profile (``dcqcn-paper``, ``dcqcn-nvidia``, ...), with
    the firmware registers no document settles read as `readings` says (the profile's own
    default readings where it says nothing; `engine.transport.readings`)."""
    p = catalog.technology(profile)
    readings = readings or DcqcnReadings()
    return DcqcnParams(
        cnp_interval_s=float(p.value("cnp_interval_us")) * 1e-6,
        alpha_update_s=float(p.value("alpha_update_us")) * 1e-6,
        alpha_gain=alpha_gain(p, readings),
        initial_alpha=float(p.value("initial_alpha")),
        rate_increase_timer_s=float(p.value("rate_increase_timer_us")) * 1e-6,
        byte_counter_bytes=byte_counter_bytes(p, readings),
        cnp_pacing=cnp_pacing(p, readings),
        fast_recovery_steps=int(p.value("fast_recovery_steps")),
        additive_increase_Bps=float(p.value("additive_increase_mbps")) * MBPS,
        hyper_increase_Bps=float(p.value("hyper_increase_mbps")) * MBPS,
        min_rate_Bps=float(p.value("min_rate_mbps")) * MBPS,
        max_decrease_fraction=float(p.value("max_decrease_fraction")),
        rate_decrease_period_s=(
            float(p.value("rate_decrease_period_us")) * 1e-6
            if p.has("rate_decrease_period_us")
            else 0.0
        ),
        clamp_target_always=bool(p.value("clamp_target_rate")),
        clamp_target_after_timer=bool(p.value("clamp_target_rate_after_timer")),
    )


def ib_cc_params(catalog: Catalog) -> IbCcParams:
    """InfiniBand congestion control parameters of the ``infiniband`` profile."""
    ib = catalog.technology("infiniband")
    cct = ib.value("ib_cc_cct")
    return IbCcParams(
        marking_rate=int(ib.value("ib_cc_marking_rate")),
        threshold_fraction=float(ib.value("ib_cc_threshold_fraction")),
        ccti_increase=float(ib.value("ib_cc_ccti_increase")),
        ccti_min=float(ib.value("ib_cc_ccti_min")),
        ccti_limit=float(ib.value("ib_cc_ccti_limit")),
        ccti_timer_s=float(ib.value("ib_cc_ccti_timer_us")) * 1e-6,
        cct_numerator=float(cct["numerator"]),
        cct_index_scale=float(cct["index_scale"]),
        cct_scale=float(cct["scale"]),
        cct_shift=int(cct["shift"]),
    )


def pfc_params(catalog: Catalog) -> PfcParams:
    """PFC response bytes per speed and the resume offset of the ``roce`` profile."""
    roce = catalog.technology("roce")
    table = roce.value("pfc_response_bytes_by_gbps")
    return PfcParams(
        response_bytes_by_gbps={float(k): float(v) for k, v in table.items()},
        xon_offset_bytes=float(roce.value("pfc_xon_offset_bytes")),
    )


def ecn_params(device: Device) -> EcnParams:
    """ECN thresholds of a switch or a DCQCN profile that lists them; off when it has none."""
    if not device.has("ecn_kmin_bytes"):
        return ECN_OFF
    return EcnParams(
        kmin_bytes=float(device.value("ecn_kmin_bytes")),
        kmax_bytes=float(device.value("ecn_kmax_bytes")),
        pmax=float(device.value("ecn_pmax")),
    )


def switch_port_buffer_bytes(catalog: Catalog, switch_id: str, port_gbps: float) -> float:
    """Bytes of buffer one ingress port of a switch holds for its lossless traffic.

    A per-port figure when the catalog has one (InfiniBand: per data VL); otherwise the
    shared buffer split evenly over the ports the switch has at `port_gbps` (a static
    partition: dynamic thresholds that lend one busy port more are not modelled yet).
    """
    switch = catalog.get(switch_id, "switch")
    if switch.has("port_buffer_bytes"):
        return float(switch.value("port_buffer_bytes"))
    if not switch.has("buffer_mb"):
        raise KeyError(f"switch {switch_id!r} has neither port_buffer_bytes nor buffer_mb")
    ports = catalog.switch_port_modes(switch_id).get(float(port_gbps))
    if not ports:
        raise KeyError(f"switch {switch_id!r} has no {port_gbps:g}G port mode")
    return float(switch.value("buffer_mb")) * 1e6 / ports


def transport_config(
    catalog: Catalog,
    technology: str,
    switch_id: str,
    dcqcn_profile: str | None = None,
    readings: DcqcnReadings | None = None,
) -> TransportConfig:
    """The default transport configuration of a technology (``infiniband`` or ``roce``).

    InfiniBand: credit flow control, IB CC as the catalog says (off, OpenSM's default).
    RoCE: PFC, and DCQCN with the ECN thresholds of `switch_id` when the technology's
    congestion control is DCQCN. `dcqcn_profile` defaults to the NIC firmware profile,
    `readings` to the profile's own readings of its registers.
    """
    tech = catalog.technology(technology)
    lossless = str(tech.value("lossless"))
    is_roce = lossless == "pfc"
    dcqcn_on = (
        is_roce and tech.has("congestion_control") and tech.value("congestion_control") == "dcqcn"
    )
    ib = catalog.technology("infiniband")
    return TransportConfig(
        mechanisms=Mechanisms(
            lossless=lossless,
            dcqcn=bool(dcqcn_on),
            ib_cc=(not is_roce) and bool(ib.value("ib_cc_enabled")),
        ),
        dcqcn=dcqcn_params(catalog, dcqcn_profile or "dcqcn-nvidia", readings),
        ib_cc=ib_cc_params(catalog),
        ecn=ecn_params(catalog.get(switch_id, "switch")) if is_roce else ECN_OFF,
        pfc=pfc_params(catalog),
        mtu_bytes=float(tech.value("mtu_bytes")),
        credit_overhead_s=float(ib.value("credit_loop_overhead_ns")) * 1e-9,
    )
