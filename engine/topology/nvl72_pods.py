"""The NVL72 template past two tiers: pods of one scalable unit of racks, joined by a core.

NVIDIA's DGX GB200 SuperPOD builds its compute fabric from scalable units (SUs) of 8 NVL72
racks and scales "up to and beyond 128 racks with 9216 GPUs" (DGX SuperPOD GB200 reference
architecture, "DGX SuperPOD Architecture"; catalog source ``nv-superpod-gb200-architecture``,
field ``scalable_unit_servers`` of the server). When the racks outgrow two tiers, each SU
becomes a pod: its own leaves, on which the racks' rails are folded pod-locally as the 2-tier
template folds them (leaf j of the pod takes NICs j, j+L, ... of each of the pod's racks),
its own spines, and a core tier joining the pods' spines.

The switch counts are not from the reference architecture (its multi-SU tables are not
public for GB200) but derived here, an assumption stated in the scenario's description:
- every leaf of a pod reaches every spine of the pod with the same number of cables, so the
  spine count divides a leaf's uplinks (18 leaves of 32 uplinks would need 32 spines);
- a spine is non-blocking: as many core cables as leaf cables, at most half its ports each;
- spine s of every pod reaches the same block of core switches (spine plane s), each with
  the same number of cables, so a core switch takes one bundle from each pod and its ports
  bound the number of pods;
- of the folds whose counts all divide (L a divisor of the NICs per rack whose down ports
  hold the pod's share), the one needing the fewest switches in all is built.
With the leaf at 1:1 the fabric has full bisection: every leaf, spine and core switch sends
up what it takes in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.model.scenario import DeviceGroup, LinkBundle
from engine.topology.template_parts import group

POD_WIDTH = 300.0  # scene units between the pods' columns: a card and a clear gap


@dataclass(frozen=True)
class PodPlan:
    """The counts of a 3-tier NVL72 fabric: `pods` pods of `racks` racks, each with
    `leaves` leaves of `uplinks` uplinks and `spines` spines; each spine reaches
    `cores_per_spine` core switches with `core_links` cables each."""

    pods: int
    racks: int
    leaves: int
    uplinks: int
    spines: int
    cores_per_spine: int
    core_links: int

    @property
    def cores(self) -> int:
        """Core switches: one block of `cores_per_spine` per spine plane."""
        return self.spines * self.cores_per_spine

    @property
    def switches(self) -> int:
        """Every switch of the fabric."""
        return self.pods * (self.leaves + self.spines) + self.cores

    @property
    def spine_down(self) -> int:
        """Cables from a spine to its pod's leaves (as many go up to the core)."""
        return self.leaves * self.uplinks // self.spines


def _pod_fold(
    pods: int, racks: int, leaves: int, shape: tuple[int, int, int, int]
) -> PodPlan | None:
    """The plan of one fold (`leaves` leaves a pod) if every count divides, else ``None``.
    `shape` is (NICs a rack, leaf down ports, leaf up ports, switch radix)."""
    nics, down, up, radix = shape
    used = racks * (nics // leaves)  # down ports in use on each leaf
    uplinks = math.ceil(used * up / down)  # the leaf's oversubscription on the ports in use
    half = radix // 2
    spines = next(
        (s for s in range(1, uplinks + 1) if uplinks % s == 0 and leaves * uplinks // s <= half),
        None,
    )
    if spines is None:
        return None
    spine_up = leaves * uplinks // spines
    core_links = max((m for m in range(1, spine_up + 1) if spine_up % m == 0 and pods * m <= radix),
                     default=None)  # fmt: skip
    if core_links is None:
        return None
    return PodPlan(pods, racks, leaves, uplinks, spines, spine_up // core_links, core_links)


def plan_pods(
    racks: int, unit: int, nics: int, ports: tuple[int, int], radix: int
) -> PodPlan | None:
    """The 3-tier plan of `racks` racks in pods of `unit` racks (whole pods, at least two),
    leaves with `ports` (down, up) ports, or ``None`` when no fold divides or a core switch
    cannot reach every pod."""
    if unit < 1 or racks % unit or racks // unit < 2:
        return None
    down, up = ports
    plans = [
        _pod_fold(racks // unit, unit, leaves, (nics, down, up, radix))
        for leaves in range(1, min(nics, radix) + 1)
        if nics % leaves == 0 and unit * (nics // leaves) <= down
    ]
    built = [p for p in plans if p is not None]
    return min(built, key=lambda p: (p.switches, p.leaves), default=None)


def pod_parts(
    plan: PodPlan, server: str, switch: str, speed_gbps: float, nics: int
) -> tuple[list[DeviceGroup], list[LinkBundle]]:
    """The groups and bundles of `plan`: per pod p the racks ``p{p}-servers``, leaves
    ``p{p}-leaf`` and spines ``p{p}-spine`` in a column of their own, and the ``core``
    above them all; the rails folded pod-locally (`striped`, one block per leaf), each pod's
    leaves to all its spines (`full`) and spine s of every pod to core block s (`striped`,
    one block per spine)."""
    groups: list[DeviceGroup] = []
    bundles: list[LinkBundle] = []
    for p in range(1, plan.pods + 1):
        x = (p - 0.5) * POD_WIDTH  # never 0: a group at (0, 0) is laid out anew
        ids = {t: f"p{p}-{t}" for t in ("servers", "leaf", "spine")}
        pod = [
            group(ids["servers"], "server", server, plan.racks, "server", x),
            group(ids["leaf"], "switch", switch, plan.leaves, "leaf", x),
            group(ids["spine"], "switch", switch, plan.spines, "spine", x),
        ]
        # short names, whole on a card: "Pod 3 racks" over "Pod 3 leaves" over "Pod 3 spines"
        pod[0].name = f"Pod {p} racks"
        pod[1].name = f"Pod {p} leaves"
        pod[2].name = f"Pod {p} spines"
        groups += pod
        bundles += [
            LinkBundle(
                f"{ids['servers']}-leaf", ids["servers"], ids["leaf"], "striped",
                blocks=plan.leaves, speed_gbps=speed_gbps, length_m=10.0,
            ),
            LinkBundle(
                f"{ids['leaf']}-spine", ids["leaf"], ids["spine"], "full",
                links_per_pair=plan.uplinks // plan.spines, speed_gbps=speed_gbps,
                length_m=30.0,
            ),
            LinkBundle(
                f"{ids['spine']}-core", ids["spine"], "core", "striped", blocks=plan.spines,
                links_per_pair=plan.core_links, speed_gbps=speed_gbps, length_m=100.0,
            ),
        ]  # fmt: skip
    core = group("core", "switch", switch, plan.cores, "core", plan.pods * POD_WIDTH / 2)
    core.name = "Core"
    groups.append(core)
    return groups, bundles
