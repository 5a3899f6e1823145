"""Which nodes and links of a fabric stand alike: colour refinement of its graph.

A fat-tree or a rail-optimized fabric is built of parts that repeat: every leaf of a tier
sees the same below and above it, every GPU the same around it. Traffic that is as regular
as the fabric (an all-to-all over every GPU) then loads every link of a kind alike, and a
model may run one link and one flow of each kind with their counts
(`engine.collectives.lumped_all_to_all`). Which kinds there are is what this module finds, by
colour refinement (the 1-dimensional Weisfeiler-Leman procedure): nodes start coloured by
what they are (GPU, switch model, ...), links by their figures (capacity, latency, cable),
and a node's colour is refined by the colours of its links and of the nodes at their other
ends until no colour splits. Nodes of one stable colour have the same number of links of
each colour to nodes of each colour, in each direction: an equitable partition, which on
the fabrics FabricLab builds is the set of orbits of the fabric's symmetries. Refinement
cannot split nodes a symmetry maps onto each other, so a fabric with one failed cable,
another cable length or switch model in one place comes out with more colours, not wrong
ones.

`relative_colours` refines once more with one node given a colour of its own: the colours
then say where every other node stands *as seen from that node* (same leaf, same pod,
another pod), which is what groups the destinations of that node's traffic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.runtime.colour_hash import combine, dense, multiset_sum
from engine.topology.expand import NVLINK_BUNDLE, Fabric

MAX_ROUNDS = 64  # a fabric's diameter bounds the rounds needed; far more than any has


@dataclass(frozen=True)
class Colouring:
    """Stable colours of a fabric: per node and per directed link, small integers (equal
    colour: alike). `link` folds in the colours of the link's two ends."""

    node: np.ndarray
    link: np.ndarray

    @property
    def n_node_colours(self) -> int:
        """Number of node colours."""
        return int(self.node.max()) + 1 if self.node.size else 0


def _text_code(names: list[str]) -> np.ndarray:
    """A code per string, equal strings equal codes."""
    return np.unique(np.asarray(names, dtype=object).astype(str), return_inverse=True)[1]


def initial_colours(
    fabric: Fabric, members: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(node colours, link colours) before refinement: a node by its kind and catalog model
    (a GPU also by its network line rate, and, with `members` (GPU ids), by whether it is
    one of them), a link by its capacity, latency and cable (bundle length and cable model;
    NVLink apart; in a hybrid fabric, its segment)."""
    groups = fabric.scenario.groups
    model = _text_code([g.model for g in groups])[fabric.node_group.astype(np.int64)]
    rate = np.zeros(fabric.node_kind.shape[0])
    gpus = gpu_nodes(fabric)
    rate[gpus] = fabric.gpu_line_rate
    member = np.zeros(fabric.node_kind.shape[0], dtype=np.int64)
    if members is not None:
        member[gpus[np.asarray(members, dtype=np.int64)]] = 1
    node = combine(
        fabric.node_kind.astype(np.int64),
        model,
        np.ascontiguousarray(rate).view(np.int64),
        member,
    )
    bundles = fabric.scenario.bundles
    b = fabric.link_bundle.astype(np.int64)
    cable = np.append(_text_code([x.cable for x in bundles] + ["nvlink"]), 0)
    length = np.append(np.array([x.length_m for x in bundles] + [0.0]), 0.0)
    on_b = np.where(b == NVLINK_BUNDLE, len(bundles), b)
    ethernet = np.zeros(len(bundles) + 1, dtype=np.int64)
    if fabric.bundle_ethernet is not None:
        ethernet[: len(bundles)] = fabric.bundle_ethernet
    link = combine(
        np.ascontiguousarray(fabric.link_capacity).view(np.int64),
        np.ascontiguousarray(fabric.link_latency).view(np.int64),
        cable[on_b],
        np.ascontiguousarray(length[on_b]).view(np.int64),
        (b == NVLINK_BUNDLE).astype(np.int64),
        ethernet[on_b],
    )
    return dense(node), dense(link)


def refine(
    fabric: Fabric, node: np.ndarray, link: np.ndarray, individual: int | None = None
) -> Colouring:
    """Refine node colours `node` by the links' colours `link` until stable; with
    `individual`, that node first gets a colour of its own."""
    colour = node.astype(np.int64).copy()
    if individual is not None:
        colour[individual] = colour.max() + 1
    src, dst = fabric.link_src.astype(np.int64), fabric.link_dst.astype(np.int64)
    n_nodes = colour.shape[0]
    count = np.unique(colour).size
    for _ in range(MAX_ROUNDS):
        seen_out = combine(link, colour[dst], np.ones_like(link))
        seen_in = combine(link, colour[src], np.full_like(link, 2))
        with np.errstate(over="ignore"):
            sums = multiset_sum(src, seen_out, n_nodes) + multiset_sum(dst, seen_in, n_nodes)
        new = dense(combine(colour, sums.view(np.int64)))
        new_count = int(new.max()) + 1 if new.size else 0
        colour = new
        if new_count == count:
            break
        count = new_count
    link_colour = dense(combine(link, colour[src], colour[dst]))
    return Colouring(node=colour, link=link_colour)


def fabric_colours(fabric: Fabric, members: np.ndarray | None = None) -> Colouring:
    """The fabric's stable colours (see the module docstring); with `members` (GPU ids),
    those GPUs set apart from the others first (what stands alike as seen by them)."""
    node, link = initial_colours(fabric, members)
    return refine(fabric, node, link)


def relative_colours(fabric: Fabric, stable: Colouring, node: int) -> Colouring:
    """The colours as seen from `node`: `stable` refined with `node` set apart."""
    _, link = initial_colours(fabric)
    return refine(fabric, stable.node, link, individual=node)


def gpu_nodes(fabric: Fabric) -> np.ndarray:
    """The node index of every GPU, in GPU order (for the colours of GPUs)."""
    return fabric.link_src[fabric.gpu_nvlink_up]
