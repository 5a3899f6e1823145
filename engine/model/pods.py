"""The pods of a design: server groups with switches of their own under a shared upper tier.

Large fabrics are built of pods (NVIDIA's scalable units, the hybrid template's InfiniBand
pods): a group of servers with its own leaves and spines, joined to the other pods only
above them. The canvas frames each pod so it reads as one; this module finds them from the
structure alone, never from names: a switch group belongs to the pod of a server group when
every group it is cabled to in a lower tier belongs to that pod, and every one in its own
tier too (so a pod's leaves, then its spines), and a core that joins several pods belongs
to none, nor does a group cabled beside it (the hybrid template's gateways). A
design has pods when at least two server groups have switch groups of their own; the
storage network (`engine.model.networks`) is never part of one.
"""

from __future__ import annotations

from engine.model.networks import storage_ids
from engine.model.scenario import TIERS, Scenario


def pods(scenario: Scenario) -> list[list[str]]:
    """The group ids of each pod, its server group first, in the order of the server
    groups; empty when fewer than two server groups have switch groups of their own."""
    storage, storage_bundles = storage_ids(scenario)
    groups = [g for g in scenario.groups if g.id not in storage]
    tier = {g.id: TIERS.index(g.tier) if g.tier in TIERS else 0 for g in groups}
    below: dict[str, set[str]] = {g.id: set() for g in groups}
    beside: dict[str, set[str]] = {g.id: set() for g in groups}
    for b in scenario.bundles:
        if b.id in storage_bundles or b.a not in below or b.b not in below:
            continue
        if tier[b.a] < tier[b.b]:
            below[b.b].add(b.a)
        elif tier[b.b] < tier[b.a]:
            below[b.a].add(b.b)
        else:
            beside[b.a].add(b.b)
            beside[b.b].add(b.a)
    owner: dict[str, str | None] = {g.id: g.id for g in groups if g.kind == "server"}
    for level in range(len(TIERS)):  # lower tiers are settled first
        ids = [g.id for g in groups if g.kind != "server" and tier[g.id] == level]
        for gid in ids:
            owners = {owner.get(n) for n in below[gid]}
            owner[gid] = owners.pop() if len(owners) == 1 else None
        changed = True
        while changed:  # a group cabled to one of another pod (or none) in its tier: none
            changed = False
            for gid in ids:
                if owner[gid] is not None and any(owner.get(n) != owner[gid] for n in beside[gid]):
                    owner[gid] = None
                    changed = True
    members: dict[str, list[str]] = {g.id: [g.id] for g in groups if g.kind == "server"}
    for g in groups:
        pod = owner.get(g.id)
        if g.kind != "server" and pod is not None:
            members[pod].append(g.id)
    found = [ids for ids in members.values() if len(ids) > 1]
    return found if len(found) >= 2 else []
