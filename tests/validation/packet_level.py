"""A packet-level twin of the fluid transport model, to check it against: the same network,
packet by packet.

The fluid model (`engine.transport`) moves bytes as rates in fixed steps. This simulator
moves MTU-sized packets, one at a time at each link's rate, through FIFO egress ports,
event by event, held back by the same mechanisms with the same numbers
(`engine.transport.tables.derive_links`): InfiniBand credits for the far end's buffer
share, returned a credit round trip after a packet leaves that buffer, or PFC pauses that
reach the upstream port a reaction time (headroom over rate) after its ingress crosses XOFF
and lift after it falls to XON. A NIC serves its flows in turn, a packet each. There is no
congestion control and no loss: it is the check that the fluid model's FIFO sharing and
back-pressure give the throughput packets give, not a second model of DCQCN. A flow may
have several paths (per-packet spraying): each packet takes one of them at random, as a
switch spraying at random would (a fixed rotation would march every sender's packets onto
the same uplink at once).

Small on purpose (plain Python, a heap of events), so it can be read whole and trusted; it
runs networks of tens of flows and a few MB each in seconds.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from dataclasses import dataclass

import numpy as np

from engine.transport.network import TransportNetwork
from engine.transport.params import TransportConfig
from engine.transport.structures import CONTROL_CREDIT, CONTROL_PFC
from engine.transport.tables import derive_links

TX_DONE, ARRIVE, CREDIT, PAUSE = range(4)


@dataclass
class PacketRun:
    """Per flow (each class's flows in class order): bytes and finish time; per class the
    latest finish of its flows."""

    flow_class: np.ndarray
    flow_bytes: np.ndarray
    flow_finish_s: np.ndarray
    class_finish_s: np.ndarray


class _Link:
    """One directed link: its egress queue, whether it is sending, paused, its credits and
    the bytes that came over it and still sit in the far-end switch."""

    def __init__(self, capacity: float, propagation: float) -> None:
        self.capacity = capacity
        self.propagation = propagation
        self.queue: deque[tuple[int, int, int, float]] = deque()  # (flow, path, hop, bytes)
        self.busy = False
        self.paused = False
        self.pause_asked = False
        self.credits = np.inf
        self.held = 0.0
        self.flows: list[int] = []  # a NIC link: the flows it injects, served in turn
        self.turn = 0


def run_packets(
    network: TransportNetwork,
    config: TransportConfig,
    sprayed: list[tuple[float, list[list[int]]]] | None = None,
    seed: int = 0,
) -> PacketRun:
    """Send every flow of `network` to completion, packet by packet (see the module). With
    `sprayed`, the flows are those instead of the network's classes: (bytes, paths over the
    network's links) each, every packet on one of its paths at random (seeded); the result
    then has one "class" per flow."""
    derived = derive_links(network, config)
    lk, cl = network.links, network.classes
    mtu = float(config.mtu_bytes)
    links = [
        _Link(float(c), float(p))
        for c, p in zip(lk.capacity_Bps.tolist(), lk.propagation_s.tolist(), strict=True)
    ]
    credit = derived.control == CONTROL_CREDIT
    pfc = derived.control == CONTROL_PFC
    for i in np.flatnonzero(credit).tolist():
        links[i].credits = float(lk.buffer_bytes[i])
    react = derived.headroom_bytes / lk.capacity_Bps
    paths: list[list[list[int]]] = []  # per flow, its paths
    flow_class, flow_bytes = [], []
    if sprayed is None:
        for c in range(cl.n_classes):
            m = round(float(cl.multiplicity[c]))
            for _ in range(m):
                paths.append([cl.links[cl.ptr[c] : cl.ptr[c + 1]].tolist()])
                flow_class.append(c)
                flow_bytes.append(float(cl.bytes[c]) / m)
    else:
        for f, (nbytes, ways) in enumerate(sprayed):
            if len({w[0] for w in ways}) != 1:
                raise ValueError("a sprayed flow's paths must leave its NIC by one link")
            paths.append(ways)
            flow_class.append(f)
            flow_bytes.append(float(nbytes))
    n_classes = cl.n_classes if sprayed is None else len(sprayed)
    rng = np.random.default_rng(seed)
    left = list(flow_bytes)  # bytes each flow has still to send
    delivered = [0.0] * len(paths)
    finish = [np.inf] * len(paths)
    for f, ways in enumerate(paths):
        links[ways[0][0]].flows.append(f)
    events: list[tuple[float, int, int, tuple]] = []
    order = itertools.count()

    def at(t: float, kind: int, data: tuple) -> None:
        heapq.heappush(events, (t, next(order), kind, data))

    def try_send(i: int, now: float) -> None:
        link = links[i]
        if link.busy or link.paused:
            return
        if link.flows:  # a NIC: the next flow in turn with bytes left
            for _ in range(len(link.flows)):
                f = link.flows[link.turn % len(link.flows)]
                link.turn += 1
                if left[f] > 0:
                    size = min(mtu, left[f])
                    if size > link.credits:
                        link.turn -= 1  # its turn waits for the credits
                        return
                    left[f] -= size
                    way = int(rng.integers(len(paths[f]))) if len(paths[f]) > 1 else 0
                    packet = (f, way, 0, size)
                    break
            else:
                return
        else:
            if not link.queue:
                return
            if link.queue[0][3] > link.credits:
                return
            packet = link.queue.popleft()
        link.busy = True
        link.credits -= packet[3]
        at(now + packet[3] / link.capacity, TX_DONE, (i, packet))

    def check_pause(i: int, now: float) -> None:
        link = links[i]
        if not pfc[i]:
            return
        if not link.pause_asked and link.held >= derived.xoff_bytes[i]:
            link.pause_asked = True
            at(now + react[i], PAUSE, (i, True))
        elif link.pause_asked and link.held <= derived.xon_bytes[i]:
            link.pause_asked = False
            at(now + react[i], PAUSE, (i, False))

    for i in range(len(links)):
        try_send(i, 0.0)
    while events:
        now, _, kind, data = heapq.heappop(events)
        if kind == TX_DONE:
            i, (f, way, hop, size) = data
            links[i].busy = False
            if hop > 0:  # it has left the switch it waited in: free the ingress it held
                came = paths[f][way][hop - 1]
                links[came].held -= size
                check_pause(came, now)
                if credit[came]:
                    back = derived.credit_rtt_s[came] - links[came].propagation
                    at(now + back, CREDIT, (came, size))
            at(now + links[i].propagation, ARRIVE, (i, (f, way, hop, size)))
            try_send(i, now)
        elif kind == ARRIVE:
            i, (f, way, hop, size) = data
            if hop + 1 == len(paths[f][way]):
                delivered[f] += size
                if delivered[f] >= flow_bytes[f] * (1 - 1e-12):
                    finish[f] = now
                continue
            links[i].held += size
            check_pause(i, now)
            nxt = paths[f][way][hop + 1]
            links[nxt].queue.append((f, way, hop + 1, size))
            try_send(nxt, now)
        elif kind == CREDIT:
            i, size = data
            links[i].credits += size
            try_send(i, now)
        else:
            i, on = data
            links[i].paused = on
            if not on:
                try_send(i, now)
    flow_finish = np.array(finish)
    flow_of = np.array(flow_class, dtype=np.int64)
    class_finish = np.zeros(n_classes)
    np.maximum.at(class_finish, flow_of, flow_finish)
    return PacketRun(flow_of, np.array(flow_bytes), flow_finish, class_finish)
