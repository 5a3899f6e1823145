"""File > New from template…: pick a topology template and its size, generate a scenario.

The generator (`engine.topology.templates.generate`, through `engine.analysis`) is cheap and runs on the GUI thread.
A size the switch radix cannot build is refused with the generator's message, shown in red;
the dialog stays open so the user can change the size.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from engine.analysis import (
    MIXED_PODS,
    OVERSUBSCRIBED,
    PLANED,
    TEMPLATES,
    generate,
    template_speed,
)
from engine.catalog.devices import Catalog
from engine.model.errors import ScenarioError
from engine.model.scenario import Scenario


class TemplateDialog(QDialog):
    """Template, GPUs, server and switch models, oversubscription, planes, port speed, the
    hybrid template's Ethernet pod and the storage nodes of a storage network beside the
    fabric (none by default).

    On OK the scenario is generated; `scenario` holds it when the dialog is accepted.
    """

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("New from template")
        self.setObjectName("templateDialog")
        self.catalog = catalog
        self.scenario: Scenario | None = None

        self.template_combo = QComboBox()
        self.template_combo.setObjectName("templateCombo")
        self.template_combo.addItems(list(TEMPLATES))
        self.gpus_spin = QSpinBox()
        self.gpus_spin.setObjectName("gpusSpin")
        self.gpus_spin.setRange(1, 1_000_000)
        self.gpus_spin.setSingleStep(8)
        self.gpus_spin.setValue(1024)
        self.server_combo = QComboBox()
        self.server_combo.setObjectName("serverCombo")
        for d in catalog.of_kind("server"):
            self.server_combo.addItem(d.id, d.id)
        self.switch_combo = QComboBox()
        self.switch_combo.setObjectName("switchCombo")
        for d in catalog.of_kind("switch"):
            if d.technology != "gateway":  # a gateway joins fabrics; it builds none alone
                self.switch_combo.addItem(d.id, d.id)
        self.oversub_spin = QDoubleSpinBox()
        self.oversub_spin.setObjectName("oversubscriptionSpin")
        self.oversub_spin.setRange(1.0, 16.0)
        self.oversub_spin.setSingleStep(0.5)
        self.oversub_spin.setDecimals(2)
        self.oversub_spin.setValue(1.0)
        self.planes_spin = QSpinBox()
        self.planes_spin.setObjectName("planesSpin")
        self.planes_spin.setRange(2, 8)
        self.planes_spin.setValue(2)
        self.planes_spin.setToolTip("Independent planes; each NIC has one link on each")
        self.speed_combo = QComboBox()
        self.speed_combo.setObjectName("speedCombo")
        self.ethernet_pod_combo = QComboBox()
        self.ethernet_pod_combo.setObjectName("ethernetPodCombo")
        self.ethernet_pod_combo.addItem("none (all InfiniBand)", None)
        for d in catalog.of_kind("switch"):
            if d.technology == "ethernet":
                self.ethernet_pod_combo.addItem(d.id, d.id)
        self.ethernet_pod_combo.setToolTip(
            "Build the last pod of Ethernet switches (RoCE): its spines reach the Ethernet "
            "core directly, so it meets the InfiniBand pod through that pod's gateways"
        )
        self.storage_spin = QSpinBox()
        self.storage_spin.setObjectName("storageNodesSpin")
        self.storage_spin.setRange(0, 10_000)
        self.storage_spin.setSpecialValueText("none")
        self.storage_spin.setToolTip(
            "Storage nodes on an Ethernet storage network of their own, reached through the "
            "servers' front-end ports; checkpoint jobs write there, off the compute fabric"
        )
        self.error_label = QLabel()
        self.error_label.setObjectName("templateError")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #d62728")

        form = QFormLayout()
        form.addRow("Template", self.template_combo)
        form.addRow("GPUs", self.gpus_spin)
        form.addRow("Server model", self.server_combo)
        form.addRow("Switch model", self.switch_combo)
        form.addRow("Oversubscription", self.oversub_spin)
        form.addRow("Planes", self.planes_spin)
        form.addRow("Port speed (Gb/s)", self.speed_combo)
        form.addRow("Ethernet pod", self.ethernet_pod_combo)
        form.addRow("Storage nodes", self.storage_spin)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)

        self.template_combo.currentTextChanged.connect(self._template_changed)
        self.switch_combo.currentIndexChanged.connect(lambda _: self._fill_speeds())
        self.server_combo.currentIndexChanged.connect(lambda _: self._fill_speeds(keep=False))
        for combo in (
            self.server_combo,
            self.switch_combo,
            self.speed_combo,
            self.ethernet_pod_combo,
        ):
            combo.currentIndexChanged.connect(self.error_label.clear)
        self.gpus_spin.valueChanged.connect(self.error_label.clear)
        self.oversub_spin.valueChanged.connect(self.error_label.clear)
        self.planes_spin.valueChanged.connect(self.error_label.clear)
        self.storage_spin.valueChanged.connect(self.error_label.clear)
        self.planes_spin.valueChanged.connect(lambda _: self._fill_speeds(keep=False))
        self._template_changed(self.template_combo.currentText())
        self._fill_speeds()

    def _template_changed(self, template: str) -> None:
        self.oversub_spin.setEnabled(template in OVERSUBSCRIBED)
        self.planes_spin.setEnabled(template in PLANED)
        self.ethernet_pod_combo.setEnabled(template in MIXED_PODS)
        self.error_label.clear()
        self._fill_speeds(keep=False)

    def _fill_speeds(self, keep: bool = True) -> None:
        """The switch's port speeds; the template's speed for the server (its NIC's rate,
        shared by the planes of a multi-plane or dual-ToR template) preselected when
        offered, or the speed chosen before when `keep`."""
        previous = self.speed_combo.currentData() if keep else None
        self.speed_combo.clear()
        try:
            speeds = sorted(self.catalog.switch_port_modes(self.switch_combo.currentData()))
        except (KeyError, TypeError):
            speeds = []
        for speed in reversed(speeds):
            self.speed_combo.addItem(f"{speed:g}", float(speed))
        preferred = previous
        if preferred not in speeds:
            preferred = template_speed(
                self.template_combo.currentText(),
                self.server_combo.currentData(),
                self.planes_spin.value(),
                self.catalog,
            )
        index = self.speed_combo.findData(preferred) if preferred is not None else -1
        if index >= 0:
            self.speed_combo.setCurrentIndex(index)

    def params(self) -> dict:
        """The generator's keyword arguments from the widgets."""
        template = self.template_combo.currentText()
        params = {
            "gpus": self.gpus_spin.value(),
            "server": self.server_combo.currentData(),
            "switch": self.switch_combo.currentData(),
            "speed_gbps": self.speed_combo.currentData(),
            "catalog": self.catalog,
        }
        if template in OVERSUBSCRIBED:
            params["oversubscription"] = self.oversub_spin.value()
        if template in PLANED:
            params["planes"] = self.planes_spin.value()
        if template in MIXED_PODS and self.ethernet_pod_combo.currentData() is not None:
            params["ethernet_pod"] = self.ethernet_pod_combo.currentData()
        if self.storage_spin.value():
            params["storage_nodes"] = self.storage_spin.value()
        return params

    def generate(self) -> Scenario | None:
        """Generate the scenario; on a refusal show the message and return ``None``."""
        try:
            scenario = generate(self.template_combo.currentText(), **self.params())
        except ScenarioError as exc:
            self.error_label.setText(exc.brief())
            return None
        except (ValueError, TypeError, KeyError) as exc:
            self.error_label.setText(str(exc))
            return None
        self.error_label.clear()
        return scenario

    def accept(self) -> None:
        """Close only when the generator built the scenario."""
        scenario = self.generate()
        if scenario is None:
            return
        self.scenario = scenario
        super().accept()
