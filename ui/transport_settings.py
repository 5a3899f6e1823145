"""The inspector's Transport group: the scenario's transport section and the fabric's MTU.

The group shows the mechanisms of the fabric's technology only: PFC, its XOFF threshold,
the ECN thresholds and DCQCN (with its catalog profile) on RoCE, IB congestion control on
InfiniBand; the port buffer and the MTU on both. Every control has a "default" state, the
scenario's ``None``: the catalog's value, named in the control (a combo's first entry, a
field's placeholder text) as the catalog gives it for the scenario's switches and NICs.

The group changes nothing itself: each edit is handed to the inspector (`apply`, one
undoable command through the document). An edit the transport checks would refuse (a Kmax
under Kmin, a Pmax over 1) is not made: it goes to `refuse` with the checks' message, the
way the inspector shows any refusal. Settings left over from the other technology (after
the fabric changed technology) are named under the group, with a button that clears them
in one undo step.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from engine.catalog.devices import Catalog
from engine.model.errors import ScenarioError
from engine.model.overrides import apply_override
from engine.model.scenario import Scenario
from engine.model.transport_checks import (
    CNP_PACINGS,
    G_READINGS,
    TRANSPORT_MODELS,
    check_transport,
)
from ui.canvas.items import TECHNOLOGY_TITLES
from ui.document.document import ScenarioDocument

MTU_CHOICES = (1024, 2048, 4096, 9000)
ROCE_FIELDS = ("pfc", "pfc_xoff_bytes", "ecn_kmin_bytes", "ecn_kmax_bytes", "ecn_pmax", "dcqcn")
READINGS = ("dcqcn_g_reading", "dcqcn_byte_unit_bytes", "dcqcn_byte_counter", "dcqcn_cnp_pacing")
ROCE_ONLY = (*ROCE_FIELDS, "dcqcn_profile", *READINGS)
IB_ONLY = ("ib_cc",)
DEFAULT_PROFILE = "dcqcn-nvidia"  # what the engine runs when no NIC names a profile
MODEL_TIPS = {
    "mechanistic": "Queues, pauses, marks and rate control as set below",
    "ideal": "Max-min fair rates: what a perfect transport would do",
}
TOOLTIP_ROLE = Qt.ItemDataRole.ToolTipRole
TIP_PROPERTY = "fabriclabTip"

Apply = Callable[[str, str], None]
Refuse = Callable[[str], None]


def number_text(value: float | None) -> str:
    """A byte count or a probability as the field shows it: ``150000``, ``0.01``; ``""``
    for the default."""
    if value is None:
        return ""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:g}"


def dcqcn_profiles(catalog: Catalog) -> list[str]:
    """The catalog's DCQCN parameter sets (technology ids starting with ``dcqcn-``)."""
    return sorted(k for k in catalog.technologies if k.startswith("dcqcn-"))


def _first_model(scenario: Scenario, kind: str) -> str | None:
    return next((g.model for g in scenario.groups if g.kind == kind), None)


def nic_profile(scenario: Scenario, catalog: Catalog) -> str:
    """The DCQCN profile the catalog names for the scenario's first server NIC."""
    for g in scenario.groups:
        if g.kind != "server":
            continue
        try:
            server = catalog.get(g.model, "server")
            if server.has("nic"):
                nic = catalog.get(str(server.value("nic")), "nic")
                if nic.has("cc_profile"):
                    return str(nic.value("cc_profile"))
        except KeyError:
            continue
    return DEFAULT_PROFILE


def _reading_defaults(catalog: Catalog, profile_id: str) -> dict[str, str]:
    """The readings of a firmware DCQCN profile's registers, as its catalog entry names them
    (none for a profile that states its constants, as the paper's)."""
    try:
        profile = catalog.technology(profile_id)
    except KeyError:
        return {}
    out = {}
    if profile.has("dce_tcp_g_reading"):
        out["dcqcn_g_reading"] = str(profile.value("dce_tcp_g_reading"))
    if profile.has("byte_counter_unit_bytes"):
        out["dcqcn_byte_unit_bytes"] = f"{float(profile.value('byte_counter_unit_bytes')):g} B"
    if profile.has("cnp_pacing"):
        out["dcqcn_cnp_pacing"] = f"per {profile.value('cnp_pacing')}"
    if profile.has("byte_counter_bytes"):
        out["dcqcn_byte_counter"] = "on" if profile.value("byte_counter_bytes") else "off"
    return out


def catalog_defaults(scenario: Scenario, catalog: Catalog) -> dict[str, str]:
    """What each transport setting is when left at its default, in words, from the catalog
    entries of the scenario's technology, first switch and first server's NIC."""
    technology = scenario.fabric.technology
    out: dict[str, str] = {}
    try:
        tech = catalog.technology(technology)
    except KeyError:
        return out
    switch_id = _first_model(scenario, "switch")
    try:
        switch = catalog.get(switch_id, "switch") if switch_id else None
    except KeyError:
        switch = None
    if tech.has("mtu_bytes"):
        out["mtu_bytes"] = f"{tech.value('mtu_bytes')}"
    if technology == "roce":
        out["pfc"] = "on" if tech.has("lossless") and tech.value("lossless") == "pfc" else "off"
        dcqcn = tech.has("congestion_control") and tech.value("congestion_control") == "dcqcn"
        out["dcqcn"] = "on" if dcqcn else "off"
        out["dcqcn_profile"] = nic_profile(scenario, catalog)
        out.update(_reading_defaults(catalog, out["dcqcn_profile"]))
        out["pfc_xoff_bytes"] = "buffer − headroom"
        if switch is not None:
            for name in ("ecn_kmin_bytes", "ecn_kmax_bytes", "ecn_pmax"):
                if switch.has(name):
                    out[name] = f"{float(switch.value(name)):,.10g} ({switch.id})"
    else:
        try:
            ib = catalog.technology("infiniband")
            out["ib_cc"] = "on" if ib.has("ib_cc_enabled") and ib.value("ib_cc_enabled") else "off"
        except KeyError:
            pass
    if switch is not None:
        if switch.has("port_buffer_bytes"):
            per_port = float(switch.value("port_buffer_bytes"))
            out["port_buffer_bytes"] = f"{per_port:,.0f} per port ({switch.id})"
        elif switch.has("buffer_mb"):
            out["port_buffer_bytes"] = f"{switch.value('buffer_mb')} MB shared ({switch.id})"
    return out


class TransportSettingsBox(QGroupBox):
    """The Transport group of the inspector's fabric page (see the module docstring).

    `apply(path, text)` makes one edit (the inspector's own, undoable); `refuse(message)`
    shows why an edit was not made. `refresh` reloads the controls from the document.
    """

    def __init__(
        self,
        document: ScenarioDocument,
        apply: Apply,
        refuse: Refuse,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("Transport", parent)
        self.setObjectName("transportSettings")
        self.document = document
        self._apply_edit = apply
        self._refuse = refuse

        self.model_combo = self._combo("transportModelCombo", "How transfers are modelled")
        for model in TRANSPORT_MODELS:
            self.model_combo.addItem(model, model)
            self.model_combo.setItemData(
                self.model_combo.count() - 1, MODEL_TIPS.get(model, ""), TOOLTIP_ROLE
            )
        self.pfc_combo = self._tristate("pfcCombo", "Priority flow control (lossless RoCE)")
        self.pfc_xoff_edit = self._number("pfcXoffEdit", "PFC XOFF threshold, bytes of queue")
        self.kmin_edit = self._number("ecnKminEdit", "ECN marking starts at this queue (bytes)")
        self.kmax_edit = self._number("ecnKmaxEdit", "ECN marks at Pmax from this queue (bytes)")
        self.pmax_edit = self._number("ecnPmaxEdit", "ECN marking probability at Kmax (0..1)")
        self.dcqcn_combo = self._tristate("dcqcnCombo", "DCQCN rate control at the senders")
        self.profile_combo = self._combo("dcqcnProfileCombo", "DCQCN parameter set (catalog)")
        self.g_reading_combo = self._choice(
            "dcqcnGReadingCombo",
            "What NVIDIA's DCE_TCP_G weighs in alpha's average: the retention (Mellanox "
            "community, Google Isekai) or the gain (mstflint's equation)",
            [(reading, reading) for reading in G_READINGS],
        )
        self.byte_unit_combo = self._choice(
            "dcqcnByteUnitCombo",
            "The unit of RPG_BYTE_RESET: bytes (every NVIDIA text) or 64 B (Google Isekai)",
            [("1 B", 1.0), ("64 B", 64.0)],
        )
        self.byte_counter_combo = self._tristate(
            "dcqcnByteCounterCombo", "DCQCN's byte counter (absent in the HPCC artifact's model)"
        )
        self.cnp_pacing_combo = self._choice(
            "dcqcnCnpPacingCombo",
            "How the receiving NIC paces CNPs: per flow (the paper) or per port (mstflint's "
            "'from the port': a port's flows share its CNPs)",
            [(f"per {pacing}", pacing) for pacing in CNP_PACINGS],
        )
        self.ib_cc_combo = self._tristate("ibCcCombo", "InfiniBand congestion control")
        self.buffer_edit = self._number(
            "portBufferEdit", "Buffer per switch port, bytes (replaces the switch's figure)"
        )
        self.mtu_combo = self._combo("mtuCombo", "Packet size of the fabric (fabric.mtu_bytes)")

        self.form = QFormLayout()
        self.form.addRow("Model", self.model_combo)
        self.form.addRow("PFC", self.pfc_combo)
        self.form.addRow("PFC XOFF (B)", self.pfc_xoff_edit)
        self.form.addRow("ECN Kmin (B)", self.kmin_edit)
        self.form.addRow("ECN Kmax (B)", self.kmax_edit)
        self.form.addRow("ECN Pmax", self.pmax_edit)
        self.form.addRow("DCQCN", self.dcqcn_combo)
        self.form.addRow("DCQCN profile", self.profile_combo)
        self.form.addRow("DCE_TCP_G read as", self.g_reading_combo)
        self.form.addRow("Byte counter unit", self.byte_unit_combo)
        self.form.addRow("Byte counter", self.byte_counter_combo)
        self.form.addRow("CNP pacing", self.cnp_pacing_combo)
        self.form.addRow("IB CC", self.ib_cc_combo)
        self.form.addRow("Port buffer (B)", self.buffer_edit)
        self.form.addRow("MTU", self.mtu_combo)

        self.leftover_label = QLabel()
        self.leftover_label.setObjectName("transportLeftover")
        self.leftover_label.setWordWrap(True)
        self.clear_button = QPushButton("Clear")
        self.clear_button.setObjectName("transportClearButton")
        self.clear_button.setToolTip("Set the other technology's transport settings to default")
        leftover = QHBoxLayout()
        leftover.addWidget(self.leftover_label, 1)
        leftover.addWidget(self.clear_button)
        self.leftover = QWidget()
        self.leftover.setLayout(leftover)
        leftover.setContentsMargins(0, 0, 0, 0)
        layout = QVBoxLayout(self)
        layout.addLayout(self.form)
        layout.addWidget(self.leftover)

        self.model_combo.activated.connect(lambda _i: self._combo_edited("model", self.model_combo))
        self.pfc_combo.activated.connect(lambda _i: self._combo_edited("pfc", self.pfc_combo))
        self.dcqcn_combo.activated.connect(lambda _i: self._combo_edited("dcqcn", self.dcqcn_combo))
        self.profile_combo.activated.connect(
            lambda _i: self._combo_edited("dcqcn_profile", self.profile_combo)
        )
        self.ib_cc_combo.activated.connect(lambda _i: self._combo_edited("ib_cc", self.ib_cc_combo))
        for name, combo in self.reading_combos().items():
            combo.activated.connect(lambda _i, n=name, c=combo: self._combo_edited(n, c))
        self.mtu_combo.activated.connect(lambda _i: self._mtu_edited())
        for name, edit in self.number_edits().items():
            edit.editingFinished.connect(lambda n=name, e=edit: self._number_edited(n, e))
        self.clear_button.clicked.connect(self.clear_leftovers)

    # ---- building -----------------------------------------------------------------------------

    @staticmethod
    def _combo(name: str, tip: str) -> QComboBox:
        combo = QComboBox()
        combo.setObjectName(name)
        combo.setToolTip(tip)
        return combo

    def _choice(self, name: str, tip: str, items: list[tuple[str, object]]) -> QComboBox:
        """A combo of "default" (the catalog's choice) and `items` (text, value)."""
        combo = self._combo(name, tip)
        combo.addItem("default", None)
        for text, value in items:
            combo.addItem(text, value)
        return combo

    def _tristate(self, name: str, tip: str) -> QComboBox:
        combo = self._combo(name, f"{tip}; 'default' is the catalog's choice")
        combo.addItem("default", None)
        combo.addItem("on", True)
        combo.addItem("off", False)
        return combo

    def _number(self, name: str, tip: str) -> QLineEdit:
        edit = QLineEdit()
        edit.setObjectName(name)
        edit.setClearButtonEnabled(True)
        edit.setProperty(TIP_PROPERTY, tip)
        edit.setToolTip(f"{tip}; empty: the catalog's value")
        return edit

    def number_edits(self) -> dict[str, QLineEdit]:
        """The number fields by the transport setting they edit."""
        return {
            "pfc_xoff_bytes": self.pfc_xoff_edit,
            "ecn_kmin_bytes": self.kmin_edit,
            "ecn_kmax_bytes": self.kmax_edit,
            "ecn_pmax": self.pmax_edit,
            "port_buffer_bytes": self.buffer_edit,
        }

    def reading_combos(self) -> dict[str, QComboBox]:
        """The combos of the DCQCN register readings by the setting they edit."""
        return {
            "dcqcn_g_reading": self.g_reading_combo,
            "dcqcn_byte_unit_bytes": self.byte_unit_combo,
            "dcqcn_byte_counter": self.byte_counter_combo,
            "dcqcn_cnp_pacing": self.cnp_pacing_combo,
        }

    def controls(self) -> dict[str, QWidget]:
        """Every control by the setting it edits (``mtu_bytes`` is the fabric's)."""
        return {
            "model": self.model_combo,
            "pfc": self.pfc_combo,
            "dcqcn": self.dcqcn_combo,
            "dcqcn_profile": self.profile_combo,
            "ib_cc": self.ib_cc_combo,
            **self.reading_combos(),
            "mtu_bytes": self.mtu_combo,
            **self.number_edits(),
        }

    # ---- showing ------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Load the scenario's transport settings into the controls (no edits fire), show
        only the rows of its technology, and name the catalog defaults."""
        scenario = self.document.scenario
        t = scenario.transport
        technology = scenario.fabric.technology
        defaults = catalog_defaults(scenario, self.document.catalog)
        widgets = list(self.controls().values())
        for w in widgets:
            w.blockSignals(True)
        try:
            self.setTitle(f"Transport ({TECHNOLOGY_TITLES.get(technology, technology)})")
            self._select(self.model_combo, t.model, t.model)
            for name, combo in (
                ("pfc", self.pfc_combo),
                ("dcqcn", self.dcqcn_combo),
                ("ib_cc", self.ib_cc_combo),
                *self.reading_combos().items(),
            ):
                default = defaults.get(name)
                combo.setItemText(0, f"default ({default})" if default else "default")
                self._select(combo, getattr(t, name), None)
            self._fill_profiles(t.dcqcn_profile, defaults.get("dcqcn_profile"))
            self._fill_mtu(scenario.fabric.mtu_bytes, defaults.get("mtu_bytes"))
            for name, edit in self.number_edits().items():
                edit.setText(number_text(getattr(t, name)))
                default = defaults.get(name)
                edit.setPlaceholderText(f"default: {default}" if default else "default")
                tip = edit.property(TIP_PROPERTY)
                edit.setToolTip(f"{tip}; empty: the catalog's value ({default or 'default'})")
        finally:
            for w in widgets:
                w.blockSignals(False)
        self._show_rows(technology)
        self._show_leftovers(technology)

    @staticmethod
    def _select(combo: QComboBox, value: object, fallback: object) -> None:
        index = combo.findData(value)
        if index < 0:
            combo.addItem(str(value), value)
            index = combo.count() - 1
        combo.setCurrentIndex(index if index >= 0 else combo.findData(fallback))

    def _fill_profiles(self, current: str | None, default: str | None) -> None:
        combo = self.profile_combo
        combo.clear()
        combo.addItem(f"default ({default}, the NIC's)" if default else "default", None)
        for profile in dcqcn_profiles(self.document.catalog):
            combo.addItem(profile, profile)
        self._select(combo, current, None)

    def _fill_mtu(self, current: int | None, default: str | None) -> None:
        combo = self.mtu_combo
        combo.clear()
        combo.addItem(f"default ({default} B)" if default else "default", None)
        for mtu in MTU_CHOICES:
            combo.addItem(f"{mtu} B", mtu)
        self._select(combo, current, None)

    def _show_rows(self, technology: str) -> None:
        roce, ib = technology == "roce", technology == "infiniband"
        for name, widget in self.controls().items():
            visible = (roce or name not in ROCE_ONLY) and (ib or name not in IB_ONLY)
            self.form.setRowVisible(widget, visible)

    def leftovers(self) -> list[str]:
        """The settings of the other technology the scenario still sets (refused by the
        checks: PFC on InfiniBand, IB CC on RoCE)."""
        t = self.document.scenario.transport
        technology = self.document.scenario.fabric.technology
        names = IB_ONLY if technology == "roce" else ROCE_ONLY if technology == "infiniband" else ()
        return [n for n in names if getattr(t, n) is not None]

    def _show_leftovers(self, technology: str) -> None:
        names = self.leftovers()
        other = "InfiniBand" if technology == "roce" else "RoCE"
        self.leftover_label.setText(
            f"Set for {other}, refused on this fabric: {', '.join(names)}" if names else ""
        )
        self.leftover.setVisible(bool(names))

    # ---- editing ------------------------------------------------------------------------------

    def _combo_edited(self, name: str, combo: QComboBox) -> None:
        value = combo.currentData()
        text = "none" if value is None else str(value).lower()
        self.edit(f"transport.{name}", text)

    def _mtu_edited(self) -> None:
        value = self.mtu_combo.currentData()
        self.edit("fabric.mtu_bytes", "none" if value is None else str(value))

    def _number_edited(self, name: str, edit: QLineEdit) -> None:
        text = edit.text().strip().replace(",", "").replace("_", "")
        current = number_text(getattr(self.document.scenario.transport, name))
        if text == current:
            return
        self.edit(f"transport.{name}", text or "none")

    def edit(self, path: str, text: str) -> None:
        """Make the edit `path` = `text` unless the transport checks would refuse it."""
        problem = self.refusal(path, text)
        if problem:
            self._refuse(problem)
            self.refresh()
            return
        self._apply_edit(path, text)

    def refusal(self, path: str, text: str) -> str | None:
        """Why the transport checks would refuse the edit (a problem it would add), or
        ``None`` (unreadable text is left to the document, which words that refusal)."""
        scenario = self.document.scenario
        try:
            after = apply_override(scenario, path, text)
        except ScenarioError:
            return None
        catalog = self.document.catalog
        before = check_transport(scenario, catalog)
        added = [p for p in check_transport(after, catalog) if p not in before]
        if not added:
            return None
        return "; ".join(f"{p.where}.{p.field}: {p.message}" for p in added)

    def clear_leftovers(self) -> None:
        """Set the other technology's settings back to default, as one undo step."""
        names = self.leftovers()
        if not names:
            return
        stack = self.document.undo_stack
        stack.beginMacro("Clear the other technology's transport settings")
        try:
            for name in names:
                self._apply_edit(f"transport.{name}", "none")
        finally:
            stack.endMacro()
