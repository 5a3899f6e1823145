"""What the transport model runs on: links with their buffers, and flow classes over them.

A *flow class* is a set of flows that cross the very same links, start together and carry the
same bytes: they see the same queues and marks and get the same rate, so the model keeps one
state for all of them and a multiplicity. An all-to-all over thousands of GPUs then costs the
number of distinct paths, not the number of flows.

Links are directed. Each link has a capacity, a propagation delay, a one-way latency (delay
plus the device at its far end, for the feedback loops) and, when its far end is a switch,
the buffer that switch port holds for the traffic arriving over it (the ingress share that
credits and PFC account against). A class's first link leaves its sending NIC: the NIC
injects only what the link takes (no queue at the host); every later link has an egress queue
in the switch at its near end, where ECN and IB CC mark.
"""

# Names carry their unit as the engine spells it (Bps: bytes per second).
# ruff: noqa: N815

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.transport.gates import Gates, check_gates
from engine.transport.params import EcnParams


@dataclass(frozen=True)
class LinkSpec:
    """Per directed link (arrays of equal length).

    `buffer_bytes` is the share of the far-end switch's buffer for traffic arriving over the
    link (``inf`` when the far end is a NIC, which drains at line rate);
    `egress_buffer_bytes` the per-port buffer of the near-end switch (``inf`` at a NIC), the
    scale of the IB CC threshold. ECN thresholds belong to the near-end (egress) switch.
    `ethernet` (a hybrid fabric's, else ``None``) says per link whether it is an Ethernet
    segment: its far end pushes back with PFC, not InfiniBand credits, and its egress queue
    marks ECN, not FECN. `ports` (``None``: one each) is the number of equal ports a link
    stands for (the links a sprayed flow splits over evenly, `engine.transport.spray`): its
    capacity, buffers and ECN thresholds are then those ports' sums, and the PFC headroom
    and thresholds are taken per port. `flow_ports` (``None``: all of them) is how many of
    those ports one flow spreads over: a sprayed set's flows use every port, a set of NIC
    links lumped side by side (`engine.transport.lumping`) gives each flow one NIC's worth.
    """

    capacity_Bps: np.ndarray
    propagation_s: np.ndarray
    latency_s: np.ndarray
    speed_gbps: np.ndarray
    into_switch: np.ndarray
    from_switch: np.ndarray
    buffer_bytes: np.ndarray
    egress_buffer_bytes: np.ndarray
    ecn_kmin_bytes: np.ndarray
    ecn_kmax_bytes: np.ndarray
    ecn_pmax: np.ndarray
    ethernet: np.ndarray | None = None
    ports: np.ndarray | None = None
    flow_ports: np.ndarray | None = None

    @property
    def n_links(self) -> int:
        """Number of links."""
        return int(self.capacity_Bps.shape[0])

    def flow_capacity_Bps(self) -> np.ndarray:  # noqa: N802 (the unit as the engine spells it)
        """Per link, the most one flow can take of it (its ports that flow spreads over)."""
        if self.flow_ports is None or self.ports is None:
            return self.capacity_Bps
        return self.capacity_Bps / self.ports * self.flow_ports


@dataclass(frozen=True)
class FlowClasses:
    """Flow classes as CSR paths: class c crosses ``links[ptr[c]:ptr[c+1]]`` in order.

    `bytes` is the class total (all its flows), `multiplicity` the number of flows,
    `feedback_delay_s` the time a mark takes to reach the sender as a rate signal (CNP or
    BECN: about one path round trip).
    """

    ptr: np.ndarray
    links: np.ndarray
    multiplicity: np.ndarray
    bytes: np.ndarray
    start_s: np.ndarray
    feedback_delay_s: np.ndarray

    @property
    def n_classes(self) -> int:
        """Number of classes."""
        return int(self.ptr.shape[0] - 1)

    def path(self, c: int) -> np.ndarray:
        """The links of class `c`, from its sender to its receiver."""
        return self.links[self.ptr[c] : self.ptr[c + 1]]


@dataclass(frozen=True)
class TransportNetwork:
    """Links and the flow classes over them; `flow_class` maps original flows to classes;
    `gates` pace classes that pass each other's data on (None: no class is paced)."""

    links: LinkSpec
    classes: FlowClasses
    flow_class: np.ndarray
    link_names: tuple[str, ...] = ()
    gates: Gates | None = None

    def __post_init__(self) -> None:
        check_paths(self.links, self.classes)
        if self.gates is not None:
            check_gates(self.gates, self.classes.n_classes)


def make_links(
    capacity_Bps: np.ndarray,
    propagation_s: np.ndarray,
    latency_s: np.ndarray,
    speed_gbps: np.ndarray,
    into_switch: np.ndarray,
    from_switch: np.ndarray,
    buffer_bytes: np.ndarray,
    egress_buffer_bytes: np.ndarray,
    ecn: list[EcnParams],
    ethernet: np.ndarray | None = None,
    ports: np.ndarray | None = None,
) -> LinkSpec:
    """A `LinkSpec` from per-link sequences of one port's figures (one `EcnParams` per link,
    off at NIC egress; `ethernet` per link in a hybrid fabric; `ports` per link when a link
    stands for several equal ports, whose sums it then holds)."""
    into = np.asarray(into_switch, dtype=bool)
    out = np.asarray(from_switch, dtype=bool)
    k = 1.0 if ports is None else np.asarray(ports, dtype=np.float64)
    return LinkSpec(
        capacity_Bps=np.asarray(capacity_Bps, dtype=np.float64) * k,
        propagation_s=np.asarray(propagation_s, dtype=np.float64),
        latency_s=np.asarray(latency_s, dtype=np.float64),
        speed_gbps=np.asarray(speed_gbps, dtype=np.float64),
        into_switch=into,
        from_switch=out,
        buffer_bytes=np.where(into, np.asarray(buffer_bytes, dtype=np.float64) * k, np.inf),
        egress_buffer_bytes=np.where(
            out, np.asarray(egress_buffer_bytes, dtype=np.float64) * k, np.inf
        ),
        ecn_kmin_bytes=np.array([e.kmin_bytes for e in ecn]) * out * k,
        ecn_kmax_bytes=np.array([e.kmax_bytes for e in ecn]) * out * k,
        ecn_pmax=np.array([e.pmax for e in ecn]) * out,
        ethernet=None if ethernet is None else np.asarray(ethernet, dtype=bool),
        ports=None if ports is None else np.asarray(ports, dtype=np.int64),
    )


def group_into_classes(
    flow_ptr: np.ndarray,
    flow_links: np.ndarray,
    flow_bytes: np.ndarray,
    start_s: np.ndarray | None = None,
    feedback_delay_s: np.ndarray | None = None,
    keep_apart: np.ndarray | None = None,
) -> tuple[FlowClasses, np.ndarray]:
    """Merge flows with the same path, bytes, start and feedback delay into classes.

    `keep_apart` (an integer per flow) keeps flows of different values in different
    classes: flows paced by different neighbours must not share one pace. Returns the
    classes and, per flow, the index of its class. Classes keep the order in which their
    first flow appears.
    """
    n = int(flow_ptr.shape[0] - 1)
    start = np.zeros(n) if start_s is None else np.asarray(start_s, dtype=np.float64)
    fb = np.zeros(n) if feedback_delay_s is None else np.asarray(feedback_delay_s, dtype=np.float64)
    sizes = np.broadcast_to(np.asarray(flow_bytes, dtype=np.float64), (n,))
    apart = np.zeros(n, dtype=np.int64) if keep_apart is None else np.asarray(keep_apart)
    of_flow, first = _class_of_flows(flow_ptr, flow_links, sizes, start, fb, apart)
    count = np.bincount(of_flow, minlength=len(first)).tolist()
    first_arr = np.array(first, dtype=np.int64)
    lengths = flow_ptr[first_arr + 1] - flow_ptr[first_arr]
    ptr = np.zeros(len(first) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    offsets = np.arange(ptr[-1], dtype=np.int64) - np.repeat(ptr[:-1], lengths)
    links = np.asarray(flow_links, dtype=np.int64)[
        np.repeat(flow_ptr[first_arr], lengths) + offsets
    ]
    mult = np.array(count, dtype=np.float64)
    classes = FlowClasses(
        ptr=ptr,
        links=links,
        multiplicity=mult,
        bytes=sizes[first_arr] * mult,
        start_s=start[first_arr],
        feedback_delay_s=fb[first_arr],
    )
    return classes, of_flow


def _class_of_flows(
    flow_ptr: np.ndarray,
    flow_links: np.ndarray,
    sizes: np.ndarray,
    start: np.ndarray,
    fb: np.ndarray,
    apart: np.ndarray,
) -> tuple[np.ndarray, list[int]]:
    """Per flow its class, classes numbered in order of their first flow; and each class's
    first flow. Flows of one path length are compared as rows (links, then the bits of
    bytes, start and feedback delay, then the keep-apart value), so equal flows meet in
    one sort, not a Python loop."""
    n = int(flow_ptr.shape[0] - 1)
    lengths = np.diff(flow_ptr)
    group_of = np.empty(n, dtype=np.int64)  # per flow: its first flow's index
    for length in np.unique(lengths).tolist():
        flows = np.flatnonzero(lengths == length)
        hops = flow_links[flow_ptr[flows][:, None] + np.arange(length)].astype(np.int64)
        rows = np.ascontiguousarray(
            np.column_stack(
                [hops]
                + [x[flows].astype(np.float64).view(np.int64) for x in (sizes, start, fb)]
                + [apart[flows].astype(np.int64)]
            )
        )
        keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
        _, first_in_group, inverse = np.unique(keys, return_index=True, return_inverse=True)
        group_of[flows] = flows[first_in_group][inverse.reshape(-1)]
    first = np.unique(group_of)  # first flows, in flow order: the classes' order
    of_flow = np.searchsorted(first, group_of)
    return of_flow.astype(np.int64), first.tolist()


def check_paths(links: LinkSpec, classes: FlowClasses) -> None:
    """Refuse paths the model cannot run, naming the class: an empty path, a link out of
    range, or a link that is the first hop of one class (a NIC, no queue) and a later hop
    of another (a switch queue)."""
    n_links = links.n_links
    ptr, path_links = classes.ptr, classes.links
    lengths = np.diff(ptr)
    empty = np.flatnonzero(lengths == 0)
    if empty.size:
        raise ValueError(f"flow class {int(empty[0])} has an empty path")
    outside = np.flatnonzero((path_links < 0) | (path_links >= n_links))
    if outside.size:
        c = int(np.searchsorted(ptr, outside[0], side="right") - 1)
        raise ValueError(f"flow class {c} uses a link outside 0..{n_links - 1}")
    first_hop = np.zeros(n_links, dtype=bool)
    later_hop = np.zeros(n_links, dtype=bool)
    is_first = np.zeros(path_links.shape[0], dtype=bool)
    is_first[ptr[:-1]] = True
    first_hop[path_links[is_first]] = True
    later_hop[path_links[~is_first]] = True
    both = np.flatnonzero(first_hop & later_hop)
    if both.size:
        raise ValueError(
            f"link {int(both[0])} is the first hop of one class and a later hop of another: "
            "a first hop leaves a sending NIC, later hops leave switch queues"
        )
