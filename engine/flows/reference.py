"""Plain-Python reference for the max-min solver, fluid simulation and link loads of
`engine.flows.solver`.

Written independently of the kernels, in the textbook "bottleneck" form: repeatedly find the
link whose remaining capacity, shared by the weights of its unfixed flows, is smallest; fix
those flows at that level; repeat. The tests compare the numba kernels against it, and the
benchmarks time it on the same case.
"""

from __future__ import annotations

from collections.abc import Sequence

SATURATION_TOLERANCE = 1e-12


def max_min_reference(
    paths: Sequence[Sequence[tuple[int, float]]], capacity: Sequence[float]
) -> list[float]:
    """Max-min fair rates; ``paths[f]`` lists flow f's (link, weight) pairs."""
    n = len(paths)
    rate = [0.0] * n
    fixed = [len(p) == 0 for p in paths]
    used = [0.0] * len(capacity)  # capacity taken by fixed flows
    while not all(fixed):
        weight_on = {}
        for f, path in enumerate(paths):
            if not fixed[f]:
                for link, w in path:
                    weight_on[link] = weight_on.get(link, 0.0) + w
        level, bottlenecks = float("inf"), []
        for link, w in weight_on.items():
            share = max(capacity[link] - used[link], 0.0) / w
            if share < level * (1 - 1e-13):
                level, bottlenecks = share, [link]
            elif share <= level * (1 + 1e-13):
                bottlenecks.append(link)
        full = set(bottlenecks)
        for f, path in enumerate(paths):
            if not fixed[f] and any(link in full for link, _ in path):
                fixed[f] = True
                rate[f] = level
                for link, w in path:
                    used[link] += w * level
    return rate


def fluid_reference(
    paths: Sequence[Sequence[tuple[int, float]]], capacity: Sequence[float], sizes: Sequence[float]
) -> list[float]:
    """Finish time of every flow of `sizes` bytes, all started at 0, by repeated max-min
    (the flow that sets each step ends at it, whatever its bytes round to)."""
    n = len(paths)
    remaining = list(sizes)
    finish = [0.0] * n
    active = [sizes[f] > 0 and len(paths[f]) > 0 for f in range(n)]
    now = 0.0
    while any(active):
        current = [paths[f] if active[f] else [] for f in range(n)]
        rates = max_min_reference(current, capacity)
        moving = [f for f in range(n) if active[f] and rates[f] > 0]
        first = min(moving, key=lambda f: remaining[f] / rates[f])  # the first at the least
        dt = remaining[first] / rates[first]
        now += dt
        for f in range(n):
            if active[f]:
                remaining[f] -= rates[f] * dt
                if f == first or remaining[f] <= 1e-12 * sizes[f]:
                    active[f] = False
                    finish[f] = now
    return finish


def link_loads_reference(
    paths: Sequence[Sequence[tuple[int, float]]], rates: Sequence[float], n_links: int
) -> list[float]:
    """Load of every link: each flow's (link, weight) pairs in order, weight times rate
    added to the link (the order, and so the rounding, of the kernel)."""
    loads = [0.0] * n_links
    for path, rate in zip(paths, rates, strict=True):
        for link, w in path:
            loads[link] += w * rate
    return loads
