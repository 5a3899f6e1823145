"""From a network and a configuration to the kernels' tables and initial state.

Here the mechanisms become per-link numbers: which far ends push back and how (credits,
PFC, or nothing: a lossy port drops), the PFC thresholds, headroom and reaction delay in
steps, the credit round trips, the ECN and IB CC thresholds of each egress queue; and per
class its entries, line rate and feedback delay in steps. `LinkDerived` keeps the
human-facing numbers (headroom needed, whether each port is lossless) for the result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.transport.blocks import block_table
from engine.transport.copies import ranks_in_parts
from engine.transport.fifo_shape import fifo_columns, fifo_shape
from engine.transport.gates import no_gates
from engine.transport.headroom import (
    credit_round_trip_s,
    pfc_headroom_bytes,
    pfc_is_lossless,
    pfc_thresholds,
)
from engine.transport.network import FlowClasses, TransportNetwork
from engine.transport.params import DcqcnParams, IbCcParams, TransportConfig
from engine.transport.reaction import new_reaction_state
from engine.transport.structures import (
    CONTROL_CREDIT,
    CONTROL_NONE,
    CONTROL_PFC,
    ClassState,
    ClassTable,
    Clock,
    DcqcnKnobs,
    EntryTable,
    GateTable,
    IbccKnobs,
    Injection,
    Knobs,
    LinkState,
    LinkTable,
    SampleAcc,
    SampleRows,
    State,
    Stats,
    Tables,
)

CONTROL_OF = {"credit": CONTROL_CREDIT, "pfc": CONTROL_PFC, "none": CONTROL_NONE}


@dataclass(frozen=True)
class LinkDerived:
    """Per link: its flow control, PFC thresholds, the headroom it needs, whether its buffer
    holds that headroom (always true for credits and for links into a NIC), and the credit
    round trip."""

    control: np.ndarray
    xoff_bytes: np.ndarray
    xon_bytes: np.ndarray
    headroom_bytes: np.ndarray
    lossless: np.ndarray
    credit_rtt_s: np.ndarray


def derive_links(network: TransportNetwork, config: TransportConfig) -> LinkDerived:
    """The per-link flow-control numbers of `network` under `config`.

    In a hybrid fabric (`LinkSpec.ethernet` set) each link's flow control follows its
    segment: credits on InfiniBand, the configured Ethernet mechanism (PFC unless turned
    off; PFC when the senders' technology is InfiniBand) on Ethernet."""
    links = network.links
    mode = config.mechanisms.lossless
    code = CONTROL_OF[mode]
    if links.ethernet is not None:
        on_ethernet = CONTROL_OF["pfc" if mode == "credit" else mode]
        code = np.where(links.ethernet, on_ethernet, CONTROL_CREDIT)
    control = np.where(links.into_switch, code, CONTROL_NONE).astype(np.int64)
    # PFC acts per port: a link standing for k equal ports pauses when each of them would.
    k = 1.0 if links.ports is None else links.ports.astype(np.float64)
    headroom = pfc_headroom_bytes(
        links.capacity_Bps / k, links.propagation_s, links.speed_gbps, config.mtu_bytes, config.pfc
    )
    xoff, xon = pfc_thresholds(links.buffer_bytes / k, headroom, config.mtu_bytes, config.pfc)
    headroom, xoff, xon = headroom * k, xoff * k, xon * k
    pfc_ok = pfc_is_lossless(links.buffer_bytes, xoff, headroom)
    lossless = np.where(control == CONTROL_PFC, pfc_ok, control == CONTROL_CREDIT)
    lossless |= ~links.into_switch
    return LinkDerived(
        control=control,
        xoff_bytes=np.where(control == CONTROL_PFC, xoff, np.inf),
        xon_bytes=np.where(control == CONTROL_PFC, xon, np.inf),
        headroom_bytes=np.where(control == CONTROL_PFC, headroom, 0.0),
        lossless=lossless,
        credit_rtt_s=credit_round_trip_s(links.propagation_s, config.credit_overhead_s),
    )


def _entries(network: TransportNetwork) -> EntryTable:
    classes = network.classes
    ptr, path = classes.ptr, classes.links
    n_entries = path.shape[0]
    cls = np.repeat(np.arange(classes.n_classes, dtype=np.int64), np.diff(ptr))
    prev = np.full(n_entries, -1, dtype=np.int64)
    later = np.ones(n_entries, dtype=bool)
    later[ptr[:-1]] = False
    prev[later] = path[np.flatnonzero(later) - 1]
    last = np.zeros(n_entries, dtype=bool)
    last[ptr[1:] - 1] = True
    return EntryTable(path.astype(np.int64), prev, cls, last)


def _injection(network: TransportNetwork) -> Injection:
    classes = network.classes
    first = classes.links[classes.ptr[:-1]]
    order = np.argsort(first, kind="stable").astype(np.int64)
    links, counts = np.unique(first[order], return_counts=True)
    ptr = np.zeros(links.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    return Injection(ptr, links.astype(np.int64), order)


def _gates(network: TransportNetwork) -> GateTable:
    """The pipeline gates of the network's classes (none when it has none)."""
    g = network.gates if network.gates is not None else no_gates(network.classes.n_classes)
    return GateTable(
        ptr=g.ptr.astype(np.int64),
        cls=g.cls.astype(np.int64),
        slack=g.slack_bytes.astype(np.float64),
    )


def cnp_dead_time(classes: FlowClasses, d: DcqcnParams) -> np.ndarray:
    """Per class DCQCN's dead time after a cut: the decrease period, or the interval
    between two CNPs the flow's receiving port sends it, whichever is longer.

    With CNPs paced per flow (the paper; the default) that interval is the CNP interval.
    Paced per port (NVIDIA's text: "from the port", `engine.transport.readings`), a port
    sends one CNP per interval to whichever flow's marked packet came, so the flows it
    receives (a class's last link is its receiving NIC's) share them: each hears one per
    interval times their number, the fluid reading of a shared budget."""
    n = classes.n_classes
    if d.cnp_pacing != "port" or n == 0:
        return np.full(n, float(d.decrease_interval_s))
    last = classes.links[classes.ptr[1:] - 1].astype(np.int64)
    sharing = np.bincount(last, weights=classes.multiplicity.astype(np.float64))[last]
    per_flow = float(d.cnp_interval_s) * sharing
    return np.maximum(per_flow, float(d.decrease_interval_s))


def gbn_packets(
    line_Bps: np.ndarray,
    round_trip_s: np.ndarray,
    config: TransportConfig,
) -> np.ndarray:
    """Packets a go-back-N sender has in flight behind a lost one (one round trip at line
    rate, less the lost packet); 0 under selective repeat, which resends only the loss."""
    if config.loss_recovery != "go-back-n":
        return np.zeros(np.shape(line_Bps))
    return np.maximum(np.asarray(line_Bps) * np.asarray(round_trip_s) / config.mtu_bytes - 1, 0)


def dcqcn_knobs(d: DcqcnParams) -> DcqcnKnobs:
    """The kernel's DCQCN constants from the parameters."""
    return DcqcnKnobs(
        tau=float(d.decrease_interval_s),
        tau_alpha=float(d.alpha_update_s),
        gain=float(d.alpha_gain),
        timer=float(d.rate_increase_timer_s),
        byte_counter=float(d.byte_counter_bytes),
        fast_steps=float(d.fast_recovery_steps),
        rate_ai=float(d.additive_increase_Bps),
        rate_hai=float(d.hyper_increase_Bps),
        rate_min=float(d.min_rate_Bps),
        max_cut=float(d.max_decrease_fraction),
        clamp_always=1.0 if d.clamp_target_always else 0.0,
        clamp_after_timer=1.0 if d.clamp_target_after_timer else 0.0,
        per_cut=0.0 if d.published_mean_field else 1.0,
    )


def ibcc_knobs(ib: IbCcParams) -> IbccKnobs:
    """The kernel's IB CC constants from the parameters."""
    return IbccKnobs(
        mark_fraction=1.0 / (ib.marking_rate + 1.0),
        ccti_increase=float(ib.ccti_increase),
        ccti_min=float(ib.ccti_min),
        ccti_limit=float(ib.ccti_limit),
        ccti_timer=float(ib.ccti_timer_s),
        cct_coef=float(ib.cct_numerator / (ib.cct_index_scale**2 * ib.cct_scale)),
        cct_shift=int(ib.cct_shift),
    )


def _shared_queues(network: TransportNetwork) -> np.ndarray:
    """Per link: whether two or more classes queue at its egress (past their first hop)."""
    ptr, links = network.classes.ptr, network.classes.links
    queued = np.ones(links.shape[0], dtype=bool)
    queued[ptr[:-1]] = False
    return np.bincount(links[queued], minlength=network.links.n_links) > 1


def build_tables(network: TransportNetwork, config: TransportConfig) -> tuple[Tables, LinkDerived]:
    """The static kernel tables of a run, and the derived per-link numbers."""
    links = network.links
    classes = network.classes
    dt = float(config.dt_s)
    derived = derive_links(network, config)
    react = np.maximum(np.floor(derived.headroom_bytes / links.capacity_Bps / dt), 1).astype(
        np.int64
    )
    ecn_on = config.mechanisms.dcqcn
    ib = config.ib_cc
    fecn = np.where(
        links.from_switch
        & config.mechanisms.ib_cc
        & (True if links.ethernet is None else ~links.ethernet),
        ib.threshold_fraction * links.egress_buffer_bytes,
        np.inf,
    )
    link_table = LinkTable(
        capacity=links.capacity_Bps.astype(np.float64),
        buffer=links.buffer_bytes.astype(np.float64),
        egress_buffer=links.egress_buffer_bytes.astype(np.float64),
        control=derived.control,
        credit_rtt=derived.credit_rtt_s,
        xoff=derived.xoff_bytes,
        xon=derived.xon_bytes,
        react_steps=react,
        kmin=links.ecn_kmin_bytes.astype(np.float64),
        kmax=links.ecn_kmax_bytes.astype(np.float64),
        pmax=links.ecn_pmax * float(ecn_on),
        fecn_threshold=fecn.astype(np.float64),
        shared=_shared_queues(network),
    )
    first_links = classes.links[classes.ptr[:-1]]
    class_table = ClassTable(
        ptr=classes.ptr.astype(np.int64),
        multiplicity=classes.multiplicity.astype(np.float64),
        size=classes.bytes.astype(np.float64),
        start=classes.start_s.astype(np.float64),
        line_rate=links.flow_capacity_Bps()[first_links].astype(np.float64),
        # Only DCQCN and IB CC act on what they saw a feedback delay ago; without them the
        # delay is read by nothing, and zero says so (a run's key then ignores it).
        feedback_steps=(
            np.maximum(np.round(classes.feedback_delay_s / dt), 0).astype(np.int64)
            if config.mechanisms.dcqcn or config.mechanisms.ib_cc
            else np.zeros(classes.n_classes, dtype=np.int64)
        ),
        gbn_packets=gbn_packets(
            links.flow_capacity_Bps()[first_links], classes.feedback_delay_s, config
        ).astype(np.float64),
        cnp_tau=cnp_dead_time(classes, config.dcqcn),
    )
    injection, gates, entries = _injection(network), _gates(network), _entries(network)
    lossy = config.mechanisms.lossless == "none"
    fifo_bin_steps, fifo_width = fifo_shape(link_table, entries, lossy, dt, config)
    tables = Tables(
        links=link_table,
        entries=entries,
        classes=class_table,
        inject=injection,
        gates=gates,
        blocks=block_table(
            class_table.ptr, classes.links.astype(np.int64), links.n_links, gates, injection.link
        ),
        knobs=Knobs(
            dt,
            float(config.mtu_bytes),
            lossy,
            bool(config.mechanisms.dcqcn),
            bool(config.mechanisms.ib_cc),
            max(1, round(config.cc_interval_s / dt)),
            fifo_bin_steps,
            fifo_width,
        ),
        dcqcn=dcqcn_knobs(config.dcqcn),
        ibcc=ibcc_knobs(config.ib_cc),
    )
    return tables, derived


# The histories a run keeps (PFC pause requests per link, feedback per class, one row per
# step of delay) may use this much memory; a delay past it is no fabric's (seconds of path).
MAX_HISTORY_BYTES = 512 * 2**20


class HistoryTooLongError(ValueError):
    """The fabric's delays need more history than a transport run may keep."""


def history_bytes(tables: Tables) -> tuple[int, int, int]:
    """Bytes of the delay histories of a run of `tables`: PFC requests (one bool per link
    per step of reaction delay) and feedback (four floats per class per step of feedback
    delay); with both widths."""
    n_links = tables.links.capacity.shape[0]
    n_classes = tables.classes.size.shape[0]
    ring_width = int(tables.links.react_steps.max(initial=1)) + 1
    # at least one control interval: the reaction point reads the send rate over it
    fb_width = max(int(tables.classes.feedback_steps.max(initial=0)) + 1, tables.knobs.cc_every)
    return ring_width * n_links + 32 * fb_width * n_classes, ring_width, fb_width


def initial_state(tables: Tables, config: TransportConfig) -> State:
    """Empty queues, every flow at line rate (DCQCN's start), IB CC index at its floor.

    Raises `HistoryTooLongError` when the delay histories would pass `MAX_HISTORY_BYTES`
    (a path latency of a second, say), before allocating them."""
    n_links = tables.links.capacity.shape[0]
    n_entries = tables.entries.link.shape[0]
    cl = tables.classes
    n_classes = cl.size.shape[0]
    needed, ring_width, fb_width = history_bytes(tables)
    if needed > MAX_HISTORY_BYTES:
        delay_s = max(ring_width, fb_width) * tables.knobs.dt
        raise HistoryTooLongError(
            f"delays of up to {delay_s * 1e6:,.0f} us at a {tables.knobs.dt * 1e9:g} ns step "
            f"need {needed / 2**30:,.1f} GiB of pause and feedback history (at most "
            f"{MAX_HISTORY_BYTES / 2**20:,.0f} MiB): a latency this long is no fabric's"
        )
    line = cl.line_rate
    width = tables.knobs.fifo_width
    entry_at, link_at = fifo_columns(tables.links, tables.entries)
    return State(
        links=LinkState(
            occupancy=np.zeros(n_links),
            backlog=np.zeros(n_links),
            xoff=np.zeros(n_links, dtype=np.bool_),
            pfc_ring=np.zeros((ring_width, n_links), dtype=np.bool_),
            mark_prob=np.zeros(n_links),
            congested=np.zeros(n_links, dtype=np.bool_),
            queue=np.zeros(n_links),
            fifo_bytes=np.zeros((width, int(np.count_nonzero(link_at >= 0)))),
            fifo_head=np.zeros(n_links, dtype=np.int64),
            fifo_tail=np.full(n_links, -1, dtype=np.int64),
            fifo_stamp=np.full(n_links, -1, dtype=np.int64),
            fifo_at=link_at,
        ),
        classes=ClassState(
            queue=np.zeros(n_entries),
            deadline=np.full(n_entries, math.inf),
            remaining=cl.size.copy(),
            delivered=np.zeros(n_classes),
            loss_p=np.zeros(n_classes),
            rc=line.copy(),
            rt=line.copy(),
            alpha=np.full(n_classes, float(config.dcqcn.initial_alpha)),
            ccti=np.full(n_classes, float(config.ib_cc.ccti_min)),
            finish=np.full(n_classes, math.inf),
            fb_mark=np.zeros((fb_width, n_classes)),
            fb_rate=np.zeros((fb_width, n_classes)),
            fb_becn=np.zeros((fb_width, n_classes)),
            fb_out=np.zeros((fb_width, n_classes)),
            last_out=np.zeros(n_classes),
            # the reaction point's draws follow a class's place in its part; only it reads them
            rp=new_reaction_state(
                ranks_in_parts(tables)
                if tables.knobs.dcqcn_on and tables.dcqcn.per_cut > 0.0
                else n_classes
            ),
            fifo=np.zeros((width, int(np.count_nonzero(entry_at >= 0)))),
            fifo_last=np.full(n_entries, -1, dtype=np.int64),
            fifo_at=entry_at,
        ),
        clock=Clock(np.zeros(1, dtype=np.int64), np.zeros(1)),
    )


def new_stats(n_links: int, n_classes: int) -> Stats:
    """Zeroed window statistics."""
    return Stats(*(np.zeros(n_classes) for _ in range(3)), *(np.zeros(n_links) for _ in range(8)))


def new_sample_acc(n_links: int, n_classes: int) -> SampleAcc:
    """An empty sample accumulator."""
    return SampleAcc(np.zeros(n_classes), np.zeros(n_links), np.zeros(1, dtype=np.int64))


def new_rows(n_rows: int, n_links: int, n_classes: int) -> SampleRows:
    """Room for `n_rows` time-series rows."""
    return SampleRows(
        np.zeros(n_rows),
        np.zeros((n_rows, n_classes)),
        np.zeros((n_rows, n_links)),
        np.zeros((n_rows, n_links)),
        np.zeros(1, dtype=np.int64),
    )
