"""The fluid model with FIFO egress queues: an ablation, run on the plain-Python twin.

The kernel's switch egress queue serves every class's queued bytes evenly (processor
sharing). A real queue, and the packet twin's (`tests.validation.packet_level`), serves
bytes in the order they came: a sender paused for a while leaves a gap among its bytes,
and the gap reaches the receiver a queueing delay later. Here each egress queue keeps its
arrivals in bins, one per step (or per `bin_steps` steps), and serves the oldest bins
first, a bin's classes in proportion to their bytes in it (`FifoEgress`, installed into
`engine.transport.reference` for one run by `simulate_fifo`).

Plain Python and a bin per step: a 16:1 incast of 4 MB takes some 5 s. The kernel does not
have it yet (docs/transport.md, "Against packets": what it changes and what a port needs).
"""

from __future__ import annotations

from collections import deque

from engine.transport import reference
from engine.transport.network import TransportNetwork
from engine.transport.params import TransportConfig
from engine.transport.result import TransportResult
from engine.transport.simulate import simulate


class FifoEgress:
    """Each egress queue's arrivals in bins in arrival order (per link: a deque of
    ``[first step, {entry: bytes}]``)."""

    def __init__(self, bin_steps: int = 1) -> None:
        self.bin_steps = bin_steps
        self.bins: dict[int, deque] = {}

    def serve(self, allowed: list[float], dt: float) -> dict[int, float]:
        """Bytes each entry leaves its queue with this step: each link sends its oldest
        bins whole and a share of the next, in proportion to the bytes in it."""
        out: dict[int, float] = {}
        for link, queue in self.bins.items():
            budget = allowed[link] * dt
            while queue and budget > 0.0:
                held = queue[0][1]
                total = sum(held.values())
                if total <= budget:
                    for e, x in held.items():
                        out[e] = out.get(e, 0.0) + x
                    budget -= total
                    queue.popleft()
                    continue
                share = budget / total
                for e in held:
                    x = held[e] * share
                    out[e] = out.get(e, 0.0) + x
                    held[e] -= x
                budget = 0.0
        return out

    def arrived(self, link: int, entry: int, nbytes: float, step: int) -> None:
        """`nbytes` of `entry` joined `link`'s queue at `step`."""
        queue = self.bins.setdefault(link, deque())
        if not queue or queue[-1][0] // self.bin_steps != step // self.bin_steps:
            queue.append([step, {}])
        held = queue[-1][1]
        held[entry] = held.get(entry, 0.0) + nbytes

    def forget(self, link: int, entry: int) -> None:
        """`entry`'s queue at `link` was emptied to its crumbs: drop what the bins hold."""
        for _, held in self.bins.get(link, ()):
            held.pop(entry, None)


def simulate_fifo(
    network: TransportNetwork, config: TransportConfig, bin_steps: int = 1, **kwargs
) -> TransportResult:
    """`network` run to the end on the twin with FIFO egress queues. The run keeps every
    class and link in its place (no copies stepped once, no live part), so that the bins
    keep their links' and entries' numbers."""
    reference.FIFO_EGRESS = FifoEgress(bin_steps)
    try:
        return simulate(
            network,
            config,
            backend="reference",
            run_copies_once=False,
            drop_finished=False,
            **kwargs,
        )
    finally:
        reference.FIFO_EGRESS = None
