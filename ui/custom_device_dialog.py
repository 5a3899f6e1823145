"""The small form that makes a user-defined server or switch from a palette entry.

"Duplicate as custom device…" opens it on a catalog (or user-defined) entry: the new device
is based on that entry (`CustomDevice.based_on`), so every field the form does not ask keeps
the entry's value and source. Servers ask name, GPUs, NICs, NIC speed, price and power;
switches name, radix, port speed, latency, buffer, price and power. OK hands the device to
`submit`, which adds it to the scenario (one undo step) or says why it cannot; the reason
is shown in the form, which stays open. The form computes nothing: it only collects values.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from engine.catalog.devices import Catalog, Device
from engine.model.devices import CustomDevice

Submit = Callable[[CustomDevice, bool], str | None]


def _spin(name: str, low: int, high: int, value: int) -> QSpinBox:
    spin = QSpinBox()
    spin.setObjectName(name)
    spin.setRange(low, high)
    spin.setValue(value)
    return spin


def _number(name: str, high: float, value: float, decimals: int = 0) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setObjectName(name)
    spin.setDecimals(decimals)
    spin.setRange(0.0, high)
    spin.setValue(value)
    return spin


def suggested_id(name: str, taken: set[str]) -> str:
    """An id from a device name (lower case, dashes), not one of `taken`."""
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "custom"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


class CustomDeviceDialog(QDialog):
    """A form for a device based on `base`; `submit(device, keep)` adds it (``keep``: also
    to the user catalog beside the library, offered when `can_keep`)."""

    def __init__(
        self,
        base: Device,
        catalog: Catalog,
        submit: Submit,
        can_keep: bool,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("customDeviceDialog")
        self.setWindowTitle(f"Custom device based on {base.id}")
        self.setMinimumWidth(480)  # the names run long: show them whole
        self.base, self.submit = base, submit
        self.taken = set(catalog.devices)
        form = QFormLayout()
        self.name_edit = QLineEdit(f"{base.name} (custom)")
        self.name_edit.setObjectName("customName")
        self.id_edit = QLineEdit(suggested_id(self.name_edit.text(), self.taken))
        self.id_edit.setObjectName("customId")
        self._id_touched = False
        self.name_edit.textEdited.connect(self._name_edited)
        self.id_edit.textEdited.connect(lambda _text: setattr(self, "_id_touched", True))
        for edit in (self.name_edit, self.id_edit):
            edit.setCursorPosition(0)  # the start of a long name, not its tail
        form.addRow("Name", self.name_edit)
        form.addRow("Id", self.id_edit)
        self.speed_combo = QComboBox()
        self.speed_combo.setObjectName("customSpeed")
        if base.kind == "server":
            self._server_rows(form, catalog)
        else:
            self._switch_rows(form)
        self.price_spin = _number("customPrice", 1e9, float(base.value("price_usd")))
        self.power_spin = _number("customPower", 1e6, float(base.value("power_w")))
        form.addRow("Price (USD)", self.price_spin)
        form.addRow("Power (W)", self.power_spin)
        self.note_edit = QLineEdit()
        self.note_edit.setObjectName("customNote")
        self.note_edit.setPlaceholderText("where the values come from (shown as their assumption)")
        form.addRow("Note", self.note_edit)
        self.keep_check = QCheckBox("Also keep it in my user catalog (beside the library)")
        self.keep_check.setObjectName("customKeep")
        self.keep_check.setEnabled(can_keep)
        self.error_label = QLabel()
        self.error_label.setObjectName("customError")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #c0392b")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        buttons.accepted.connect(self._ok)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.keep_check)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)

    def _server_rows(self, form: QFormLayout, catalog: Catalog) -> None:
        base = self.base
        self.gpus_spin = _spin("customGpus", 1, 1024, int(base.value("gpus_per_server")))
        self.nics_spin = _spin("customNics", 1, 64, int(base.value("nics_per_server")))
        nic = catalog.get(str(base.value("nic")), "nic")
        speeds = sorted({float(s) for s in nic.value("port_modes_gbps")}, reverse=True)
        for speed in speeds:
            self.speed_combo.addItem(f"{speed:g}", speed)
        self.speed_combo.setCurrentIndex(speeds.index(float(base.value("nic_port_gbps"))))
        form.addRow("GPUs per server", self.gpus_spin)
        form.addRow("NICs per server", self.nics_spin)
        form.addRow(f"NIC speed (Gb/s, {nic.id})", self.speed_combo)

    def _switch_rows(self, form: QFormLayout) -> None:
        base = self.base
        self.modes = {float(k): int(v) for k, v in base.value("port_modes").items()}
        for speed in sorted(self.modes, reverse=True):
            self.speed_combo.addItem(f"{speed:g}", speed)
        first = float(self.speed_combo.currentData())
        self.radix_spin = _spin("customRadix", 1, 4096, self.modes[first])
        self.speed_combo.currentIndexChanged.connect(self._speed_changed)
        self.latency_spin = _number("customLatency", 1e7, float(base.value("latency_ns")))
        self.per_port_buffer = base.has("port_buffer_bytes")
        if self.per_port_buffer:
            label, value = "Buffer per port (KB)", float(base.value("port_buffer_bytes")) / 1e3
        else:
            label, value = "Shared buffer (MB)", float(base.value("buffer_mb"))
        self.buffer_spin = _number("customBuffer", 1e6, value, 1)
        form.addRow("Port speed (Gb/s)", self.speed_combo)
        form.addRow("Ports (radix)", self.radix_spin)
        form.addRow("Latency (ns)", self.latency_spin)
        form.addRow(label, self.buffer_spin)

    def _speed_changed(self) -> None:
        self.radix_spin.setValue(self.modes[float(self.speed_combo.currentData())])

    def _name_edited(self, text: str) -> None:
        if not self._id_touched:
            self.id_edit.setText(suggested_id(text, self.taken))

    def device(self) -> CustomDevice:
        """The device the form describes."""
        base, speed = self.base, float(self.speed_combo.currentData())
        fields: dict[str, object] = {
            "price_usd": self.price_spin.value(),
            "power_w": self.power_spin.value(),
        }
        if base.kind == "server":
            nics = self.nics_spin.value()
            fields |= {
                "gpus_per_server": self.gpus_spin.value(),
                "nics_per_server": nics,
                "nic_port_gbps": speed,
            }
            if base.has("nic_cages"):  # keep the base's NIC ports per cage
                per_cage = int(base.value("nics_per_server")) / int(base.value("nic_cages"))
                fields["nic_cages"] = max(1, math.ceil(nics / per_cage))
        else:
            radix = self.radix_spin.value()
            fields |= {"port_modes": {f"{speed:g}": radix}, "latency_ns": self.latency_spin.value()}
            if base.has("cages"):  # keep the base's logical ports per cage at this speed
                per_cage = max(1.0, self.modes[speed] / int(base.value("cages")))
                fields["cages"] = max(1, math.ceil(radix / per_cage))
            if self.per_port_buffer:
                fields["port_buffer_bytes"] = self.buffer_spin.value() * 1e3
            else:
                fields["buffer_mb"] = self.buffer_spin.value()
        return CustomDevice(
            id=self.id_edit.text().strip(),
            kind=base.kind,
            name=self.name_edit.text().strip(),
            based_on=base.id,
            note=self.note_edit.text().strip(),
            fields=fields,
        )

    def _ok(self) -> None:
        refusal = self.submit(self.device(), self.keep_check.isChecked())
        if refusal:
            self.error_label.setText(refusal)
            return
        self.accept()
