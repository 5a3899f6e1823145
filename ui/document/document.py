"""The open scenario: the current `Scenario`, its undo stack and its structural problems."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from engine.analysis import convert_technology, default_bundle
from engine.catalog.devices import Catalog, default_catalog
from engine.model.catalogs import scenario_catalog
from engine.model.devices import CustomDevice
from engine.model.errors import Problem, ScenarioError
from engine.model.overrides import apply_override
from engine.model.scenario import (
    TIERS,
    DeviceGroup,
    Failures,
    LinkBundle,
    LinkFailure,
    Scenario,
    SwitchFailure,
    from_json,
    to_json,
)
from engine.model.validation import check_structure
from ui.document.commands import (
    AddBundleCommand,
    AddCustomDeviceCommand,
    AddGroupCommand,
    ConvertTechnologyCommand,
    FailuresCommand,
    MoveGroupsCommand,
    PasteCommand,
    RemoveItemsCommand,
    ReplaceScenarioCommand,
    ScenarioCommand,
    SetFieldCommand,
)

SWITCH_TIERS = tuple(t for t in TIERS if t != "server")
TECHNOLOGY_NAMES = {"infiniband": "InfiniBand", "roce": "Ethernet/RoCE"}


class ScenarioDocument(QObject):
    """Owns the scenario being edited; every edit is an undoable `SetFieldCommand`.

    `changed` fires whenever the scenario object is replaced (edit, undo, redo, load), and
    `revision` counts those replacements, so a result can say which scenario it belongs to.
    `problemsChanged(list[Problem])` fires when the known problems change: structural ones
    are checked synchronously (cheap); expansion problems arrive later from the worker via
    `set_expand_problems`.
    """

    changed = Signal()
    problemsChanged = Signal(list)

    def __init__(
        self, scenario: Scenario, catalog: Catalog | None = None, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.base_catalog = catalog or default_catalog()
        # user-defined devices the palette offers (a user catalog beside the library): one
        # becomes part of the scenario when a group of it is added (`add_device`)
        self.user_entries: dict[str, CustomDevice] = {}
        self.undo_stack = QUndoStack(self)
        self._scenario = scenario
        self._structural: list[Problem] = check_structure(scenario, self.base_catalog)
        self._expand: list[Problem] = []
        self.revision = 0

    @property
    def catalog(self) -> Catalog:
        """The catalog of the current scenario: the shipped one with the scenario's own
        devices merged in (the shipped one alone while those cannot be used)."""
        try:
            return scenario_catalog(self._scenario, self.base_catalog)
        except ScenarioError:
            return self.base_catalog

    @property
    def scenario(self) -> Scenario:
        """The current scenario (treat as read-only: edit through `set_field`)."""
        return self._scenario

    @property
    def problems(self) -> list[Problem]:
        """Structural problems plus the last expansion problems reported by the worker."""
        return self._structural + self._expand

    @property
    def structural_problems(self) -> list[Problem]:
        """Problems `check_structure` finds in the current scenario."""
        return list(self._structural)

    def set_field(self, path: str, text: str) -> str | None:
        """Push an undoable edit of `path` to `text`; the refusal message if it cannot apply.

        Input that `apply_override` rejects (unknown field, unreadable value) pushes nothing
        and returns the `ScenarioError` message. Setting a field to its current value is a
        no-op (nothing pushed, ``None`` returned).
        """
        try:
            after = apply_override(self._scenario, path, text)
        except ScenarioError as exc:
            return "; ".join(f"{p.where}: {p.message}" for p in exc.problems)
        if after == self._scenario:
            return None
        self.undo_stack.push(
            SetFieldCommand(self.replace_scenario, path, text, self._scenario, after)
        )
        return None

    def load(self, scenario: Scenario) -> None:
        """Replace the scenario with a new one and forget the undo history."""
        self.undo_stack.clear()
        self.replace_scenario(scenario)

    def replace_with(self, scenario: Scenario, text: str = "Replace scenario") -> bool:
        """Make `scenario` current as one undoable step (undo restores the previous one)."""
        return self._push(
            ReplaceScenarioCommand(self.replace_scenario, text, self._scenario, scenario)
        )

    def replace_scenario(self, scenario: Scenario) -> None:
        """Make `scenario` current (used by the undo commands); re-check its structure."""
        self._scenario = scenario
        self.revision += 1
        self._structural = check_structure(scenario, self.base_catalog)
        self._expand = []
        self.changed.emit()
        self.problemsChanged.emit(self.problems)

    def set_expand_problems(self, problems: list[Problem]) -> None:
        """Record the problems expansion found (reported by the worker for this scenario)."""
        self._expand = [p for p in problems if p not in self._structural]
        self.problemsChanged.emit(self.problems)

    def make_variant(self, technology: str) -> str | None:
        """Turn the scenario into its `technology` ("infiniband" or "roce") variant as one
        undo step; the reason when it cannot (already that technology, or no catalog switch
        fits), ``None`` when done."""
        s = self._scenario
        if s.fabric.technology == technology:
            return f"the scenario already runs {technology}"
        try:
            after = convert_technology(s, technology, self.catalog)
        except ScenarioError as exc:
            return "; ".join(f"{p.where}: {p.message}" for p in exc.problems)
        text = f"Make the {TECHNOLOGY_NAMES.get(technology, technology)} variant"
        self._push(ConvertTechnologyCommand(self.replace_scenario, text, s, after))
        return None

    # ---- structural edits (each one undo step) ------------------------------------------------

    def _push(self, command: ScenarioCommand) -> bool:
        if command.after == self._scenario:
            return False
        self.undo_stack.push(command)
        return True

    def unique_id(self, base: str, taken: Iterable[str] = ()) -> str:
        """`base`, or ``base-2``, ``base-3``… : the first id no group or bundle uses."""
        used = {g.id for g in self._scenario.groups} | {b.id for b in self._scenario.bundles}
        used |= set(taken)
        if base not in used:
            return base
        n = 2
        while f"{base}-{n}" in used:
            n += 1
        return f"{base}-{n}"

    def add_group(self, group: DeviceGroup) -> str:
        """Add `group` (its id made unique if taken); the id it was added under."""
        gid = self.unique_id(group.id)
        group = dataclasses.replace(group, id=gid, name=group.name or gid)
        after = dataclasses.replace(self._scenario, groups=[*self._scenario.groups, group])
        self._push(
            AddGroupCommand(self.replace_scenario, f"Add group {gid}", self._scenario, after)
        )
        return gid

    def add_device(
        self, model: str, position: tuple[float, float] | None = None, tier: str | None = None
    ) -> str:
        """Add a group of one catalog `model` (count 1): servers, or switches in `tier`
        (``leaf`` when not given, or when asked for the server tier). A device of the user
        catalog (`user_entries`) joins the scenario's own devices in the same undo step."""
        offered = None
        if model not in self.catalog.devices and model in self.user_entries:
            offered = self.user_entries[model]
        kind = offered.kind if offered is not None else self.catalog.get(model).kind
        if kind == "server":
            base, kind, tier = "servers", "server", "server"
        elif kind == "storage":  # a storage network's nodes (engine.model.networks)
            base, kind, tier = "storage", "storage", "server"
        else:
            tier = tier if tier in SWITCH_TIERS else "leaf"
            base, kind = tier, "switch"
        gid = self.unique_id(base)
        group = DeviceGroup(
            id=gid, kind=kind, model=model, count=1, tier=tier, position=position or (0.0, 0.0)
        )
        group.name = gid
        s = self._scenario
        devices = s.devices if offered is None else [*s.devices, offered]
        after = dataclasses.replace(s, groups=[*s.groups, group], devices=devices)
        self._push(AddGroupCommand(self.replace_scenario, f"Add group {gid}", s, after))
        return gid

    def add_custom_device(self, device: CustomDevice) -> str | None:
        """Add a user-defined device to the scenario as one undo step; the reason when it
        cannot be used (a field out of range, an id taken), ``None`` when added."""
        s = self._scenario
        after = dataclasses.replace(s, devices=[*s.devices, device])
        try:
            scenario_catalog(after, self.base_catalog)
        except ScenarioError as exc:
            return "; ".join(f"{p.field or p.where}: {p.message}" for p in exc.problems)
        self._push(
            AddCustomDeviceCommand(self.replace_scenario, f"Add device {device.id}", s, after)
        )
        return None

    def remove_items(self, group_ids: Iterable[str] = (), bundle_ids: Iterable[str] = ()) -> bool:
        """Remove groups (and every bundle and failure touching them) and bundles at once."""
        gids, bids = set(group_ids), set(bundle_ids)
        s = self._scenario
        bundles = [b for b in s.bundles if b.id not in bids and b.a not in gids and b.b not in gids]
        kept_bundles = {b.id for b in bundles}
        failures = dataclasses.replace(
            s.failures,
            switches=[f for f in s.failures.switches if f.group not in gids],
            links=[f for f in s.failures.links if f.bundle in kept_bundles],
        )
        after = dataclasses.replace(
            s,
            groups=[g for g in s.groups if g.id not in gids],
            bundles=bundles,
            failures=failures,
        )
        names = ", ".join(sorted(gids | bids))
        return self._push(RemoveItemsCommand(self.replace_scenario, f"Remove {names}", s, after))

    def remove_groups(self, group_ids: Iterable[str]) -> bool:
        """Remove groups and the bundles touching them (one undo step)."""
        return self.remove_items(group_ids, ())

    def remove_bundles(self, bundle_ids: Iterable[str]) -> bool:
        """Remove bundles (one undo step)."""
        return self.remove_items((), bundle_ids)

    def add_bundle(self, bundle: LinkBundle) -> str:
        """Add `bundle` (its id made unique if taken); the id it was added under."""
        bid = self.unique_id(bundle.id)
        bundle = dataclasses.replace(bundle, id=bid)
        after = dataclasses.replace(self._scenario, bundles=[*self._scenario.bundles, bundle])
        self._push(
            AddBundleCommand(
                self.replace_scenario, f"Connect {bundle.a} → {bundle.b}", self._scenario, after
            )
        )
        return bid

    def default_bundle(self, first: str, second: str) -> LinkBundle | None:
        """The bundle a connection between two groups proposes (lower tier first), ``None``
        if they cannot be connected (`engine.analysis.default_bundle` picks pattern and speed).
        """
        return default_bundle(self._scenario, self.catalog, first, second)

    def connect_groups(self, first: str, second: str) -> str | None:
        """Add the `default_bundle` between two groups; its id, or ``None`` if unsuitable."""
        bundle = self.default_bundle(first, second)
        if bundle is None:
            return None
        return self.add_bundle(bundle)

    def move_groups(
        self, positions: dict[str, tuple[float, float]], tiers: dict[str, str] | None = None
    ) -> bool:
        """Set the canvas positions of several groups, and the tiers of those `tiers` names
        (a switch dragged into another tier's band), as one undo step."""
        s = self._scenario
        tiers = tiers or {}
        groups = [
            dataclasses.replace(
                g,
                position=(float(positions[g.id][0]), float(positions[g.id][1])),
                tier=tiers.get(g.id, g.tier),
            )
            if g.id in positions
            else g
            for g in s.groups
        ]
        after = dataclasses.replace(s, groups=groups)
        text = "Move " + ", ".join(sorted(positions))
        return self._push(MoveGroupsCommand(self.replace_scenario, text, s, after))

    def paste_groups(
        self,
        groups: list[DeviceGroup],
        bundles: list[LinkBundle],
        offset: tuple[float, float] = (60.0, 60.0),
    ) -> list[str]:
        """Add copies of `groups` with new ids, shifted by `offset`, and the bundles among them.

        Bundles whose two ends are both among `groups` are copied onto the new ids; the new
        group ids are returned (one undo step).
        """
        s = self._scenario
        taken: list[str] = []
        mapping: dict[str, str] = {}
        new_groups = []
        for g in groups:
            gid = self.unique_id(g.id, taken)
            taken.append(gid)
            mapping[g.id] = gid
            x, y = g.position
            new_groups.append(
                dataclasses.replace(
                    g,
                    id=gid,
                    name=gid if g.name in ("", g.id) else g.name,
                    position=(x + offset[0], y + offset[1]),
                    overrides=dict(g.overrides),
                )
            )
        new_bundles = []
        for b in bundles:
            if b.a in mapping and b.b in mapping:
                bid = self.unique_id(f"{mapping[b.a]}-{mapping[b.b]}", taken)
                taken.append(bid)
                new_bundles.append(dataclasses.replace(b, id=bid, a=mapping[b.a], b=mapping[b.b]))
        if not new_groups:
            return []
        after = dataclasses.replace(
            s, groups=[*s.groups, *new_groups], bundles=[*s.bundles, *new_bundles]
        )
        self._push(
            PasteCommand(self.replace_scenario, f"Paste {len(new_groups)} group(s)", s, after)
        )
        return [g.id for g in new_groups]

    def set_tier(
        self, group_id: str, tier: str, position: tuple[float, float] | None = None
    ) -> bool:
        """Put a group in `tier`, and its node at `position` when given (one undo step)."""
        s = self._scenario
        group = s.group(group_id)
        changed = dataclasses.replace(group, tier=tier, position=position or group.position)
        groups = [changed if g.id == group_id else g for g in s.groups]
        after = dataclasses.replace(s, groups=groups)
        path = f"groups.{group_id}.tier"
        return self._push(SetFieldCommand(self.replace_scenario, path, tier, s, after))

    # ---- failures (each one undo step) ------------------------------------------------------

    def links_down(self, bundle_id: str) -> int:
        """How many cables of bundle `bundle_id` are failed."""
        return sum(f.links_down for f in self._scenario.failures.links if f.bundle == bundle_id)

    def failed_members(self, group_id: str) -> list[int]:
        """The failed members (switch indices) of group `group_id`, in order."""
        return sorted({f.index for f in self._scenario.failures.switches if f.group == group_id})

    def _set_failures(self, failures: Failures, text: str) -> bool:
        s = self._scenario
        after = dataclasses.replace(s, failures=failures)
        return self._push(FailuresCommand(self.replace_scenario, text, s, after))

    def set_links_down(self, bundle_id: str, count: int) -> bool:
        """Make exactly `count` cables of bundle `bundle_id` failed (0 restores them all)."""
        f = self._scenario.failures
        links = [lf for lf in f.links if lf.bundle != bundle_id]
        if count > 0:
            links.append(LinkFailure(bundle_id, int(count)))
        text = f"Fail {count} link(s) of {bundle_id}" if count else f"Restore {bundle_id}"
        return self._set_failures(dataclasses.replace(f, links=links), text)

    def fail_switch(self, group_id: str) -> int | None:
        """Fail the first working member of switch group `group_id`; its index, or ``None``
        when every member is failed already."""
        group = self._scenario.group(group_id)
        failed = set(self.failed_members(group_id))
        index = next((i for i in range(group.count) if i not in failed), None)
        if index is None:
            return None
        f = self._scenario.failures
        switches = [*f.switches, SwitchFailure(group_id, index)]
        self._set_failures(
            dataclasses.replace(f, switches=switches), f"Fail switch {index} of {group_id}"
        )
        return index

    def restore(self, group_ids: Iterable[str] = (), bundle_ids: Iterable[str] = ()) -> bool:
        """Restore every failed member of the groups and every failed cable of the bundles."""
        gids, bids = set(group_ids), set(bundle_ids)
        f = self._scenario.failures
        failures = dataclasses.replace(
            f,
            switches=[sf for sf in f.switches if sf.group not in gids],
            links=[lf for lf in f.links if lf.bundle not in bids],
        )
        return self._set_failures(failures, "Restore " + ", ".join(sorted(gids | bids)))

    # ---- files ------------------------------------------------------------------------------

    def save_to(self, path: str | Path) -> None:
        """Write the scenario as JSON to `path` (`OSError` when it cannot be written)."""
        Path(path).write_text(to_json(self._scenario) + "\n", encoding="utf-8")
        self.undo_stack.setClean()

    def load_from(self, path: str | Path) -> list[str]:
        """Open the scenario JSON at `path`; `ScenarioError`/`OSError` leave the document as is.

        Returns what reading an older format changed, one line each (see `from_json`)."""
        text = Path(path).read_text(encoding="utf-8")
        notes: list[str] = []
        scenario = from_json(text, notes)
        self.load(scenario)
        return notes
