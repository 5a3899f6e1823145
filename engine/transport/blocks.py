"""Cache-sized blocks of a transport network, so that a window's steps stay in the cache.

Flow classes interact only through the links they cross (`engine.transport.copies`), so a
network falls apart into parts that share no link. A step walks some forty arrays per
class, entry and link; at 16,384 GPUs (15,000 classes, 65,000 links, 90,000 entries)
they no longer fit in a core's cache, and an element's step cost 24 ns there against 11 in
a 1,024-GPU network. Ordered so that each part's classes and links sit together
(`arrange`), the network is cut into blocks of whole parts of about `BLOCK_ELEMENTS`
classes, entries and links (`block_table`), and the kernel (`engine.transport.step`)
takes a window's steps one block at a time. A block's numbers come from the same
operations on the same numbers in the same order, so the run is the unblocked run bit for
bit; a part larger than a block is a block of its own.
"""

from __future__ import annotations

import numpy as np

from engine.transport.copies import parts, subnetwork
from engine.transport.network import TransportNetwork
from engine.transport.structures import BlockTable, GateTable

# Classes, entries and links per block: some forty arrays of 8 bytes each, 640 KiB, well
# within a core's 2 MiB second-level cache. Measured (2026-12-06, 2-core machine) on the
# growth benchmark's 4k and 16k permutations: 2,048 beat 8,192 by 5-8% (noise about 5%);
# 4,096 and 16,384 were no better.
BLOCK_ELEMENTS = 2048
# Below this, a network is one block: its arrays fit in the cache as they are.
MIN_ELEMENTS = 4 * BLOCK_ELEMENTS


def _ranks(
    ptr: np.ndarray, path: np.ndarray, n_links: int, gates: GateTable
) -> tuple[np.ndarray, np.ndarray]:
    """Each class's and each link's part, as the part's rank in the order of its first
    class (parts without a class after all others)."""
    n_classes = ptr.size - 1
    labels, part_of_link = parts(ptr, path, n_links, gates)
    part_of_class = part_of_link[path[ptr[:-1]]]
    first = np.full(labels.size, n_classes, dtype=np.int64)
    np.minimum.at(first, part_of_class, np.arange(n_classes))
    rank = np.empty(labels.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(labels.size)
    return rank[part_of_class], rank[part_of_link]


def _elements(ptr: np.ndarray, path: np.ndarray, n_links: int) -> int:
    return ptr.size - 1 + path.size + n_links


def arrange(
    network: TransportNetwork, gates: GateTable
) -> tuple[TransportNetwork, np.ndarray, np.ndarray] | None:
    """`network` with each part's classes and links together (parts in the order of their
    first class, each part's classes and links in their order), and where each class and
    link went; None when the network is one block or already in that order."""
    cl = network.classes
    ptr, path = cl.ptr.astype(np.int64), cl.links.astype(np.int64)
    n_links = network.links.n_links
    if _elements(ptr, path, n_links) < MIN_ELEMENTS:
        return None
    class_rank, link_rank = _ranks(ptr, path, n_links, gates)
    class_order = np.argsort(class_rank, kind="stable")
    link_order = np.argsort(link_rank, kind="stable")
    if np.array_equal(class_order, np.arange(class_order.size)) and np.array_equal(
        link_order, np.arange(n_links)
    ):
        return None
    new_class = np.empty(class_order.size, dtype=np.int64)
    new_class[class_order] = np.arange(class_order.size)
    new_link = np.empty(n_links, dtype=np.int64)
    new_link[link_order] = np.arange(n_links)
    return subnetwork(network, class_order, link_order, new_link, new_class), new_class, new_link


def one_block(n_classes: int, n_entries: int, n_links: int, n_groups: int) -> BlockTable:
    """The whole network as one block."""
    return BlockTable(
        *(np.array([0, n], dtype=np.int64) for n in (n_classes, n_entries, n_links, n_groups))
    )


def block_table(
    ptr: np.ndarray, path: np.ndarray, n_links: int, gates: GateTable, group_links: np.ndarray
) -> BlockTable:
    """Blocks of about `BLOCK_ELEMENTS` elements of a network in the order `arrange` gives
    (or a part of one, as a run's live part is), cut only where the classes before a cut
    cross only links before it and no gate ties across it; `group_links` is the sending
    NIC link of each injection group, ascending. One block when the network is small or
    has no clean cut."""
    n_classes, n_entries, n_groups = ptr.size - 1, path.size, group_links.size
    whole = one_block(n_classes, n_entries, n_links, n_groups)
    if _elements(ptr, path, n_links) < MIN_ELEMENTS or n_classes < 2:
        return whole
    starts = ptr[:-1]
    lowest_after = np.minimum.accumulate(np.minimum.reduceat(path, starts)[::-1])[::-1]
    highest_before = np.maximum.accumulate(np.maximum.reduceat(path, starts))
    tied = np.arange(n_classes)
    held = np.repeat(np.arange(n_classes), np.diff(gates.ptr))
    np.maximum.at(tied, held, gates.cls)
    np.maximum.at(tied, gates.cls, held)
    tied_before = np.maximum.accumulate(tied)
    at = np.arange(1, n_classes)
    clean = at[(highest_before[:-1] < lowest_after[1:]) & (tied_before[:-1] < at)]
    if clean.size == 0:
        return whole
    # the first clean cut past each multiple of the block size
    filled = (clean + ptr[clean] + lowest_after[clean]) // BLOCK_ELEMENTS
    first = np.flatnonzero(np.diff(filled, prepend=0) > 0)
    if first.size == 0:
        return whole
    cuts = clean[first]
    classes = np.concatenate([[0], cuts, [n_classes]])
    links = np.concatenate([[0], lowest_after[cuts], [n_links]])
    groups = np.searchsorted(group_links, links, side="left")
    groups[-1] = n_groups
    return BlockTable(*(a.astype(np.int64) for a in (classes, ptr[classes], links, groups)))
