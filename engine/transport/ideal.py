"""A perfect transport's run of a network: max-min fair rates, no queue, no mechanism.

The ideal is what every transport figure is measured against (the efficiency of a run is
the ideal's makespan over its own), and what ``transport.model = ideal`` asks for: flows at
their max-min fair share of every link they cross, re-shared as flows finish, with no
buffer, pause, mark or drop. `ideal_rates` gives each class's rate with all classes active
and the fluid finish times; `ideal_result` lays the ideal out as a `TransportResult`, so a
study reads it like a run of the mechanisms.
"""

# Names carry their unit as the engine spells it (Bps: bytes per second).

from __future__ import annotations

import numpy as np

from engine.flows.arrivals import finish_with_starts
from engine.flows.solver import max_min_rates
from engine.transport.copies import parts
from engine.transport.network import TransportNetwork
from engine.transport.result import TransportResult
from engine.transport.structures import GateTable

MAX_ROWS = 256  # instants the ideal's rate series samples (its events, thinned past this)


def ideal_rates(network: TransportNetwork) -> tuple[np.ndarray, np.ndarray]:
    """Max-min rates of every class (all active) and the fluid finish times (absolute) of a
    perfect transport with every class starting at its start time."""
    cl = network.classes
    weights = np.repeat(cl.multiplicity, np.diff(cl.ptr))
    capacity = network.links.capacity_Bps
    per_flow = max_min_rates(cl.ptr, cl.links, weights, capacity)
    # Each part (classes joined by the links they share) on its own: the same finish
    # times, at a cost that follows the parts' sizes (engine.flows.fluid_parts).
    ptr, path = cl.ptr.astype(np.int64), cl.links.astype(np.int64)
    part_of_flow = None
    if path.size:
        no_gates = GateTable(np.zeros(ptr.size, dtype=np.int64), np.zeros(0, np.int64), np.zeros(0))
        _, part_of_link = parts(ptr, path, network.links.n_links, no_gates)
        part_of_flow = part_of_link[path[np.minimum(ptr[:-1], path.size - 1)]]
    finish = finish_with_starts(
        cl.ptr, cl.links, weights, capacity, cl.bytes / cl.multiplicity, cl.start_s, part_of_flow
    )
    return per_flow * cl.multiplicity, finish


def ideal_result(network: TransportNetwork) -> TransportResult:
    """The ideal as a run: per class its fluid finish time and all its bytes delivered; a
    rate series sampled at the classes' starts and finishes (the max-min rates of the
    classes active just before each instant, up to `MAX_ROWS` of them); per link the
    bytes it carried over the makespan as its utilization, and no queue, pause, mark,
    drop or PFC threshold."""
    cl, links = network.classes, network.links
    n_links = links.n_links
    start_rates, finish = ideal_rates(network)
    end = float(finish.max()) if finish.size else 0.0
    events = np.unique(np.concatenate([cl.start_s, finish, [end]]))
    events = events[events > 0]
    if events.size > MAX_ROWS:
        events = events[np.linspace(0, events.size - 1, MAX_ROWS).astype(np.int64)]
    weights = np.repeat(cl.multiplicity, np.diff(cl.ptr))
    rows = np.zeros((events.size, cl.n_classes))
    before = 0.0
    for i, t in enumerate(events):
        active = (cl.start_s <= before) & (finish > before)  # over (before, t]
        if np.any(active):
            keep = np.repeat(active, np.diff(cl.ptr))
            ptr = np.concatenate([[0], np.cumsum(np.diff(cl.ptr)[active])])
            rate = max_min_rates(ptr, cl.links[keep], weights[keep], links.capacity_Bps)
            rows[i, active] = rate * cl.multiplicity[active]
        before = float(t)
    carried = np.zeros(n_links)
    per_class = np.repeat(cl.bytes, np.diff(cl.ptr))
    np.add.at(carried, cl.links, per_class)
    span = end if end > 0 else 1.0
    zeros = np.zeros(n_links)
    return TransportResult(
        network=network,
        time_s=events,
        class_rate_Bps=rows,
        queue_bytes=np.zeros((events.size, n_links)),
        paused_share=np.zeros((events.size, n_links)),
        finish_s=finish.copy(),
        delivered_bytes=cl.bytes.astype(np.float64).copy(),
        dropped_class_bytes=np.zeros(cl.n_classes),
        ideal_rate_Bps=start_rates,
        ideal_finish_s=finish,
        pause_fraction=zeros.copy(),
        ecn_mark_fraction=zeros.copy(),
        dropped_bytes=zeros.copy(),
        xoff_events=np.zeros(n_links, dtype=np.int64),
        max_queue_bytes=zeros.copy(),
        max_occupancy_bytes=zeros.copy(),
        mean_queue_bytes=zeros.copy(),
        utilization=carried / (links.capacity_Bps * span),
        headroom_bytes=zeros.copy(),
        lossless=np.ones(n_links, dtype=bool),
        xoff_bytes=zeros.copy(),
        xon_bytes=zeros.copy(),
        end_s=end,
        steps=0,
        jumps=0,
    )
