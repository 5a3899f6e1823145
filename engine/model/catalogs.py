"""One catalog per scenario: the shipped catalog with the scenario's own devices merged in.

Every engine entry that takes a scenario and a catalog asks `scenario_catalog` for the
catalog to use, so a user-defined server, switch or NIC is looked up like a shipped one
everywhere (expansion, timing, transport, cost), for that scenario only. The merge is
answered from memory for the same devices (`engine.catalog.custom.merge_devices`), and a
catalog that already holds the scenario's devices is returned as it is, so asking twice on
the way down costs nothing. The work caches key on what they read from the merged catalog
(capacities, latencies, buffers in their arrays), so two scenarios that differ only in a
custom device never share a cached result.
"""

from __future__ import annotations

from engine.catalog.custom import DeviceEntryError, merge_devices
from engine.catalog.devices import Catalog, default_catalog
from engine.catalog.errors import CatalogError
from engine.model.errors import Problem, ScenarioError
from engine.model.scenario import Scenario


def scenario_catalog(scenario: Scenario, catalog: Catalog | None = None) -> Catalog:
    """The catalog `scenario` is evaluated with: `catalog` (default: the shipped one) plus
    the scenario's `devices`; `ScenarioError` names a device entry that cannot be used."""
    base = catalog or default_catalog()
    if not scenario.devices and not base.user_key:
        return base
    try:
        return merge_devices(base, [d.entry() for d in scenario.devices])
    except DeviceEntryError as exc:
        where = f"devices[{exc.index}]" + (f" {exc.device_id!r}" if exc.device_id else "")
        raise ScenarioError(Problem(where, exc.message, exc.field)) from None
    except CatalogError as exc:  # pragma: no cover - merge_devices raises the entry error
        raise ScenarioError(Problem("devices", str(exc))) from None


def device_problems(scenario: Scenario, catalog: Catalog | None = None) -> list[Problem]:
    """The problem of the scenario's user-defined devices (none when they merge)."""
    try:
        scenario_catalog(scenario, catalog)
    except ScenarioError as exc:
        return exc.problems
    return []


def user_defined_ids(scenario: Scenario) -> set[str]:
    """The catalog ids the scenario defines itself."""
    return {d.id for d in scenario.devices}
