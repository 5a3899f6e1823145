"""A packet-level twin of the fluid transport model, to check it against: the same network,
packet by packet.

The fluid model (`engine.transport`) moves bytes as rates in fixed steps. This simulator
moves MTU-sized packets, one at a time at each link's rate, through FIFO egress ports,
event by event, held back by the same mechanisms with the same numbers
(`engine.transport.tables.derive_links`): InfiniBand credits for the far end's buffer
share, returned a credit round trip after a packet leaves that buffer, or PFC pauses that
reach the upstream port a reaction time (headroom over rate) after its ingress crosses XOFF
and lift after it falls to XON. A NIC serves its flows in turn, a packet each. A flow may
have several paths (per-packet spraying): each packet takes one of them at random, as a
switch spraying at random would (a fixed rotation would march every sender's packets onto
the same uplink at once).

With DCQCN on (`config.mechanisms.dcqcn`) it runs DCQCN as the papers and NVIDIA's
documentation describe it per packet, with the configuration's parameters: a switch marks a
packet as it leaves an egress port, with the RED probability of the queue it leaves behind
(so a mark does not wait out the queue, and the feedback delay is the flow's own, as in the
fluid model); the receiver sends a CNP for a
marked packet at most once per CNP interval per flow (paced per port, `cnp_pacing`: at most
once per interval from the receiving port, to whichever flow's marked packet comes first,
the literal mechanism the fluid reads as a share), reaching the sender half the flow's
feedback delay later; the sender paces each flow at its current rate R_C, cuts it by
alpha / 2 on a CNP (at most once per rate-decrease period), updates alpha every alpha
interval, and raises the rate on its timer and byte counter through fast recovery,
additive and hyper increase. With IB CC on (`config.mechanisms.ib_cc`) a switch port whose
egress queue is past the threshold, and that is not itself held back by credits (a root,
not a victim), sets FECN on one packet in ``marking_rate + 1`` as they leave it; the
receiver returns a BECN half the flow's feedback delay later; each BECN raises the flow's
CCT index, its timer lowers it by one, and the flow is paced at line x t_pkt / (t_pkt +
gap) as `engine.transport.control.ibcc_rate` reads the table. No loss.

For an ablation, `run_packets(..., round_robin=True)` makes every switch egress serve its
flows in turn, a packet each, instead of in arrival order.

Small on purpose (plain Python, a heap of events), so it can be read whole and trusted; it
runs networks of tens of flows and a few MB each in seconds.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from engine.transport.control import ibcc_rate, red_probability
from engine.transport.network import TransportNetwork
from engine.transport.params import TransportConfig
from engine.transport.structures import CONTROL_CREDIT, CONTROL_PFC
from engine.transport.tables import derive_links, ibcc_knobs

TX_DONE, ARRIVE, CREDIT, PAUSE, WAKE, CNP, ALPHA_TICK, RATE_TICK, SAMPLE, BECN, CCT_TICK = range(11)


@dataclass
class PacketRun:
    """Per flow (each class's flows in class order, or the sprayed flows given): its class,
    bytes, finish time (``inf`` if unfinished at the horizon) and bytes delivered inside the
    watch window; per class the latest finish of its flows; the mean and the range of each
    link's egress queue over the window's samples."""

    flow_class: np.ndarray
    flow_bytes: np.ndarray
    flow_finish_s: np.ndarray
    class_finish_s: np.ndarray
    window_bytes: np.ndarray
    queue_mean: np.ndarray
    queue_min: np.ndarray
    queue_max: np.ndarray


class _Link:
    """One directed link: its egress queue and its bytes, whether it is sending, paused, its
    credits and the bytes that came over it and still sit in the far-end switch."""

    def __init__(self, capacity: float, propagation: float) -> None:
        self.capacity = capacity
        self.propagation = propagation
        self.queue: deque[tuple[int, int, int, float, bool]] | _RoundRobin = deque()
        self.queued = 0.0  # bytes in `queue` (flow, path, hop, bytes, ECN-marked)
        self.busy = False
        self.paused = False
        self.pause_asked = False
        self.credits = math.inf
        self.held = 0.0
        self.flows: list[int] = []  # a NIC link: the flows it injects, served in turn
        self.turn = 0
        self.wake_at = math.inf
        self.fecn_count = 0  # packets left since the last FECN (IB CC marks one in n)


class _RoundRobin:
    """An egress queue that serves its flows in turn, a packet each, instead of in arrival
    order: the queue `deque` is, for the ablation that asks what the FIFO order does."""

    def __init__(self) -> None:
        self.by_flow: dict[int, deque[tuple[int, int, int, float, bool]]] = {}

    def append(self, packet: tuple[int, int, int, float, bool]) -> None:
        self.by_flow.setdefault(packet[0], deque()).append(packet)

    def __bool__(self) -> bool:
        return bool(self.by_flow)

    def __getitem__(self, index: int) -> tuple[int, int, int, float, bool]:
        if index != 0:
            raise IndexError("a round-robin queue shows only its next packet")
        return next(iter(self.by_flow.values()))[0]

    def popleft(self) -> tuple[int, int, int, float, bool]:
        flow, waiting = next(iter(self.by_flow.items()))
        packet = waiting.popleft()
        del self.by_flow[flow]
        if waiting:
            self.by_flow[flow] = waiting  # to the back of the turn
        return packet


class _Rate:
    """One flow's DCQCN reaction point: its rates, alpha and increase stages."""

    def __init__(self, line: float, alpha: float) -> None:
        self.rc = line
        self.rt = line
        self.alpha = alpha
        self.timer_stage = 0
        self.byte_stage = 0
        self.bytes_since = 0.0
        self.cnp_seen = False  # in this alpha interval
        self.last_cut = -math.inf
        self.raised = True  # since the last cut (NVIDIA clamps R_T only then)
        self.next_send = 0.0
        self.last_send = -math.inf  # the flow's last packet left the NIC then, this size
        self.last_size = 0.0
        self.timer_gen = 0
        self.last_cnp_sent = -math.inf  # at the receiver
        self.ccti = 0.0  # IB CC: the flow's congestion control table index


def run_packets(
    network: TransportNetwork,
    config: TransportConfig,
    sprayed: list[tuple[float, list[list[int]]]] | None = None,
    seed: int = 0,
    horizon_s: float = math.inf,
    window_s: tuple[float, float] | None = None,
    sample_s: float = 1e-6,
    round_robin: bool = False,
) -> PacketRun:
    """Send every flow of `network` to completion (or to `horizon_s`), packet by packet
    (see the module). With `sprayed`, the flows are those instead of the network's classes:
    (bytes, paths over the network's links) each, every packet on one of its paths at
    random (seeded); the result then has one "class" per flow. `window_s` is where the
    delivered bytes and the queue samples (every `sample_s`) are watched. With
    `round_robin`, switch egress queues serve their flows in turn, a packet each, instead of
    in arrival order (an ablation: what the FIFO order does)."""
    sim = _Sim(network, config, sprayed, seed)
    if round_robin:
        for link in sim.links:
            link.queue = _RoundRobin()
    return sim.run(horizon_s, window_s, sample_s)


class _Sim:
    """The event loop of `run_packets` and its state."""

    def __init__(self, network, config, sprayed, seed) -> None:
        derived = derive_links(network, config)
        lk, cl = network.links, network.classes
        self.config, self.derived = config, derived
        self.mtu = float(config.mtu_bytes)
        self.links = [
            _Link(float(c), float(p))
            for c, p in zip(lk.capacity_Bps.tolist(), lk.propagation_s.tolist(), strict=True)
        ]
        self.credit = derived.control == CONTROL_CREDIT
        self.pfc = derived.control == CONTROL_PFC
        for i in np.flatnonzero(self.credit).tolist():
            self.links[i].credits = float(lk.buffer_bytes[i])
        self.react = derived.headroom_bytes / lk.capacity_Bps
        self.kmin, self.kmax = lk.ecn_kmin_bytes, lk.ecn_kmax_bytes
        self.pmax = lk.ecn_pmax if config.mechanisms.dcqcn else np.zeros(lk.n_links)
        self.ibcc = config.mechanisms.ib_cc
        self.ib_knobs = ibcc_knobs(config.ib_cc)
        self.fecn_at = np.where(
            lk.from_switch & self.ibcc,
            config.ib_cc.threshold_fraction * lk.egress_buffer_bytes,
            np.inf,
        )
        self.port_last_cnp: dict[int, float] = {}  # per receiving port: its last CNP
        self.paths: list[list[list[int]]] = []  # per flow, its paths
        flow_class, flow_bytes, delay = [], [], []
        if sprayed is None:
            for c in range(cl.n_classes):
                m = round(float(cl.multiplicity[c]))
                for _ in range(m):
                    self.paths.append([cl.links[cl.ptr[c] : cl.ptr[c + 1]].tolist()])
                    flow_class.append(c)
                    flow_bytes.append(float(cl.bytes[c]) / m)
                    delay.append(float(cl.feedback_delay_s[c]))
        else:
            for f, (nbytes, ways) in enumerate(sprayed):
                if len({w[0] for w in ways}) != 1:
                    raise ValueError("a sprayed flow's paths must leave its NIC by one link")
                self.paths.append(ways)
                flow_class.append(f)
                flow_bytes.append(float(nbytes))
                delay.append(0.0)
        self.n_classes = cl.n_classes if sprayed is None else len(sprayed)
        self.flow_class = np.array(flow_class, dtype=np.int64)
        self.flow_bytes = flow_bytes
        self.feedback = delay
        self.rng = np.random.default_rng(seed)
        self.left = list(flow_bytes)  # bytes each flow has still to send
        self.delivered = [0.0] * len(self.paths)
        self.finish = [math.inf] * len(self.paths)
        d = config.dcqcn
        self.dcqcn = config.mechanisms.dcqcn
        self.rates = [
            _Rate(self.links[ways[0][0]].capacity, float(d.initial_alpha)) for ways in self.paths
        ]
        for f, ways in enumerate(self.paths):
            self.links[ways[0][0]].flows.append(f)
        self.events: list[tuple[float, int, int, tuple]] = []
        self.order = itertools.count()

    def at(self, t: float, kind: int, data: tuple) -> None:
        """Schedule an event."""
        heapq.heappush(self.events, (t, next(self.order), kind, data))

    def run(self, horizon_s, window_s, sample_s) -> PacketRun:
        """Run the events to the end (or the horizon) and sum the run up."""
        n_links = len(self.links)
        at_start = np.zeros(len(self.paths))
        queue_sum, samples = np.zeros(n_links), 0
        queue_min, queue_max = np.full(n_links, math.inf), np.zeros(n_links)
        if window_s is not None:
            self.at(window_s[0], SAMPLE, (True,))
        if self.dcqcn:
            d = self.config.dcqcn
            for f in range(len(self.paths)):
                self.at(float(d.alpha_update_s), ALPHA_TICK, (f,))
                self.at(float(d.rate_increase_timer_s), RATE_TICK, (f, 0))
        if self.ibcc:
            for f in range(len(self.paths)):
                self.rates[f].ccti = float(self.config.ib_cc.ccti_min)
                self.at(float(self.config.ib_cc.ccti_timer_s), CCT_TICK, (f,))
        for i in range(n_links):
            self.try_send(i, 0.0)
        window_bytes = None
        while self.events:
            now, _, kind, data = heapq.heappop(self.events)
            if now > horizon_s:
                break
            if kind == SAMPLE:
                if data[0]:
                    at_start = np.array(self.delivered)
                queue = np.array([link.queued for link in self.links])
                queue_sum += queue
                samples += 1
                queue_min = np.minimum(queue_min, queue)
                queue_max = np.maximum(queue_max, queue)
                if now + sample_s <= window_s[1]:
                    self.at(now + sample_s, SAMPLE, (False,))
                else:
                    window_bytes = np.array(self.delivered) - at_start
                continue
            if kind in (ALPHA_TICK, RATE_TICK, CCT_TICK) and all(x <= 0 for x in self.left):
                continue  # every flow has sent all: the timers stop
            self.handle(now, kind, data)
        flow_finish = np.array(self.finish)
        class_finish = np.zeros(self.n_classes)
        np.maximum.at(class_finish, self.flow_class, flow_finish)
        if window_bytes is None:
            window_bytes = np.array(self.delivered) - at_start
        return PacketRun(
            flow_class=self.flow_class,
            flow_bytes=np.array(self.flow_bytes),
            flow_finish_s=flow_finish,
            class_finish_s=class_finish,
            window_bytes=window_bytes,
            queue_mean=queue_sum / max(samples, 1),
            queue_min=np.where(samples > 0, queue_min, 0.0),
            queue_max=queue_max,
        )

    def handle(self, now: float, kind: int, data: tuple) -> None:
        """One event."""
        if kind == TX_DONE:
            self.tx_done(now, *data)
        elif kind == ARRIVE:
            self.arrive(now, *data)
        elif kind == CREDIT:
            i, size = data
            self.links[i].credits += size
            self.try_send(i, now)
        elif kind == PAUSE:
            i, on = data
            self.links[i].paused = on
            if not on:
                self.try_send(i, now)
        elif kind == WAKE:
            i = data[0]
            self.links[i].wake_at = math.inf
            self.try_send(i, now)
        elif kind == CNP:
            self.cut(now, data[0])
            self.repace(data[0], now)
        elif kind == BECN:
            ib, r = self.config.ib_cc, self.rates[data[0]]
            r.ccti = min(r.ccti + float(ib.ccti_increase), float(ib.ccti_limit))
        elif kind == CCT_TICK:
            ib, r = self.config.ib_cc, self.rates[data[0]]
            r.ccti = max(r.ccti - 1.0, float(ib.ccti_min))
            self.at(now + float(ib.ccti_timer_s), CCT_TICK, data)
        elif kind == ALPHA_TICK:
            f = data[0]
            r, g = self.rates[f], float(self.config.dcqcn.alpha_gain)
            r.alpha = (1 - g) * r.alpha + (g if r.cnp_seen else 0.0)
            r.cnp_seen = False
            self.at(now + float(self.config.dcqcn.alpha_update_s), ALPHA_TICK, (f,))
        elif kind == RATE_TICK:
            f, gen = data
            r = self.rates[f]
            if gen == r.timer_gen:
                r.timer_stage += 1
                self.increase(f, by_timer=True)
                self.repace(f, now)
                self.at(now + float(self.config.dcqcn.rate_increase_timer_s), RATE_TICK, (f, gen))

    def try_send(self, i: int, now: float) -> None:
        """Start the next packet on link `i` if it may send one."""
        link = self.links[i]
        if link.busy or link.paused:
            return
        if link.flows:  # a NIC: the next flow in turn with bytes left and its pace allowing
            packet, soonest = None, math.inf
            for _ in range(len(link.flows)):
                f = link.flows[link.turn % len(link.flows)]
                link.turn += 1
                if self.left[f] <= 0:
                    continue
                if self.rates[f].next_send > now + 1e-15:
                    soonest = min(soonest, self.rates[f].next_send)
                    continue
                size = min(self.mtu, self.left[f])
                if size > link.credits:
                    link.turn -= 1  # its turn waits for the credits
                    return
                self.left[f] -= size
                way = int(self.rng.integers(len(self.paths[f]))) if len(self.paths[f]) > 1 else 0
                packet = (f, way, 0, size, False)
                if self.dcqcn:
                    r = self.rates[f]
                    r.last_send, r.last_size = now, size
                    r.next_send = now + size / r.rc
                    self.count_bytes(f, size, now)
                elif self.ibcc:
                    r = self.rates[f]
                    r.next_send = now + size / ibcc_rate(r.ccti, link.capacity, self.ib_knobs)
                break
            if packet is None:
                if soonest < link.wake_at:
                    link.wake_at = soonest
                    self.at(soonest, WAKE, (i,))
                return
        else:
            if not link.queue or link.queue[0][3] > link.credits:
                return
            packet = link.queue.popleft()
            link.queued -= packet[3]
            if self.pmax[i] > 0 and not packet[4]:
                p = red_probability(link.queued, self.kmin[i], self.kmax[i], self.pmax[i])
                if p > 0 and self.rng.random() < p:
                    packet = (*packet[:4], True)
            if link.queued > self.fecn_at[i] and not self._held_back(i, packet[3]):
                link.fecn_count += 1
                if link.fecn_count > self.config.ib_cc.marking_rate:
                    link.fecn_count = 0
                    packet = (*packet[:4], True)
        link.busy = True
        link.credits -= packet[3]
        self.at(now + packet[3] / link.capacity, TX_DONE, (i, packet))

    def _held_back(self, i: int, size: float) -> bool:
        """Whether link `i` is held back by the far end (too few credits for a packet
        after this one): a victim of congestion further on, not its root."""
        return self.credit[i] and self.links[i].credits < 2 * size

    def check_pause(self, i: int, now: float) -> None:
        """Ask for a pause at XOFF and lift it at XON (seen upstream a reaction later)."""
        link = self.links[i]
        if not self.pfc[i]:
            return
        if not link.pause_asked and link.held >= self.derived.xoff_bytes[i]:
            link.pause_asked = True
            self.at(now + self.react[i], PAUSE, (i, True))
        elif link.pause_asked and link.held <= self.derived.xon_bytes[i]:
            link.pause_asked = False
            self.at(now + self.react[i], PAUSE, (i, False))

    def tx_done(self, now: float, i: int, packet: tuple) -> None:
        """A packet has left link `i`'s sender: free the buffer it waited in, send it on."""
        f, way, hop, size, _ = packet
        self.links[i].busy = False
        if hop > 0:
            came = self.paths[f][way][hop - 1]
            self.links[came].held -= size
            self.check_pause(came, now)
            if self.credit[came]:
                back = self.derived.credit_rtt_s[came] - self.links[came].propagation
                self.at(now + back, CREDIT, (came, size))
        self.at(now + self.links[i].propagation, ARRIVE, (i, packet))
        self.try_send(i, now)

    def arrive(self, now: float, i: int, packet: tuple) -> None:
        """A packet reaches the far end of link `i`: its receiver, or the next egress."""
        f, way, hop, size, marked = packet
        path = self.paths[f][way]
        if hop + 1 == len(path):
            self.delivered[f] += size
            if self.delivered[f] >= self.flow_bytes[f] * (1 - 1e-12):
                self.finish[f] = now
            if marked and self.ibcc:
                self.at(now + 0.5 * self.feedback[f], BECN, (f,))
            elif marked and self.cnp_due(f, i, now):
                self.at(now + 0.5 * self.feedback[f], CNP, (f,))
            return
        self.links[i].held += size
        self.check_pause(i, now)
        j = path[hop + 1]
        nxt = self.links[j]
        nxt.queue.append((f, way, hop + 1, size, marked))
        nxt.queued += size
        self.try_send(j, now)

    def cnp_due(self, f: int, port: int, now: float) -> bool:
        """Whether the receiver answers flow `f`'s marked packet, which came in over link
        `port`, with a CNP now: one per CNP interval per flow or, paced per port, one per
        interval from the receiving port to whichever flow's marked packet comes first
        (and marks the interval as taken)."""
        interval = float(self.config.dcqcn.cnp_interval_s)
        if self.config.dcqcn.cnp_pacing == "port":
            if now - self.port_last_cnp.get(port, -math.inf) < interval:
                return False
            self.port_last_cnp[port] = now
            return True
        r = self.rates[f]
        if now - r.last_cnp_sent < interval:
            return False
        r.last_cnp_sent = now
        return True

    def cut(self, now: float, f: int) -> None:
        """A CNP reaches flow `f`'s sender: cut its rate (at most once per period)."""
        d, r = self.config.dcqcn, self.rates[f]
        r.cnp_seen = True
        if now - r.last_cut < float(d.rate_decrease_period_s):
            return
        if d.clamp_target_always or r.raised:
            r.rt = r.rc
        line = self.links[self.paths[f][0][0]].capacity
        cut = min(r.alpha / 2, float(d.max_decrease_fraction))
        r.rc = max(r.rc * (1 - cut), min(float(d.min_rate_Bps), line))
        r.last_cut = now
        r.raised = False
        r.timer_stage = r.byte_stage = 0
        r.bytes_since = 0.0
        r.timer_gen += 1
        self.at(now + float(d.rate_increase_timer_s), RATE_TICK, (f, r.timer_gen))

    def repace(self, f: int, now: float) -> None:
        """The NIC's rate limiter takes a new rate at once: the flow's next packet may
        leave its last one's size at the new rate after it (sooner after a raise)."""
        r = self.rates[f]
        if not math.isfinite(r.last_send):
            return
        r.next_send = r.last_send + r.last_size / r.rc
        nic = self.paths[f][0][0]
        link = self.links[nic]
        if r.next_send < link.wake_at:
            link.wake_at = max(r.next_send, now)
            self.at(link.wake_at, WAKE, (nic,))

    def count_bytes(self, f: int, size: float, now: float) -> None:
        """The byte counter: an increase event every `byte_counter_bytes` sent."""
        b = float(self.config.dcqcn.byte_counter_bytes)
        if not math.isfinite(b):
            return
        r = self.rates[f]
        r.bytes_since += size
        while r.bytes_since >= b:
            r.bytes_since -= b
            r.byte_stage += 1
            self.increase(f, by_timer=False)
            r.next_send = now + size / r.rc  # the packet just sent, at the raised rate

    def increase(self, f: int, by_timer: bool) -> None:
        """One increase event: fast recovery for the first F stages, then additive, then
        (both counters, or the timer alone without a byte counter, past them) hyper."""
        d, r = self.config.dcqcn, self.rates[f]
        line = self.links[self.paths[f][0][0]].capacity
        stages = int(d.fast_recovery_steps)
        if math.isfinite(float(d.byte_counter_bytes)):
            fast = max(r.timer_stage, r.byte_stage) < stages
            hyper = min(r.timer_stage, r.byte_stage) > stages
        else:
            fast = r.timer_stage < stages
            hyper = r.timer_stage > stages + 1
        if not fast:
            step = float(d.hyper_increase_Bps if hyper else d.additive_increase_Bps)
            r.rt = min(r.rt + step, line)
        r.rc = min((r.rt + r.rc) / 2, line)
        if not by_timer or d.clamp_target_after_timer:
            r.raised = True
