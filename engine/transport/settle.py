"""When the transport driver may stop stepping: the windows it compares and its settle tests.

The driver (`engine.transport.simulate`) steps the kernel a window at a time and compares
each window's averages (`Window`) with the one before. The run has *settled* when rates,
queues, pauses, marks and the senders' controls all agree within the settle tolerance
(then it may jump to the next event); its *pace* has settled when the slowest class's
finish pace agrees as well (a collective's stage stops there); and it is *at rest* when
everything but the queues' levels agrees (a stage stops once that has lasted as long as
the run before it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.transport.structures import Tables


@dataclass(frozen=True)
class Window:
    """One window's averages, the basis of the settle test and of a jump."""

    t0: float
    t1: float
    rate: np.ndarray
    sent: np.ndarray
    dropped_class: np.ndarray
    per_link: dict[str, np.ndarray]
    finished: np.ndarray
    started: np.ndarray
    controls: dict[str, np.ndarray]


def comparable_windows(a: Window, b: Window) -> bool:
    """Two windows describe the same set of active classes (nothing started or ended)."""
    return bool(np.array_equal(a.finished, b.finished) and np.array_equal(a.started, b.started))


def _close(x: np.ndarray, y: np.ndarray, rel: float, floor: np.ndarray | float) -> bool:
    return bool(np.all(np.abs(x - y) <= rel * np.maximum(np.abs(x), np.abs(y)) + floor))


def _pace(w: Window, tables: Tables) -> float:
    """The longest time any active class would take for all its bytes at this window's
    rate (inf when an active class is at a standstill)."""
    active = ~w.finished & w.started
    if not active.any():
        return 0.0
    rate = w.rate[active]
    if np.any(rate <= 0.0):
        return math.inf
    return float(np.max(tables.classes.size[active] / rate))


def pace_settled(a: Window, b: Window, tables: Tables, rel: float) -> bool:
    """Whether the slowest class's pace agrees within `rel` across two windows."""
    pa, pb = _pace(a, tables), _pace(b, tables)
    if not (math.isfinite(pa) and math.isfinite(pb) and abs(pa - pb) <= rel * max(pa, pb)):
        return False
    return _links_and_controls_settled(a, b, tables, rel)


def at_rest(a: Window, b: Window, tables: Tables, rel: float) -> bool:
    """Whether every class's rate, every link's pause, mark and drop figures and every
    sender's control agree within `rel` across two windows, the queues' levels aside."""
    cl = tables.classes
    if not _close(a.rate, b.rate, rel, 1e-3 * rel * cl.line_rate * cl.multiplicity):
        return False
    return _links_and_controls_settled(a, b, tables, rel, skip=("queue_time",))


def settled(a: Window, b: Window, tables: Tables, rel: float) -> bool:
    """Whether window `b` repeats window `a` within `rel` (rates, queues, pauses, marks)."""
    cl = tables.classes
    line = cl.line_rate * cl.multiplicity
    if not _close(a.rate, b.rate, rel, 1e-3 * rel * line):
        return False
    if not _close(a.dropped_class, b.dropped_class, rel, 1e-3 * rel * line):
        return False
    return _links_and_controls_settled(a, b, tables, rel)


def recovering(w: Window, tables: Tables) -> np.ndarray:
    """The classes DCQCN is still raising at the end of window `w`: started, not finished,
    R_C below the line and no mark on any link of their path in the window. Their increase
    events go on until the line, so their rate will move however little it moved in one
    window (hyper increase adds a few Mb/s per event): a run that took such a class for
    settled jumped at the rate of its recovery and finished a 400 MB flow 29% late."""
    cl = tables.classes
    marks = w.per_link["marked"][tables.entries.link]
    if not tables.knobs.dcqcn_on or cl.size.shape[0] == 0 or marks.size == 0:
        return np.zeros(cl.size.shape[0], dtype=bool)
    ptr = cl.ptr.astype(np.int64)
    # a class of no hop hears nothing (reduceat would read the next class's first hop)
    heard = np.add.reduceat(marks, np.minimum(ptr[:-1], marks.size - 1)) > 0.0
    heard &= np.diff(ptr) > 0
    below = w.controls["rc"] < cl.line_rate * (1.0 - 1e-9)
    return w.started & ~w.finished & below & ~heard


def _links_and_controls_settled(
    a: Window, b: Window, tables: Tables, rel: float, skip: tuple[str, ...] = ()
) -> bool:
    """Whether every link's queue, pause, mark and drop figures (but those named in
    `skip`) and every sender's control state agree within `rel` across the two windows."""
    cl = tables.classes
    capacity = tables.links.capacity
    pkt = tables.knobs.pkt_bytes
    floors = {"queue_time": pkt, "paused_time": 1e-3, "xoff_events": 1e3}
    for name, x in a.per_link.items():
        if name in skip:
            continue
        floor = floors.get(name, 1e-3 * rel * capacity)
        if not _close(x, b.per_link[name], rel, floor):
            return False
    if np.any(recovering(b, tables)):
        return False
    # The senders' controls must have come to rest too: a CCT index or a DCQCN target
    # still creeping will move the rates later. (Half an index: the rate steps by index.)
    active = ~b.finished
    control_floors = {
        "rc": 1e-3 * rel * cl.line_rate,
        "rt": 1e-3 * rel * cl.line_rate,
        "alpha": 1e-3,
        "ccti": 0.5,
    }
    # alpha only steers future cuts: a class still at line rate (never cut, or recovered)
    # has no marks to cut it, and its alpha decaying towards zero changes nothing.
    held = active & (b.controls["rc"] < cl.line_rate * (1.0 - 1e-9))
    for name, floor in control_floors.items():
        which = held if name == "alpha" else active
        fl = floor[which] if isinstance(floor, np.ndarray) else floor
        if not _close(a.controls[name][which], b.controls[name][which], rel, fl):
            return False
    return True
