"""The named groups of arrays and scalars the transport kernels take, one per concern.

Numba passes named tuples into and between nopython functions as typed structures, so the
step kernel reads ``tables.links.capacity`` instead of taking thirty positional arrays. The
static description (`Tables`) is built once per run; the evolving state (`State`), the
window statistics (`Stats`) and the time series (`SampleAcc`, `SampleRows`) are arrays the
kernels write in place. Units are SI: seconds, bytes, bytes per second.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

CONTROL_NONE, CONTROL_CREDIT, CONTROL_PFC = 0, 1, 2


class LinkTable(NamedTuple):
    """Per link: capacity; what the far end holds for traffic arriving over it (`buffer`)
    and how it pushes back (`control`: none, credits with their round trip, or PFC with
    XOFF/XON and the reaction delay in steps); the buffer of the port its egress queue sits
    in (`egress_buffer`, the drop limit of a lossy fabric) and the marking of that queue
    (ECN RED thresholds, IB CC FECN threshold, ``inf`` when off); whether two or more
    classes share that queue (`shared`: a queue of one class serves it alike in any order,
    and keeps no FIFO bins)."""

    capacity: np.ndarray
    buffer: np.ndarray
    egress_buffer: np.ndarray
    control: np.ndarray
    credit_rtt: np.ndarray
    xoff: np.ndarray
    xon: np.ndarray
    react_steps: np.ndarray
    kmin: np.ndarray
    kmax: np.ndarray
    pmax: np.ndarray
    fecn_threshold: np.ndarray
    shared: np.ndarray


class EntryTable(NamedTuple):
    """Per (class, hop): its link, the link before it (-1 on the first hop), its class and
    whether it is the class's last hop. A class's entries are contiguous, in path order."""

    link: np.ndarray
    prev: np.ndarray
    cls: np.ndarray
    last: np.ndarray


class ClassTable(NamedTuple):
    """Per class: its entries ``ptr[c]:ptr[c+1]``, flows, total bytes, start time, the line
    rate of one flow (its NIC link), the feedback delay in steps, and under go-back-N the
    packets in flight behind a lost one (one round trip at line rate, less the lost one),
    which the receiver throws away and the sender sends again (0: selective repeat), and
    DCQCN's dead time after a cut (`engine.transport.tables.cnp_dead_time`)."""

    ptr: np.ndarray
    multiplicity: np.ndarray
    size: np.ndarray
    start: np.ndarray
    line_rate: np.ndarray
    feedback_steps: np.ndarray
    gbn_packets: np.ndarray
    cnp_tau: np.ndarray


class Injection(NamedTuple):
    """The sending NIC links and the classes each one carries (``cls[ptr[g]:ptr[g+1]]``)."""

    ptr: np.ndarray
    link: np.ndarray
    cls: np.ndarray


class GateTable(NamedTuple):
    """Per class the classes ``cls[ptr[c]:ptr[c+1]]`` whose delivered bytes pace it (its
    pipeline neighbours) and the lead `slack` in bytes it may take over them
    (`engine.transport.gates`)."""

    ptr: np.ndarray
    cls: np.ndarray
    slack: np.ndarray


class BlockTable(NamedTuple):
    """Where each block of the network starts and ends (``x[b]:x[b+1]``) among the
    classes, entries, links and sending NIC links (`Injection`). A block holds whole parts
    (classes and links that meet no other block's), so the kernel may take a window's
    steps one block at a time, each small enough to stay in the core's cache
    (`engine.transport.blocks`); a small network is one block."""

    classes: np.ndarray
    entries: np.ndarray
    links: np.ndarray
    groups: np.ndarray


class Knobs(NamedTuple):
    """The step, the packet size, whether the fabric is lossy (drops at a full egress
    queue rather than at a full lossless ingress), which rate controls run, every how
    many steps they move (their dynamics are microseconds slow; the queues' are not), and
    the FIFO egress rings' steps per bin and bins per ring (`engine.transport.fifo_shape`;
    no bins: the even service)."""

    dt: float
    pkt_bytes: float
    lossy: bool
    dcqcn_on: bool
    ibcc_on: bool
    cc_every: int
    fifo_bin_steps: int = 1
    fifo_width: int = 0


class DcqcnKnobs(NamedTuple):
    """DCQCN fluid-model constants: decrease interval tau, alpha interval tau', gain g,
    increase timer T, byte counter B (``inf``: none), fast-recovery steps F, additive and
    hyper increase, minimum rate, the largest cut per event, and when a cut also sets the
    target rate to the current one (1.0: at every cut; 0.0: only after an increase event,
    of the byte counter, or of the timer too when `clamp_after_timer` is 1.0)."""

    tau: float
    tau_alpha: float
    gain: float
    timer: float
    byte_counter: float
    fast_steps: float
    rate_ai: float
    rate_hai: float
    rate_min: float
    max_cut: float
    clamp_always: float
    clamp_after_timer: float
    per_cut: float = 1.0


class IbccKnobs(NamedTuple):
    """IB CC constants: the share of packets marked while congested, the CCTI step per BECN,
    its floor and ceiling, the timer per unit decrease, and the CCT shape
    (multiplier(i) = floor(coef x i^2) >> shift)."""

    mark_fraction: float
    ccti_increase: float
    ccti_min: float
    ccti_limit: float
    ccti_timer: float
    cct_coef: float
    cct_shift: int


class Tables(NamedTuple):
    """Everything static of one run."""

    links: LinkTable
    entries: EntryTable
    classes: ClassTable
    inject: Injection
    gates: GateTable
    blocks: BlockTable
    knobs: Knobs
    dcqcn: DcqcnKnobs
    ibcc: IbccKnobs


class LinkState(NamedTuple):
    """Per link: bytes held at its far end (`occupancy`; `backlog` without those that
    arrived in the last step, which stand for the switch pipeline), the far end's pause
    request now (`xoff`) and its history (`pfc_ring`, one row per step, read with the
    reaction delay), the ECN marking probability and the IB CC congestion flag of its
    egress queue, and its standing queue after the last step; its egress queue's FIFO
    ring (`engine.transport.fifo`): the absolute indices of its oldest and newest bins,
    the time (in bins) the newest opened at, and its column of `fifo_bytes` (bytes per
    bin, one row per bin of the ring, none when queues serve evenly; a column per queue
    the run's first network shares, -1 for the others, kept whole when the run is cut to
    its live part)."""

    occupancy: np.ndarray
    backlog: np.ndarray
    xoff: np.ndarray
    pfc_ring: np.ndarray
    mark_prob: np.ndarray
    congested: np.ndarray
    queue: np.ndarray
    fifo_bytes: np.ndarray
    fifo_head: np.ndarray
    fifo_tail: np.ndarray
    fifo_stamp: np.ndarray
    fifo_at: np.ndarray


class ClassState(NamedTuple):
    """Per entry its queued bytes and drain deadline (``inf`` while bytes still arrive); per
    class the bytes still to send, delivered (new bytes only), the share of its bytes lost along
    its path in the last step, the DCQCN rates R_C, R_T and alpha of one
    flow, the IB CC index, the finish time (``inf`` until done), the feedback histories
    (mark probability along the path, per-flow send rate, BECN flag, per-flow rate out of the
    network: the packets that leave the queues and carry their marks), one row per step, and
    the delivered bytes at the last step (for the rate out); the DCQCN reaction point's
    clocks and counters, one column per class (`engine.transport.reaction`); the FIFO
    bins (`engine.transport.fifo`: per entry in a shared queue a column, its bytes in each
    bin of its link's ring, kept whole as `LinkState.fifo_bytes` is), each entry's column
    (`fifo_at`, -1: none) and the newest bin it has bytes in."""

    queue: np.ndarray
    deadline: np.ndarray
    remaining: np.ndarray
    delivered: np.ndarray
    loss_p: np.ndarray
    rc: np.ndarray
    rt: np.ndarray
    alpha: np.ndarray
    ccti: np.ndarray
    finish: np.ndarray
    fb_mark: np.ndarray
    fb_rate: np.ndarray
    fb_becn: np.ndarray
    fb_out: np.ndarray
    last_out: np.ndarray
    rp: np.ndarray
    fifo: np.ndarray
    fifo_last: np.ndarray
    fifo_at: np.ndarray


class Clock(NamedTuple):
    """Steps taken (indexes the histories; jumps do not advance it) and simulated time."""

    step: np.ndarray
    time: np.ndarray


class State(NamedTuple):
    """Everything that evolves."""

    links: LinkState
    classes: ClassState
    clock: Clock


class Stats(NamedTuple):
    """Sums over one window: per class bytes delivered, sent and dropped; per link the time
    integral of the standing queue, time paused, bytes marked, served and dropped, XOFF
    events, and the largest standing queue and far-end occupancy seen."""

    delivered: np.ndarray
    sent: np.ndarray
    dropped_class: np.ndarray
    queue_time: np.ndarray
    paused_time: np.ndarray
    marked: np.ndarray
    served: np.ndarray
    dropped: np.ndarray
    xoff_events: np.ndarray
    max_queue: np.ndarray
    max_occupancy: np.ndarray


class SampleAcc(NamedTuple):
    """What the current sample interval has gathered so far (kept across windows)."""

    delivered: np.ndarray
    paused: np.ndarray
    steps: np.ndarray


class SampleRows(NamedTuple):
    """Time series rows written by one window: end time of each sample interval, class
    delivery rate over it, standing queue at its end, and fraction of it each link was
    paused; `count` rows are filled."""

    time: np.ndarray
    class_rate: np.ndarray
    queue: np.ndarray
    paused: np.ndarray
    count: np.ndarray
