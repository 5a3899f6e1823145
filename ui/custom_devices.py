"""User-defined devices in the window: the palette lists them, the form makes them.

The palette offers two kinds of user-defined device, both marked ``(user-defined)``: the
scenario's own (saved inside it, so a shared library file carries them) and those of the
user catalog file beside the library (`engine.catalog.custom.USER_CATALOG_NAME`). Adding a
group of a user-catalog device copies the device into the scenario in the same undo step
(`ScenarioDocument.add_device`). "Duplicate as custom device…" on a palette entry opens
`CustomDeviceDialog`; its OK adds the device to the scenario (undoable) and, when asked,
to the user catalog file.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject

from engine.catalog.custom import (
    merge_devices,
    read_user_catalog,
    user_catalog_path,
    write_user_catalog,
)
from engine.catalog.devices import Catalog, Device
from engine.catalog.errors import CatalogError
from engine.model.devices import CustomDevice
from ui.custom_device_dialog import CustomDeviceDialog

STATUS_MS = 10_000


class CustomDevices(QObject):
    """Keeps the palette's user-defined entries in step with the scenario and the user
    catalog of `window` (its `palette`, `document`, `library` and status bar)."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window, self.palette, self.document = window, window.palette, window.document
        library = getattr(window, "library", None)
        self.user_path = user_catalog_path(library.path) if library is not None else None
        self.dialog: CustomDeviceDialog | None = None
        self.load_user_catalog()
        self.palette.duplicateRequested.connect(self.duplicate)
        self.document.changed.connect(self.refresh)
        self.refresh()

    def load_user_catalog(self) -> None:
        """Read the user catalog beside the library (a damaged one is named in the status
        bar and offers nothing)."""
        entries: list[dict[str, Any]] = []
        if self.user_path is not None:
            try:
                entries = read_user_catalog(self.user_path, self.document.base_catalog)
            except CatalogError as exc:
                self.window.statusBar().showMessage(str(exc), STATUS_MS)
        self.document.user_entries = {e["id"]: CustomDevice.from_entry(e) for e in entries}

    def _user_catalog(self) -> Catalog:
        entries = [d.entry() for d in self.document.user_entries.values()]
        return merge_devices(self.document.base_catalog, entries)

    def offered(self) -> list[Device]:
        """The user-defined devices the palette lists: the scenario's, then the user
        catalog's that the scenario does not define."""
        scenario = [d for d in self.document.catalog.devices.values() if d.user_defined]
        mine = {d.id for d in scenario}
        user = [
            d for d in self._user_catalog().devices.values() if d.user_defined and d.id not in mine
        ]
        return scenario + user

    def refresh(self) -> None:
        """List the user-defined devices again (after an edit, undo or load)."""
        self.palette.set_user_devices(self.offered())

    def _device(self, model: str) -> Device | None:
        return self.document.catalog.devices.get(model) or self._user_catalog().devices.get(model)

    def duplicate(self, model: str) -> None:
        """Open the form for a device based on palette entry `model`."""
        base = self._device(model)
        if base is None:
            return
        catalog = self.document.catalog  # the NIC a server names, for its speeds
        if self.dialog is not None:
            self.dialog.close()
        self.dialog = CustomDeviceDialog(
            base, catalog, self._submit, self.user_path is not None, self.window
        )
        self.dialog.taken |= set(self.document.user_entries)
        self.dialog.show()

    def _flattened(self, device: CustomDevice) -> CustomDevice:
        """A device based on a user-defined one carries that one's fields itself, so it
        does not depend on another user-defined entry."""
        source = {d.id: d for d in self.document.user_entries.values()}
        source |= {d.id: d for d in self.document.scenario.devices}
        parent = source.get(device.based_on)
        if parent is None:
            return device
        device.based_on = parent.based_on
        device.fields = {**parent.fields, **device.fields}
        device.technology = device.technology or parent.technology
        return device

    def _submit(self, device: CustomDevice, keep: bool) -> str | None:
        device = self._flattened(device)
        if device.id in self.document.user_entries:
            return f"id: {device.id!r} is already in your user catalog; choose another id"
        refusal = self.document.add_custom_device(device)
        if refusal:
            return refusal
        if keep and self.user_path is not None:
            entries = [d.entry() for d in self.document.user_entries.values()]
            try:
                write_user_catalog(self.user_path, [*entries, device.entry()])
            except OSError as exc:
                return f"added to the scenario, but the user catalog cannot be written: {exc}"
            self.document.user_entries[device.id] = device
        self.window.statusBar().showMessage(
            f"Added custom {device.kind} {device.id} to the scenario", STATUS_MS
        )
        self.refresh()
        return None
