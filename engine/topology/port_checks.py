"""The port checks of an expansion: switches wired to more ports than they have at the
bundles' speeds, and NICs wired to more cables than their ports (or split ports) take.

Kept apart from `expand` so each module has one job; `expand` calls `port_problems` once the
cables of every bundle are counted.
"""

from __future__ import annotations

import numpy as np

from engine.catalog.devices import Catalog
from engine.model.errors import Problem
from engine.model.scenario import DeviceGroup, Scenario
from engine.model.validation import group_where


def port_problems(
    scenario: Scenario,
    cat: Catalog,
    port_use: dict[int, list[tuple[float, np.ndarray]]],
    nic_use: dict[int, list[tuple[float, np.ndarray]]],
) -> list[Problem]:
    """Switches wired to more ports than they have, and NICs to more cables than ports."""
    problems = []
    for gi, uses in port_use.items():
        g = scenario.groups[gi]
        modes = cat.switch_port_modes(g.model)
        share = np.zeros(g.count)
        for speed, use in uses:
            share += use / modes[speed]
        worst = int(np.argmax(share))
        if share[worst] > 1 + 1e-9:
            detail = ", ".join(f"{int(u[worst])} at {s:g}G (has {modes[s]})" for s, u in uses)
            over = int(np.count_nonzero(share > 1 + 1e-9))
            problems.append(
                Problem(
                    group_where(g),
                    f"{over} of {g.count} switches are wired to more ports than a {g.model} has; "
                    f"switch {worst} uses {detail}. Add switches or reduce links_per_pair",
                    "count",
                )
            )
    for gi, uses in nic_use.items():
        problem = _nic_problem(scenario.groups[gi], cat, uses)
        if problem is not None:
            problems.append(problem)
    return problems


def _nic_problem(
    g: DeviceGroup, cat: Catalog, uses: list[tuple[float, np.ndarray]]
) -> Problem | None:
    """A server group whose NICs carry more cables than their ports take. A NIC whose port
    splits (catalog `port_split`, e.g. a ConnectX-8's 800G port as 2 x 400GbE) takes that
    many cables per port, as long as their speeds add up to no more than the port's rate:
    that is how one NIC reaches two ToRs or two planes."""
    nic = cat.get(cat.get(g.model, "server").value("nic"), "nic")
    ports = int(nic.value("ports"))
    split = int(nic.value("port_split", g.overrides)) if nic.has("port_split") else 1
    cables = sum(use for _, use in uses)
    rate = sum(use * speed for speed, use in uses)
    worst = int(np.argmax(cables))
    port_rate = ports * float(nic.value("port_gbps"))
    if int(cables[worst]) <= ports and split == 1:
        return None
    if int(cables[worst]) <= ports * split and float(np.max(rate)) <= port_rate + 1e-9:
        return None
    if split > 1:
        detail = (
            f"{ports} port(s) of {port_rate / ports:g}G, each split into at most {split} "
            f"links whose speeds add up to the port's"
        )
    else:
        detail = f"{ports} port(s)"
    return Problem(
        group_where(g),
        f"NICs of {g.id} carry {int(cables[worst])} cables but a {nic.id} has {detail}; "
        f"check the bundles to this group (links_per_pair, or two bundles on the same NICs)",
        "count",
    )
