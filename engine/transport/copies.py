"""Independent copies inside a transport network, so that a run steps each only once.

Flow classes interact only through the links they cross: the kernel's every per-link sum
runs over the classes on that link, and every per-class figure reads only the links of its
path. A network whose classes fall apart into parts that share no link (a permutation's
pairs that meet no other pair, the rings of a collective stage that stay on their own
rails) is a set of independent sub-networks; two parts that are copies of each other, the
kernel's numbers equal link for link and class for class *in the same order*, take the
same operations in the same order and come out with the same numbers, bit for bit. The
driver's decisions (settle, jump, stop) read every class and link, and copies agree on
them too. So the driver (`engine.transport.simulate`) may run one part of each kind and copy
its figures to the others: `find_copies` says which, or None when nothing repeats.

The premise is that links meet only through classes. A mechanism that joins links some
other way (a buffer shared by the ports of one switch, say) must join them here too, in
`_components`, or this module would split what the kernel couples. Pipeline gates
(`engine.transport.gates`) couple classes directly: a gate joins the first links of the
two classes it ties, and two parts are copies only if their gates tie the same places.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from engine.transport.gates import Gates
from engine.transport.network import FlowClasses, TransportNetwork
from engine.transport.structures import GateTable, Tables


@dataclass(frozen=True)
class Copies:
    """A smaller network holding one part of each kind, and where every class and link of
    the whole network finds its twin in it (`class_of`, `link_of`: indices into the
    smaller network's classes and links). The driver also maps a network put in another
    order this way (`engine.transport.blocks.arrange`)."""

    network: TransportNetwork
    class_of: np.ndarray
    link_of: np.ndarray


def _components(ptr: np.ndarray, path: np.ndarray, n_links: int) -> np.ndarray:
    """Per link, the smallest link index of its part (links joined by classes that cross
    them both): min-label propagation with shortcuts, a few numpy passes."""
    label = np.arange(n_links, dtype=np.int64)
    lengths = np.diff(ptr)
    while True:
        by_class = np.minimum.reduceat(label[path], ptr[:-1]) if path.size else path
        new = label.copy()
        np.minimum.at(new, path, np.repeat(by_class, lengths))
        new = new[new]  # a label is a link of the same part with a label no larger
        if np.array_equal(new, label):
            return label
        label = new


def _bits(values: np.ndarray) -> np.ndarray:
    """The bit pattern of numbers as int64 (equal bits: the kernel reads equal numbers)."""
    return np.ascontiguousarray(values, dtype=np.float64).view(np.int64)


# Entry fields the paths themselves say (the key holds the paths).
_PATH_FIELDS = ("link", "prev", "cls")


def _kernel_rows(
    tables: Tables, n_classes: int, n_entries: int, n_links: int
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] | None:
    """The bits of every per-class, per-entry and per-link number of the kernel's tables
    (None when a table holds an array of another shape, which the key could not compare)."""
    out: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
    groups = (
        (tables.classes, n_classes, ("ptr",), out[0]),
        (tables.entries, n_entries, _PATH_FIELDS, out[1]),
        (tables.links, n_links, (), out[2]),
    )
    for table, size, skip, rows in groups:
        for name, a in zip(table._fields, table, strict=True):
            if name in skip:
                continue
            if a.shape != (size,):
                return None
            rows.append(_bits(a))
    return out


def parts(
    ptr: np.ndarray, path: np.ndarray, n_links: int, gates: GateTable
) -> tuple[np.ndarray, np.ndarray]:
    """The parts (their labels) and each link's part: links joined by a class crossing
    them, or by a gate (which joins its two classes as a two-link path would: their first
    links)."""
    held = np.repeat(np.arange(ptr.size - 1), np.diff(gates.ptr))
    joins = np.stack([path[ptr[held]], path[ptr[gates.cls]]], axis=1).ravel()
    join_ptr = np.concatenate([ptr, ptr[-1] + 2 * np.arange(1, held.size + 1)])
    label = _components(join_ptr, np.concatenate([path, joins]), n_links)
    return np.unique(label, return_inverse=True)


def ranks_in_parts(tables: Tables) -> np.ndarray:
    """Each class's place among the classes of its part, in class order: the same in a
    part and in its copies, so a run of the copies once matches the whole run."""
    ptr = tables.classes.ptr.astype(np.int64)
    path = tables.entries.link.astype(np.int64)
    n_classes = ptr.size - 1
    if n_classes == 0:
        return np.zeros(0, dtype=np.int64)
    _, part_of_link = parts(ptr, path, tables.links.capacity.shape[0], tables.gates)
    part_of_class = part_of_link[path[ptr[:-1]]]
    order = np.argsort(part_of_class, kind="stable")
    counts = np.bincount(part_of_class)
    rank = np.empty(n_classes, dtype=np.int64)
    starts = np.cumsum(counts) - counts
    rank[order] = np.arange(n_classes) - starts[part_of_class[order]]
    return rank


def find_copies(network: TransportNetwork, tables: Tables) -> Copies | None:
    """One part of each kind of `network` (whose kernel tables are `tables`) and the map
    of the whole onto it; None when no part repeats (then the whole network runs)."""
    cl = network.classes
    ptr, path = cl.ptr.astype(np.int64), cl.links.astype(np.int64)
    n_classes, n_links = cl.n_classes, network.links.n_links
    gates = tables.gates
    held = np.repeat(np.arange(n_classes), np.diff(gates.ptr))
    labels, part_of_link = parts(ptr, path, n_links, gates)
    n_parts = labels.size
    if n_parts < 2:
        return None
    part_of_class = part_of_link[path[ptr[:-1]]]
    lengths = np.diff(ptr)
    n_class_in = np.bincount(part_of_class, minlength=n_parts)
    n_hop_in = np.bincount(part_of_class, weights=lengths, minlength=n_parts).astype(np.int64)
    n_link_in = np.bincount(part_of_link, minlength=n_parts)
    n_gate_in = np.bincount(part_of_class[held], minlength=n_parts)
    # Only parts of the same size can be copies: none such, nothing to compare.
    sizes = np.stack([n_class_in, n_hop_in, n_link_in, n_gate_in], axis=1)
    _, size_kind = np.unique(sizes, axis=0, return_inverse=True)
    size_kind = size_kind.reshape(-1)
    if np.bincount(size_kind).max() < 2:
        return None
    # Classes part by part, in their order; their hops in path order.
    class_order = np.argsort(part_of_class, kind="stable")
    hop_start = np.repeat(ptr[class_order], lengths[class_order])
    hop_pos = np.arange(path.size) - np.repeat(
        np.cumsum(lengths[class_order]) - lengths[class_order], lengths[class_order]
    )
    hop_entry = hop_start + hop_pos
    hops = path[hop_entry]
    # Links part by part: those on a path in order of first use, then any unused one.
    first_use = np.full(n_links, path.size, dtype=np.int64)
    np.minimum.at(first_use, hops, np.arange(hops.size))
    link_order = np.lexsort((np.arange(n_links), first_use, part_of_link))
    class_start = np.cumsum(n_class_in) - n_class_in
    hop_first = np.cumsum(n_hop_in) - n_hop_in
    link_start = np.cumsum(n_link_in) - n_link_in
    local = np.empty(n_links, dtype=np.int64)
    local[link_order] = np.arange(n_links) - np.repeat(link_start, n_link_in)
    rows = _kernel_rows(tables, n_classes, path.size, n_links)
    if rows is None:
        return None
    class_rows, entry_rows, link_rows = rows
    class_rows.insert(0, lengths)
    class_rows += [np.diff(gates.ptr), _bits(gates.slack)]
    class_rank = np.empty(n_classes, dtype=np.int64)
    class_rank[class_order] = np.arange(n_classes) - np.repeat(class_start, n_class_in)
    # Gates class by class in the parts' class order, each as the place of the gating
    # class in its part.
    gate_order = _gate_order(gates, class_order)
    gate_first = np.cumsum(n_gate_in) - n_gate_in
    gate_rows = [class_rank[gates.cls]]
    twin = np.arange(n_parts)  # per part, the first part it copies
    for kind in np.unique(size_kind):
        members = np.flatnonzero(size_kind == kind)
        if members.size < 2:
            continue
        nc, nh, nl, ng = sizes[members[0]]
        ci = class_order[class_start[members][:, None] + np.arange(nc)]
        hi = hop_entry[hop_first[members][:, None] + np.arange(nh)]
        li = link_order[link_start[members][:, None] + np.arange(nl)]
        gi = gate_order[gate_first[members][:, None] + np.arange(ng)]
        key = np.concatenate(
            [local[path[hi]]]
            + [r[ci] for r in class_rows]
            + [r[hi] for r in entry_rows]
            + [r[li] for r in link_rows]
            + [r[gi] for r in gate_rows],
            axis=1,
        )
        key = np.ascontiguousarray(key)
        rows = key.view(np.dtype((np.void, key.dtype.itemsize * key.shape[1]))).ravel()
        _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
        twin[members] = members[first[inverse.reshape(-1)]]
    kept = twin == np.arange(n_parts)
    if kept.all():
        return None
    keep_class = np.flatnonzero(kept[part_of_class])
    keep_link = np.flatnonzero(kept[part_of_link])
    new_link = np.full(n_links, -1, dtype=np.int64)
    new_link[keep_link] = np.arange(keep_link.size)
    new_class = np.full(n_classes, -1, dtype=np.int64)
    new_class[keep_class] = np.arange(keep_class.size)
    # A class's twin: the class at its place in its part's twin; the same for links.
    twin_class = class_order[class_start[twin[part_of_class]] + class_rank]
    twin_link = link_order[link_start[twin[part_of_link]] + local]
    return Copies(
        network=subnetwork(network, keep_class, keep_link, new_link, new_class),
        class_of=new_class[twin_class],
        link_of=new_link[twin_link],
    )


def _gate_order(gates: Gates | GateTable, class_order: np.ndarray) -> np.ndarray:
    """Gate indices class by class in `class_order`, each class's gates in their order."""
    counts = np.diff(gates.ptr)[class_order]
    starts = np.repeat(gates.ptr[class_order], counts)
    return starts + np.arange(starts.size) - np.repeat(np.cumsum(counts) - counts, counts)


def subnetwork(
    network: TransportNetwork,
    keep_class: np.ndarray,
    keep_link: np.ndarray,
    new_link: np.ndarray,
    new_class: np.ndarray,
) -> TransportNetwork:
    """The classes `keep_class` on the links `keep_link` (both in their order; every kept
    class's links among them), paths renumbered by `new_link`, gates by `new_class`; a
    gate on a class left out is left out too (in a part of copies none is: a gate ties
    its classes to one part; in a run's live part it was a finished class's, which holds
    nothing back)."""
    cl = network.classes
    lengths = np.diff(cl.ptr)[keep_class]
    ptr = np.zeros(keep_class.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    starts = np.repeat(cl.ptr[keep_class], lengths)
    offsets = np.arange(ptr[-1]) - np.repeat(ptr[:-1], lengths)
    classes = FlowClasses(
        ptr=ptr,
        links=new_link[cl.links[starts + offsets]],
        multiplicity=cl.multiplicity[keep_class],
        bytes=cl.bytes[keep_class],
        start_s=cl.start_s[keep_class],
        feedback_delay_s=cl.feedback_delay_s[keep_class],
    )
    lk = network.links
    links = replace(
        lk,
        **{
            name: getattr(lk, name)[keep_link]
            for name in lk.__dataclass_fields__
            if getattr(lk, name) is not None
        },
    )
    gates = None
    if network.gates is not None:
        g = network.gates
        order = _gate_order(g, keep_class)
        held = np.repeat(np.arange(keep_class.size), np.diff(g.ptr)[keep_class])
        target = new_class[g.cls[order]]
        kept = target >= 0
        ptr = np.zeros(keep_class.size + 1, dtype=np.int64)
        np.cumsum(np.bincount(held[kept], minlength=keep_class.size), out=ptr[1:])
        gates = Gates(ptr, target[kept], g.slack_bytes[keep_class])
    return TransportNetwork(
        links=links,
        classes=classes,
        flow_class=np.arange(keep_class.size, dtype=np.int64),
        link_names=tuple(network.link_names[i] for i in keep_link) if network.link_names else (),
        gates=gates,
    )
