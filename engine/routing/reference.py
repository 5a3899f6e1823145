"""Plain-Python twin of the routing kernels, for tests on small fabrics.

It recomputes distances with breadth-first search from scratch, finds equal-cost next hops,
and applies the policies: the same hash choice as ECMP (each node's salt worked out from its
group's tier or model under the hash scope) and as hop-by-hop adaptive routing among the
least-loaded next hops, an even split for spraying, and for adaptive routing the full set of
paths it may choose (found by enumerating every equal-cost path), so the kernels' entries
can be checked one by one.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from engine.model.scenario import RoutingPolicy
from engine.topology.expand import NODE_SWITCH, Fabric

MASK64 = (1 << 64) - 1


def mix64_reference(x: int) -> int:
    """splitmix64 finaliser on Python integers."""
    x &= MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def text_key_reference(text: str) -> int:
    """FNV-1a of the UTF-8 bytes of `text`, the key of `engine.routing.hashing.text_key`."""
    h = 0xCBF29CE484222325
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 0x100000001B3) & MASK64
    return h


def node_salt_reference(fabric: Fabric, node: int, hash_scope: str) -> int:
    """The salt of `node`'s ECMP hash function under `hash_scope`.

    ``switch``: its own (the node id, mixed); ``tier``, ``model``: that of its group's tier or
    catalog model; ``fabric``: one salt for all.
    """
    if hash_scope == "switch":
        return mix64_reference(node)
    group = fabric.scenario.groups[int(fabric.node_group[node])]
    shared = {"tier": f"tier:{group.tier}", "model": f"model:{group.model}", "fabric": "fabric:"}
    return mix64_reference(text_key_reference(shared[hash_scope]))


def flow_hash_reference(src: int, dst: int, sub: int, seed: int) -> int:
    """The per-flow ECMP hash of `engine.routing.hashing.flow_hashes`."""
    base = mix64_reference(seed + 0x9E3779B97F4A7C15)
    h = mix64_reference(base ^ src)
    h = mix64_reference(h ^ ((dst << 20) & MASK64))
    return mix64_reference(h ^ ((sub << 44) & MASK64))


class ReferenceRouter:
    """Routes one flow at a time over the fabric's network links, all in Python.

    `hash_scope` is the policy's (``RoutingPolicy.hash_scope``, its default when not given):
    which nodes hash alike.
    """

    def __init__(self, fabric: Fabric, hash_scope: str = RoutingPolicy.hash_scope):
        self.f = fabric
        self.hash_scope = hash_scope
        net = np.flatnonzero(fabric.network_link_mask())
        self.out: dict[int, list[int]] = {}
        self.inc: dict[int, list[int]] = {}
        for link in sorted(net, key=lambda e: (fabric.link_src[e], fabric.link_dst[e], e)):
            self.out.setdefault(int(fabric.link_src[link]), []).append(int(link))
        for link in net:
            self.inc.setdefault(int(fabric.link_dst[link]), []).append(int(fabric.link_src[link]))
        self.is_switch = fabric.node_kind == NODE_SWITCH

    def _dist(self, target_gpu: int) -> dict[int, int]:
        targets = {int(self.f.link_dst[e]) for e in self.out.get(target_gpu, [])}
        dist = dict.fromkeys(targets, 0)
        queue = deque(targets)
        while queue:
            node = queue.popleft()
            for prev in self.inc.get(node, []):
                if self.is_switch[prev] and prev not in dist:
                    dist[prev] = dist[node] + 1
                    queue.append(prev)
        return dist

    def _candidates(self, node: int, target: int, dist: dict[int, int]) -> list[int]:
        links = self.out.get(node, [])
        dst = self.f.link_dst
        if self.is_switch[node]:
            d = dist[node]
            if d == 0:
                return [e for e in links if dst[e] == target]
            return [
                e for e in links if self.is_switch[dst[e]] and dist.get(int(dst[e]), -1) == d - 1
            ]
        reach = [dist[int(dst[e])] for e in links if self.is_switch[dst[e]] and int(dst[e]) in dist]
        best = min(reach)
        return [e for e in links if self.is_switch[dst[e]] and dist.get(int(dst[e]), -1) == best]

    def ecmp(self, entry: int, exit_: int, flow_hash: int) -> list[int]:
        """The hashed single path from GPU `entry` to GPU `exit_` (network links only)."""
        dist = self._dist(exit_)
        node, path = entry, []
        while node != exit_:
            cands = self._candidates(node, exit_, dist)
            salt = node_salt_reference(self.f, node, self.hash_scope)
            pick = cands[mix64_reference(flow_hash ^ salt) % len(cands)]
            path.append(pick)
            node = int(self.f.link_dst[pick])
        return path

    def adaptive_local(
        self, entry: int, exit_: int, flow_hash: int, load: dict[int, float], nbytes: float
    ) -> list[int]:
        """The hop-by-hop adaptive path: at each node, the hash choice among the candidates
        least loaded after adding `nbytes` (the flow is booked on each link it takes)."""
        dist = self._dist(exit_)
        cap = self.f.link_capacity
        node, path = entry, []
        while node != exit_:
            cands = self._candidates(node, exit_, dist)
            after = [(load.get(e, 0.0) + nbytes) / cap[e] for e in cands]
            low = min(after)
            cands = [e for e, a in zip(cands, after, strict=True) if a <= low * (1 + 1e-12)]
            salt = node_salt_reference(self.f, node, self.hash_scope)
            pick = cands[mix64_reference(flow_hash ^ salt) % len(cands)]
            load[pick] = load.get(pick, 0.0) + nbytes
            path.append(pick)
            node = int(self.f.link_dst[pick])
        return path

    def adaptive_search(
        self, entry: int, exit_: int, flow_hash: int, load: dict[int, float], nbytes: float
    ) -> list[int]:
        """The path `engine.routing.adaptive.adaptive_path` picks, by its depth-first search
        without the memo of barren subtrees: candidates in the hashed rotation, prefixes no
        better than the best path pruned, the first idle improvement taken at once. The flow
        is booked on the path's links."""
        dist = self._dist(exit_)
        cap, dst = self.f.link_capacity, self.f.link_dst
        best: list = [np.inf, 1 << 30, []]

        def visit(node: int, top: float, count: int, idle: bool, trial: list[int]) -> bool:
            cands = self._candidates(node, exit_, dist)
            rot = mix64_reference(flow_hash ^ node)
            for p in range(len(cands)):
                link = cands[((rot + p) & MASK64) % len(cands)]
                after = (load.get(link, 0.0) + nbytes) / cap[link]
                if after > top * (1.0 + 1e-12):
                    m, k = after, 1
                elif after >= top * (1.0 - 1e-12):
                    m, k = top, count + 1
                else:
                    m, k = top, count
                better = m < best[0] * (1.0 - 1e-12) or (
                    m <= best[0] * (1.0 + 1e-12) and k < best[1]
                )
                if best[2] and not better:
                    continue
                now_idle = idle and load.get(link, 0.0) == 0.0
                if int(dst[link]) == exit_:
                    best[:] = [m, k, [*trial, link]]
                    if now_idle:
                        return True
                elif visit(int(dst[link]), m, k, now_idle, [*trial, link]):
                    return True
            return False

        visit(entry, 0.0, 0, True, [])
        for link in best[2]:
            load[link] = load.get(link, 0.0) + nbytes
        return best[2]

    def spray(self, entry: int, exit_: int) -> dict[int, float]:
        """Fraction of the flow on every link when split evenly at every hop."""
        dist = self._dist(exit_)
        weight = {entry: 1.0}
        order = [entry]
        share: dict[int, float] = {}
        i = 0
        while i < len(order):
            node = order[i]
            i += 1
            if node == exit_:
                continue
            cands = self._candidates(node, exit_, dist)
            for e in cands:
                nxt = int(self.f.link_dst[e])
                share[e] = share.get(e, 0.0) + weight[node] / len(cands)
                if nxt not in weight:
                    weight[nxt] = 0.0
                    order.append(nxt)
                weight[nxt] += weight[node] / len(cands)
        return share

    def paths(self, entry: int, exit_: int) -> list[list[int]]:
        """Every equal-cost (shortest) path from GPU `entry` to GPU `exit_`."""
        dist = self._dist(exit_)
        dst = self.f.link_dst

        def walk(node: int) -> list[list[int]]:
            if node == exit_:
                return [[]]
            return [
                [e, *rest]
                for e in self._candidates(node, exit_, dist)
                for rest in walk(int(dst[e]))
            ]

        return walk(entry)

    def adaptive_optimal(
        self, entry: int, exit_: int, load: dict[int, float], nbytes: float
    ) -> list[list[int]]:
        """The paths adaptive routing may pick: the idle ones if any, else the least loaded.

        A path's load is its busiest link after adding `nbytes` (utilization), then the
        number of its links at that utilization.
        """
        cap = self.f.link_capacity
        candidates = self.paths(entry, exit_)
        idle = [p for p in candidates if all(load.get(e, 0.0) == 0.0 for e in p)]
        if idle:
            return idle

        def score(path: list[int]) -> tuple[float, int]:
            after = [(load.get(e, 0.0) + nbytes) / cap[e] for e in path]
            top = max(after)
            return top, sum(1 for a in after if a >= top * (1 - 1e-12))

        scores = [score(p) for p in candidates]
        top = min(m for m, _ in scores)
        close = [
            (p, c) for p, (m, c) in zip(candidates, scores, strict=True) if m <= top * (1 + 1e-12)
        ]
        fewest = min(c for _, c in close)
        return [p for p, c in close if c == fewest]


def route_reference(fabric: Fabric, src: int, dst: int, policy: RoutingPolicy) -> dict[int, float]:
    """(link → weight) of a single cross-server connection whose own NICs can reach each other."""
    r = ReferenceRouter(fabric, policy.hash_scope)
    if policy.mode == "spray":
        return r.spray(src, dst)
    if policy.mode == "adaptive":
        return dict.fromkeys(r.adaptive_optimal(src, dst, {}, 1.0)[0], 1.0)
    return dict.fromkeys(r.ecmp(src, dst, flow_hash_reference(src, dst, 0, policy.seed)), 1.0)
