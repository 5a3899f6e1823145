"""Small standard networks for the transport model: incast, a victim of PFC, a long cable.

Each builder returns a `TransportNetwork` whose switches are described by a `SwitchSpec`
(port buffer, ECN thresholds, latency; `switch_spec` reads one from the catalog). Links are
named ``a->b``. The feedback delay of a class defaults to one round trip of its path (twice
the sum of its links' propagation and far-end latency), the time a mark takes to come back
to its sender as a CNP or BECN.
"""

# Names carry their unit as the engine spells it (Bps: bytes per second).
# ruff: noqa: N802

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.catalog.devices import Catalog
from engine.transport.defaults import ecn_params, switch_port_buffer_bytes
from engine.transport.network import TransportNetwork, group_into_classes, make_links
from engine.transport.params import EcnParams

FIBER_NS_PER_M = 4.9  # catalog: fiber_propagation_ns_per_m (n/c of silica)


@dataclass(frozen=True)
class SwitchSpec:
    """What a builder needs of a switch: per-port buffer, ECN thresholds, latency."""

    port_buffer_bytes: float
    ecn: EcnParams
    latency_s: float


@dataclass(frozen=True)
class LinkShape:
    """What the builders share: port speed, cable length, header efficiency, NIC latency."""

    gbps: float = 400.0
    cable_m: float = 3.0
    ns_per_m: float = FIBER_NS_PER_M
    header_efficiency: float = 1.0
    nic_latency_s: float = 0.0

    @property
    def capacity_Bps(self) -> float:
        """Payload bytes per second of one link."""
        return self.gbps * 1e9 / 8 * self.header_efficiency


def switch_spec(catalog: Catalog, switch_id: str, port_gbps: float) -> SwitchSpec:
    """The catalog's buffer share, ECN thresholds and latency of a switch at `port_gbps`."""
    device = catalog.get(switch_id, "switch")
    return SwitchSpec(
        port_buffer_bytes=switch_port_buffer_bytes(catalog, switch_id, port_gbps),
        ecn=ecn_params(device),
        latency_s=float(device.value("latency_ns")) * 1e-9,
    )


@dataclass
class _Builder:
    """Collects links (host or switch ends) and flows, then makes the network."""

    shape: LinkShape
    switch: SwitchSpec
    rows: list[dict] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)

    def link(self, a: str, b: str, length_m: float | None = None) -> int:
        """Add the directed link a->b (names starting with 's' are switches)."""
        into, out = b.startswith("s"), a.startswith("s")
        prop = (self.shape.cable_m if length_m is None else length_m) * self.shape.ns_per_m * 1e-9
        self.rows.append(
            {
                "prop": prop,
                "latency": prop + (self.switch.latency_s if into else self.shape.nic_latency_s),
                "into": into,
                "out": out,
            }
        )
        name = f"{a}->{b}"
        self.index[name] = len(self.names)
        self.names.append(name)
        return self.index[name]

    def network(
        self,
        paths: list[list[int]],
        nbytes: list[float],
        starts: list[float],
        feedback_delay_s: float | None,
    ) -> TransportNetwork:
        """The network of the links so far and one flow per path."""
        n = len(self.rows)
        s = self.shape
        links = make_links(
            capacity_Bps=np.full(n, s.capacity_Bps),
            propagation_s=[r["prop"] for r in self.rows],
            latency_s=[r["latency"] for r in self.rows],
            speed_gbps=np.full(n, s.gbps),
            into_switch=[r["into"] for r in self.rows],
            from_switch=[r["out"] for r in self.rows],
            buffer_bytes=np.full(n, self.switch.port_buffer_bytes),
            egress_buffer_bytes=np.full(n, self.switch.port_buffer_bytes),
            ecn=[self.switch.ecn] * n,
        )
        ptr = np.zeros(len(paths) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in paths], out=ptr[1:])
        flat = np.array([x for p in paths for x in p], dtype=np.int64)
        if feedback_delay_s is None:
            fb = np.array([2.0 * sum(self.rows[x]["latency"] for x in p) for p in paths])
        else:
            fb = np.full(len(paths), float(feedback_delay_s))
        classes, of_flow = group_into_classes(
            ptr, flat, np.array(nbytes, dtype=np.float64), np.array(starts, dtype=np.float64), fb
        )
        return TransportNetwork(links, classes, of_flow, tuple(self.names))


def incast(
    n_senders: int,
    switch: SwitchSpec,
    bytes_per_flow: float,
    shape: LinkShape | None = None,
    flows_per_sender: int = 1,
    feedback_delay_s: float | None = None,
    start_s: list[float] | None = None,
) -> TransportNetwork:
    """N:1 incast on one switch: hosts h0..h(N-1) each send to host r through switch s0.

    `flows_per_sender` flows leave each host (queue pairs); equal ones merge into one class.
    `start_s` gives each sender's start time (all at 0 by default).
    """
    b = _Builder(shape or LinkShape(), switch)
    down = None
    paths, starts = [], []
    for i in range(n_senders):
        up = b.link(f"h{i}", "s0")
        if down is None:
            down = b.link("s0", "r")
        for _ in range(flows_per_sender):
            paths.append([up, down])
            starts.append(0.0 if start_s is None else float(start_s[i]))
    return b.network(paths, [bytes_per_flow] * len(paths), starts, feedback_delay_s)


def victim_incast(
    n_senders: int,
    switch: SwitchSpec,
    incast_bytes: float,
    victim_bytes: float,
    shape: LinkShape | None = None,
    feedback_delay_s: float | None = None,
) -> TransportNetwork:
    """An N:1 incast whose first sender shares an upstream port with a victim flow.

    Host h0 (incast) and host v (victim) hang on switch s1, whose uplink s1->s2 reaches
    switch s2; r (the incast receiver), w (the victim's receiver, idle otherwise) and the
    other incast senders h1..h(N-1) hang on s2. Classes: 0 = h0->r, 1 = v->w (the victim),
    2.. = hi->r. Under PFC the congested s2->r port pauses s1->s2, which stops the victim too.
    """
    b = _Builder(shape or LinkShape(), switch)
    h0 = b.link("h0", "s1")
    v = b.link("v", "s1")
    uplink = b.link("s1", "s2")
    to_r = b.link("s2", "r")
    to_w = b.link("s2", "w")
    paths = [[h0, uplink, to_r], [v, uplink, to_w]]
    for i in range(1, n_senders):
        paths.append([b.link(f"h{i}", "s2"), to_r])
    nbytes = [incast_bytes, victim_bytes] + [incast_bytes] * (n_senders - 1)
    return b.network(paths, nbytes, [0.0] * len(paths), feedback_delay_s)


def long_cable(
    length_m: float,
    switch: SwitchSpec,
    nbytes: float,
    shape: LinkShape | None = None,
    feedback_delay_s: float | None = None,
) -> TransportNetwork:
    """One flow a -> s1 -> (a `length_m` cable) -> s2 -> b: the credit-limited long link."""
    b = _Builder(shape or LinkShape(), switch)
    path = [b.link("a", "s1"), b.link("s1", "s2", length_m=length_m), b.link("s2", "b")]
    return b.network([path], [nbytes], [0.0], feedback_delay_s)
