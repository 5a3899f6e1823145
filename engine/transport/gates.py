"""Pipeline gates: how far a flow class may run ahead of the flows it forwards data to or from.

A collective library moves data through a pipeline of connections. In NCCL a connection's
sender writes into its receiver's buffer (NCCL_BUFFSIZE, cut into NCCL_STEPS slots), and
the receiver frees a slot only when it has passed the data on; a rank passes on only data
that has reached it. A ring's or a tree's connections therefore keep one pace, none more
than a buffer ahead of its neighbours, whatever the network would let it send: a tree's
leaf does not flood a parent whose NIC is shared by three of the tree's flows.

In the fluid model a *forwarding edge* a → b says that class b passes on the data class a
delivers. It gates both ends alike: neither may have sent more of its bytes (as a share)
than the other has delivered, plus its `slack_bytes`. b cannot pass on what has not
reached it; a's receiver frees a slot once it has passed the data on into b, whose own
slots free as b's far end takes them, so a is held by what b has delivered. (NCCL holds a
tree's child by its siblings' data as well, through the parent's reduction: here that
bound is reached over two edges, so siblings may drift two buffers apart, not one.) The
fill of the pipeline at the start (a tree's depth of hops) is the latency model's, which
counts NCCL's per-hop latency; the slack lets every class's first buffer go without
waiting for it, so only the pace and the bounded lead are the transport's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Gates:
    """Per class c the classes ``cls[ptr[c]:ptr[c+1]]`` whose delivered bytes hold it
    back (it passes their data on, or they pass on its data), and `slack_bytes` per class:
    the lead it may take over any of them (one connection buffer per flow of the class)."""

    ptr: np.ndarray
    cls: np.ndarray
    slack_bytes: np.ndarray

    @property
    def n_gates(self) -> int:
        """Number of (class, gating class) pairs."""
        return int(self.cls.shape[0])


def no_gates(n_classes: int) -> Gates:
    """Gates of classes that pace nobody and are paced by nobody."""
    return Gates(
        ptr=np.zeros(n_classes + 1, dtype=np.int64),
        cls=np.zeros(0, dtype=np.int64),
        slack_bytes=np.zeros(n_classes),
    )


def gates_from_edges(
    n_classes: int, feeder: np.ndarray, forwarder: np.ndarray, slack_bytes: np.ndarray
) -> Gates:
    """The gates of forwarding edges ``feeder[i] -> forwarder[i]`` (class indices): each
    end is held by the other's delivered bytes. An edge given twice (either way) counts
    once; an edge from a class to itself is none."""
    a = np.asarray(feeder, dtype=np.int64)
    b = np.asarray(forwarder, dtype=np.int64)
    keep = a != b
    pairs = np.stack([np.minimum(a, b)[keep], np.maximum(a, b)[keep]], axis=1)
    pairs = np.unique(pairs.reshape(-1, 2), axis=0)
    held = np.concatenate([pairs[:, 0], pairs[:, 1]])
    by = np.concatenate([pairs[:, 1], pairs[:, 0]])
    order = np.lexsort((by, held))
    ptr = np.zeros(n_classes + 1, dtype=np.int64)
    np.cumsum(np.bincount(held, minlength=n_classes), out=ptr[1:])
    return Gates(ptr=ptr, cls=by[order], slack_bytes=np.asarray(slack_bytes, dtype=np.float64))


def check_gates(gates: Gates, n_classes: int) -> None:
    """Refuse gates that do not fit `n_classes` classes, naming what is wrong."""
    if gates.ptr.shape != (n_classes + 1,) or gates.slack_bytes.shape != (n_classes,):
        raise ValueError(f"gates are sized for {gates.ptr.shape[0] - 1} classes, not {n_classes}")
    if gates.cls.size and (gates.cls.min() < 0 or gates.cls.max() >= n_classes):
        raise ValueError(f"a gate names a class outside 0..{n_classes - 1}")
    if np.any(gates.slack_bytes < 0):
        raise ValueError("a gate's slack is negative")


def time_to_bind(
    gates: Gates,
    size: np.ndarray,
    remaining: np.ndarray,
    delivered: np.ndarray,
    finished: np.ndarray,
    rate: np.ndarray,
    free_bytes: np.ndarray,
) -> float:
    """Seconds until a gate not yet in force starts to hold its class back, every class
    going on at `rate` (bytes/s, sent and delivered alike: a settled stretch); ``inf``
    when none will. A gate counts as in force once its class has no more than
    `free_bytes` (per class) of room left: it already moves at its gate's pace.

    The driver must not jump past this moment: past it the class's settled rate is no
    longer what it would send (`engine.transport.simulate`)."""
    held = np.repeat(np.arange(size.shape[0]), np.diff(gates.ptr))
    if held.size == 0:
        return float("inf")
    d = gates.cls
    live = ~finished[held] & ~finished[d]
    room = (
        (delivered[d] / size[d]) * size[held]
        + gates.slack_bytes[held]
        - (size[held] - remaining[held])
    )
    closing = rate[held] - rate[d] / size[d] * size[held]  # bytes/s the room shrinks by
    free = live & (room > free_bytes[held]) & (closing > 0.0)
    if not free.any():
        return float("inf")
    return float(np.min(room[free] / closing[free]))
