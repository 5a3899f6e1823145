"""The live part of a transport run: dropping finished classes and the links only they used.

A permutation or an all-to-all phase ends in a long tail: most flows are done early, a few
collided ones go on. Every step still walks every class, entry and link, finished or not.
A finished class sends nothing, holds no queue and gates nobody; a link that no unfinished
class crosses, with nothing held at its far end and no pause in force or pending, moves no
byte and changes no other link. Dropping them changes no number the kernel computes for
the rest (the NIC water filling leaves classes with nothing to offer out of its sums, so
its arithmetic does not depend on them either), so the driver (`engine.transport.simulate`)
may go on with the live part, once enough has finished to pay for the copy, and put the
figures back in place at the end (`Unfolding`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine.transport.copies import subnetwork
from engine.transport.network import TransportNetwork
from engine.transport.series import Series
from engine.transport.settle import Window
from engine.transport.structures import (
    ClassState,
    LinkState,
    SampleAcc,
    State,
    Stats,
    Tables,
)
from engine.transport.tables import new_stats

# Drop the finished part once at most this share of the run's classes is left, and only in
# runs of at least MIN_CLASSES classes (a small run's copy costs more than its steps).
LIVE_SHARE = 0.75
MIN_CLASSES = 64
_CLASS_FIELDS = ("delivered", "sent", "dropped_class")
_MAX_FIELDS = ("max_queue", "max_occupancy")


def live_part(
    tables: Tables, state: State, acc: SampleAcc, previous: Window | None = None
) -> tuple[np.ndarray, np.ndarray] | None:
    """The classes (unfinished, or with bytes in the open sample interval or in the
    window `previous`) and links (crossed by one of those, still holding bytes or a
    pause, or with any figure in the open sample interval or in `previous`) a run can go
    on with, when at most `LIVE_SHARE` of its classes are left; else None. (What is
    dropped is zero in `previous` and stays zero: the driver's settle tests, which
    compare `previous` with the next window, decide as they would on the whole.)"""
    finish = state.classes.finish
    n_classes = finish.shape[0]
    moved = ~np.isfinite(finish) | (acc.delivered != 0.0)
    if previous is not None:
        moved |= (previous.rate != 0.0) | (previous.sent != 0.0)
        moved |= previous.dropped_class != 0.0
    keep_class = np.flatnonzero(moved)
    if n_classes < MIN_CLASSES or keep_class.size > LIVE_SHARE * n_classes:
        return None
    cl, ls = tables.classes, state.links
    used = np.zeros(tables.links.capacity.shape[0], dtype=bool)
    lengths = np.diff(cl.ptr)[keep_class]
    entries = _entries_of(cl.ptr, keep_class, lengths)
    used[tables.entries.link[entries]] = True
    busy = (ls.occupancy != 0.0) | ls.xoff | ls.pfc_ring.any(axis=0) | (ls.queue != 0.0)
    busy |= acc.paused != 0.0
    if previous is not None:
        for figure in previous.per_link.values():
            busy |= figure != 0.0
    return keep_class, np.flatnonzero(used | busy)


def _entries_of(ptr: np.ndarray, keep: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The entry indices of classes `keep`, class by class in path order."""
    starts = np.repeat(ptr[keep], lengths)
    return starts + np.arange(starts.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)


def shrink(
    network: TransportNetwork,
    tables: Tables,
    state: State,
    acc: SampleAcc,
    keep: tuple[np.ndarray, np.ndarray],
) -> tuple[TransportNetwork, State, SampleAcc]:
    """The network of the kept classes and links (in their order) and the run's state and
    open sample interval cut to them; the clock and the histories' widths stay."""
    keep_class, keep_link = keep
    new_link = np.full(tables.links.capacity.shape[0], -1, dtype=np.int64)
    new_link[keep_link] = np.arange(keep_link.size)
    new_class = np.full(tables.classes.size.shape[0], -1, dtype=np.int64)
    new_class[keep_class] = np.arange(keep_class.size)
    small = subnetwork(network, keep_class, keep_link, new_link, new_class)
    entries = _entries_of(tables.classes.ptr, keep_class, np.diff(tables.classes.ptr)[keep_class])
    ls, cs = state.links, state.classes
    # C order, as the kernel was compiled for (one signature for every run).
    # The FIFO bins stay whole: each link and entry keeps its column (`fifo_at`).
    whole = ("fifo_bytes", "fifo")
    links = LinkState(
        *(
            a if name in whole else np.ascontiguousarray(a[..., keep_link])
            for name, a in zip(ls._fields, ls, strict=True)
        )
    )
    per_entry = ("queue", "deadline", "fifo_last", "fifo_at")
    classes = ClassState(
        *(
            a
            if name in whole
            else np.ascontiguousarray(a[entries] if name in per_entry else a[..., keep_class])
            for name, a in zip(cs._fields, cs, strict=True)
        )
    )
    new_acc = SampleAcc(
        np.ascontiguousarray(acc.delivered[keep_class]),
        np.ascontiguousarray(acc.paused[keep_link]),
        acc.steps,
    )
    return small, State(links, classes, state.clock), new_acc


@dataclass
class Unfolding:
    """What a run that dropped its finished part keeps to put its figures back in place:
    per kept class and link its index in the run's first network (`class_of`, `link_of`),
    the totals, rows, finish times and delivered bytes gathered so far in that indexing."""

    n_classes: int
    n_links: int
    class_of: np.ndarray
    link_of: np.ndarray
    totals: Stats = field(init=False)
    rows: Series = field(init=False)
    finish: np.ndarray = field(init=False)
    delivered: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.totals = new_stats(self.n_links, self.n_classes)
        self.rows = Series(self.n_classes, self.n_links)
        self.finish = np.full(self.n_classes, math.inf)
        self.delivered = np.zeros(self.n_classes)

    def add_totals(self, totals: Stats) -> None:
        """Add the run's totals (in the current network's indexing) into place and zero
        them. Called after every window and jump, so that each sum takes its terms in the
        order the whole run takes them."""
        cls, link = self.class_of, self.link_of
        for name, whole, part in zip(Stats._fields, self.totals, totals, strict=True):
            index = cls if name in _CLASS_FIELDS else link
            if name in _MAX_FIELDS:
                whole[index] = np.maximum(whole[index], part)
            else:
                whole[index] += part
            part[:] = 0.0

    def gather(self, rows: Series, state: State) -> None:
        """Put the run's rows, finish times and delivered bytes (in the current network's
        indexing) into place."""
        cls, link = self.class_of, self.link_of
        for t, rates, queues, paused in rows.blocks:
            r = np.zeros((t.size, self.n_classes))
            q = np.zeros((t.size, self.n_links))
            p = np.zeros((t.size, self.n_links))
            r[:, cls], q[:, link], p[:, link] = rates, queues, paused
            self.rows.add(t, r, q, p)
        self.finish[cls] = state.classes.finish
        self.delivered[cls] = state.classes.delivered

    def narrow(self, keep: tuple[np.ndarray, np.ndarray]) -> None:
        """Follow the run onto the kept classes and links."""
        self.class_of = self.class_of[keep[0]]
        self.link_of = self.link_of[keep[1]]


def cut_window(w: Window, keep: tuple[np.ndarray, np.ndarray]) -> Window:
    """Window `w`'s figures of the kept classes and links (for the settle test that
    compares it with the next window, taken on the live part)."""
    cls, link = keep
    return Window(
        t0=w.t0,
        t1=w.t1,
        rate=w.rate[cls],
        sent=w.sent[cls],
        dropped_class=w.dropped_class[cls],
        per_link={name: a[link] for name, a in w.per_link.items()},
        finished=w.finished[cls],
        started=w.started[cls],
        controls={name: a[cls] for name, a in w.controls.items()},
    )
