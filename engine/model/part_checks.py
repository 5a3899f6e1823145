"""Checks of the parts a scenario uses against what the catalog says of them.

- **Packet reordering.** Per-packet spraying (``routing.mode = spray``) sends the packets of
  one connection over every equal-cost path, so they arrive out of order. On InfiniBand the
  HCAs of the catalog place such packets (NVIDIA's out-of-order data placement); on RoCE a NIC
  that does not (catalog ``packet_reordering`` false) takes every early packet for a loss and
  goes back N: spraying on it is refused, naming the server group and its NIC.
- **Multi-vendor only** (``constraints.multi_vendor_only``): every network part the scenario
  names (each server group's NIC, each switch group's model, each bundle's explicit cable)
  must have a second source on the scenario's technology in the catalog's ``supply`` section.
  Each part without one is named; a part the catalog has no supply data for is named as such.
  Cables and optics chosen automatically are listed in the bill of materials' supply summary.
"""

from __future__ import annotations

from engine.catalog.devices import Catalog
from engine.model.errors import Problem
from engine.model.scenario import Scenario


def _server_nic(model: str, catalog: Catalog) -> str | None:
    """The NIC id of server model `model`, or None when the catalog does not say."""
    try:
        server = catalog.get(model, "server")
    except KeyError:
        return None
    return str(server.value("nic")) if server.has("nic") else None


def _reordering_problems(scenario: Scenario, catalog: Catalog) -> list[Problem]:
    if scenario.routing.mode != "spray" or scenario.fabric.technology != "roce":
        return []
    problems = []
    for g in scenario.groups:
        nic_id = _server_nic(g.model, catalog) if g.kind == "server" else None
        if nic_id is None or nic_id not in catalog.devices:
            continue
        nic = catalog.devices[nic_id]
        if nic.has("packet_reordering") and not nic.value("packet_reordering"):
            problems.append(
                Problem(
                    "routing",
                    f"per-packet spraying on RoCE needs NICs that reorder packets; {g.id}'s "
                    f"NIC {nic_id} ({nic.name}) does not, so every out-of-order packet would "
                    "count as a loss and be sent again (go-back-N). Use ecmp or adaptive "
                    "routing, or a server whose NIC reorders (packet_reordering in the catalog)",
                    "mode",
                )
            )
    return problems


def _network_parts(scenario: Scenario, catalog: Catalog) -> list[tuple[str, str, str]]:
    """(where, field, part id) of each network part the scenario names."""
    parts = []
    for g in scenario.groups:
        if g.kind == "server":
            nic_id = _server_nic(g.model, catalog)
            if nic_id is not None:
                parts.append((f"groups[{g.id}]", "model", nic_id))
        else:
            parts.append((f"groups[{g.id}]", "model", g.model))
    for b in scenario.bundles:
        if b.cable != "auto":
            parts.append((f"bundles[{b.id}]", "cable", b.cable))
    return parts


def _vendor_problems(scenario: Scenario, catalog: Catalog) -> list[Problem]:
    if not scenario.constraints.multi_vendor_only:
        return []
    technology = scenario.fabric.technology
    problems, seen = [], set()
    for where, field, part_id in _network_parts(scenario, catalog):
        if (where, part_id) in seen or part_id not in catalog.devices:
            continue  # an unknown model is reported by the structural checks
        seen.add((where, part_id))
        supply = catalog.supply_of(part_id)
        if supply is None:
            message = (
                f"multi-vendor only: the catalog has no supply data for {part_id}, so no "
                "second source can be confirmed"
            )
        elif (supply.second_sources(technology) or 0) < 1:
            message = (
                f"multi-vendor only: {part_id} has a single source ({supply.vendor}) on "
                f"{technology}; choose a part with a second source or lift "
                "constraints.multi_vendor_only"
            )
        else:
            continue
        problems.append(Problem(where, message, field))
    return problems


def check_parts(scenario: Scenario, catalog: Catalog) -> list[Problem]:
    """Problems of the parts `scenario` uses: spraying on NICs that cannot reorder, and
    single-source network parts under ``constraints.multi_vendor_only``."""
    return _reordering_problems(scenario, catalog) + _vendor_problems(scenario, catalog)
