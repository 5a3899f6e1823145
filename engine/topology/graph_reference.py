"""Plain-Python twins of `engine.topology.graph_kernels`, used by the tests as the reference."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence


def component_labels_reference(n_nodes: int, src: Sequence[int], dst: Sequence[int]) -> list[int]:
    """Smallest node index of each node's (undirected) connected component."""
    neighbours: list[list[int]] = [[] for _ in range(n_nodes)]
    for a, b in zip(src, dst, strict=True):
        neighbours[a].append(b)
        neighbours[b].append(a)
    label = [-1] * n_nodes
    for start in range(n_nodes):
        if label[start] >= 0:
            continue
        label[start] = start
        queue = deque([start])
        while queue:
            node = queue.popleft()
            for other in neighbours[node]:
                if label[other] < 0:
                    label[other] = start
                    queue.append(other)
    return label


def distances_reference(
    n_nodes: int,
    src: Sequence[int],
    dst: Sequence[int],
    transit: Sequence[bool],
    targets: Sequence[int],
) -> list[int]:
    """Hops from every node to the nearest target along directed links (-1: unreachable).

    Only `transit` nodes are given a distance (other than the targets themselves).
    """
    incoming: list[list[int]] = [[] for _ in range(n_nodes)]
    for a, b in zip(src, dst, strict=True):
        incoming[b].append(a)
    dist = [-1] * n_nodes
    queue = deque()
    for t in targets:
        dist[t] = 0
        queue.append(t)
    while queue:
        node = queue.popleft()
        for prev in incoming[node]:
            if transit[prev] and dist[prev] < 0:
                dist[prev] = dist[node] + 1
                queue.append(prev)
    return dist
