"""How fine and how deep a run's FIFO egress rings are (`engine.transport.fifo`).

A bin must be finer than the gaps a PFC pause leaves among a sender's bytes: one step, a
packet's time at 400 Gb/s, by default (`TransportConfig.fifo_bin_s`). A ring must reach as
deep as a queue of the run can stand: what the buffers feeding the link can hold (the far
ends of the links into it on a lossless fabric, its port's buffer on a lossy one) over the
link's rate, at most `fifo_depth_s`. The rings take a float per bin per shared queue and
per class in one (a queue of one class keeps none), a power of two of bins per ring (a
bin's place in it is then a mask, not a division); where `MAX_FIFO_BYTES` would not hold
them, the bins widen until the deepest queue fits.
"""

from __future__ import annotations

import math

import numpy as np

from engine.transport.params import TransportConfig
from engine.transport.structures import EntryTable, LinkTable

# The FIFO rings of a run may use this much memory (allocated untouched: pages are taken
# as bins are first written).
MAX_FIFO_BYTES = 128 * 2**20
EGRESS_SERVICES = ("fifo", "even")


def check_egress_service(config: TransportConfig) -> None:
    """Raise ValueError naming the setting when the egress service is not one the model
    has, or its bins are not positive."""
    if config.egress_service not in EGRESS_SERVICES:
        raise ValueError(
            f"unknown egress_service {config.egress_service!r}; use one of "
            f"{', '.join(EGRESS_SERVICES)}"
        )
    if not (config.fifo_bin_s > 0.0 and config.fifo_depth_s > 0.0):
        raise ValueError(
            f"fifo_bin_s and fifo_depth_s must be positive (got {config.fifo_bin_s!r} and "
            f"{config.fifo_depth_s!r})"
        )


def binned_entries(links: LinkTable, entries: EntryTable) -> np.ndarray:
    """Which entries keep FIFO bins: those queued (past their first hop) at a queue two or
    more classes share (`LinkTable.shared`)."""
    return (entries.prev >= 0) & links.shared[entries.link]


def fifo_columns(links: LinkTable, entries: EntryTable) -> tuple[np.ndarray, np.ndarray]:
    """Each entry's and each link's column of the FIFO bins (-1: none), in the order of
    the entries and links: the step walks entries in that order, and while queues are
    shallow their heads and tails share a row, so it reads and writes a row in order (by
    link instead, a 64k-host permutation's step took a third longer)."""
    binned = binned_entries(links, entries)
    entry_at = np.full(entries.link.shape[0], -1, dtype=np.int64)
    entry_at[binned] = np.arange(int(np.count_nonzero(binned)))
    link_at = np.full(links.capacity.shape[0], -1, dtype=np.int64)
    link_at[links.shared] = np.arange(int(np.count_nonzero(links.shared)))
    return entry_at, link_at


def deepest_queue_s(links: LinkTable, entries: EntryTable, lossy: bool) -> float:
    """The longest any shared egress queue of the run can take to drain at its link's
    rate (``inf`` when a buffer feeding one is unbounded)."""
    queued = binned_entries(links, entries)
    if not queued.any():
        return 0.0
    n_links = links.capacity.shape[0]
    link = entries.link[queued].astype(np.int64)
    if lossy:
        used = np.unique(link)
        return float(np.max(links.egress_buffer[used] / links.capacity[used]))
    pairs = np.unique(link * n_links + entries.prev[queued])
    into, feeding = pairs // n_links, pairs % n_links
    held = np.bincount(into, weights=links.buffer[feeding], minlength=n_links)
    used = np.unique(into)
    return float(np.max(held[used] / links.capacity[used]))


def fifo_shape(
    links: LinkTable, entries: EntryTable, lossy: bool, dt: float, config: TransportConfig
) -> tuple[int, int]:
    """Steps per bin and bins per ring of a run (no bins under the even service)."""
    check_egress_service(config)
    if config.egress_service == "even":
        return 1, 0
    depth_steps = math.ceil(min(deepest_queue_s(links, entries, lossy), config.fifo_depth_s) / dt)
    columns = int(np.count_nonzero(binned_entries(links, entries)))
    columns += int(np.count_nonzero(links.shared))
    most_bins = max(2, MAX_FIFO_BYTES // (8 * max(columns, 1)))
    most_bins = 1 << (most_bins.bit_length() - 1)  # a power of two: a bin's place is a mask
    bin_steps = max(1, round(config.fifo_bin_s / dt), math.ceil(depth_steps / (most_bins - 1)))
    return bin_steps, max(2, 1 << math.ceil(depth_steps / bin_steps).bit_length())
