"""The property inspector: the selected group's or bundle's fields, else fabric/routing.

Every edit goes through `ScenarioDocument.set_field` (the tier through `set_tier`, which also
moves a placed node into the new tier's band), so it is undoable; a refused edit shows its
message under the form. The fabric page ends with the Transport group
(`ui.transport_settings`), whose edits and refusals take the same way.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from engine.model.scenario import PATTERNS, ROUTING_MODES, RoutingPolicy
from ui.canvas.layout import tier_y
from ui.document.document import SWITCH_TIERS, ScenarioDocument
from ui.transport_settings import TransportSettingsBox

MAX_COUNT = 1_000_000
MAX_LATENCY_NS = 100_000.0
MAX_LINKS_PER_PAIR = 1024
MAX_BLOCKS = 100_000
MAX_SPEED_GBPS = 100_000.0
MAX_LENGTH_M = 100_000.0
CATALOG_TEXT = "catalog"
MIN_FORM_HEIGHT = 150  # px: a few rows; the rest scrolls, so the results can take the height


class Inspector(QWidget):
    """Form for the selected group (count, model, tier), the selected bundle (pattern, links per
    pair, speed, blocks, cable, length) or the fabric and routing settings (routing mode,
    ECMP hash scope, switch latency, transport).

    The switch latency box shows ``catalog`` at its minimum (0): the catalog's value (None).
    The override line accepts ``path=value`` like the CLI's ``--set``.
    `message(str)` fires with the refusal of an edit (``""`` after a successful one).
    """

    message = Signal(str)

    def __init__(self, document: ScenarioDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.group_id = ""
        self.bundle_id = ""
        self.setObjectName("inspector")

        self.title = QLabel()
        self.title.setObjectName("inspectorTitle")

        group_page = QWidget()
        form = QFormLayout(group_page)
        self.count_spin = QSpinBox()
        self.count_spin.setObjectName("countSpin")
        self.count_spin.setRange(1, MAX_COUNT)
        self.count_spin.setKeyboardTracking(False)
        self.count_spin.setToolTip(f"Number of devices in the group (1..{MAX_COUNT:,})")
        self.model_combo = QComboBox()
        self.model_combo.setObjectName("modelCombo")
        self.tier_combo = QComboBox()
        self.tier_combo.setObjectName("tierCombo")
        self.tier_combo.setToolTip("The switch's tier: leaf, spine or core (servers stay servers)")
        form.addRow("Count", self.count_spin)
        form.addRow("Model", self.model_combo)
        form.addRow("Tier", self.tier_combo)

        fabric_page = QWidget()
        form2 = QFormLayout(fabric_page)
        self.routing_combo = QComboBox()
        self.routing_combo.setObjectName("routingCombo")
        self.routing_combo.addItems(list(ROUTING_MODES))
        self.hash_scope_combo = QComboBox()
        self.hash_scope_combo.setObjectName("hashScopeCombo")
        self.hash_scope_combo.addItems(list(RoutingPolicy.HASH_SCOPES))
        self.hash_scope_combo.setToolTip(
            "Which switches share one ECMP hash function: each switch, each tier, each "
            "switch model (the vendors' default) or the whole fabric; shared functions "
            "polarize (a flow's choice at the leaf repeats at the spine)"
        )
        self.latency_spin = QDoubleSpinBox()
        self.latency_spin.setObjectName("switchLatencySpin")
        self.latency_spin.setRange(0.0, MAX_LATENCY_NS)
        self.latency_spin.setDecimals(1)
        self.latency_spin.setSuffix(" ns")
        self.latency_spin.setSpecialValueText(CATALOG_TEXT)
        self.latency_spin.setKeyboardTracking(False)
        self.latency_spin.setToolTip("Switch latency; 'catalog' uses the catalog's value")
        form2.addRow("Routing", self.routing_combo)
        form2.addRow("Hash scope", self.hash_scope_combo)
        form2.addRow("Switch latency", self.latency_spin)
        self.transport = TransportSettingsBox(document, self._apply, self._refuse)
        form2.addRow(self.transport)

        bundle_page = QWidget()
        form3 = QFormLayout(bundle_page)
        self.pattern_combo = QComboBox()
        self.pattern_combo.setObjectName("patternCombo")
        self.pattern_combo.addItems(list(PATTERNS))
        self.links_spin = QSpinBox()
        self.links_spin.setObjectName("linksPerPairSpin")
        self.links_spin.setRange(1, MAX_LINKS_PER_PAIR)
        self.links_spin.setKeyboardTracking(False)
        self.speed_spin = QDoubleSpinBox()
        self.speed_spin.setObjectName("speedSpin")
        self.speed_spin.setRange(1.0, MAX_SPEED_GBPS)
        self.speed_spin.setDecimals(1)
        self.speed_spin.setSuffix(" Gb/s")
        self.speed_spin.setKeyboardTracking(False)
        self.blocks_spin = QSpinBox()
        self.blocks_spin.setObjectName("blocksSpin")
        self.blocks_spin.setRange(1, MAX_BLOCKS)
        self.blocks_spin.setKeyboardTracking(False)
        self.cable_edit = QLineEdit()
        self.cable_edit.setObjectName("cableEdit")
        self.cable_edit.setPlaceholderText("auto")
        self.cable_edit.setToolTip("A catalog cable id, or 'auto' (chosen by length and speed)")
        self.length_spin = QDoubleSpinBox()
        self.length_spin.setObjectName("lengthSpin")
        self.length_spin.setRange(0.0, MAX_LENGTH_M)
        self.length_spin.setDecimals(2)
        self.length_spin.setSuffix(" m")
        self.length_spin.setKeyboardTracking(False)
        self.ends_label = QLabel()
        form3.addRow("Ends", self.ends_label)
        form3.addRow("Pattern", self.pattern_combo)
        form3.addRow("Links per pair", self.links_spin)
        form3.addRow("Speed", self.speed_spin)
        form3.addRow("Blocks", self.blocks_spin)
        form3.addRow("Cable", self.cable_edit)
        form3.addRow("Length", self.length_spin)

        self.pages = QStackedWidget()
        self.pages.addWidget(fabric_page)
        self.pages.addWidget(group_page)
        self.pages.addWidget(bundle_page)
        # the stack is as tall as its shown page, not its tallest (the fabric page)
        self.pages.currentChanged.connect(self._fit_page)
        self._fit_page(0)

        self.override_edit = QLineEdit()
        self.override_edit.setObjectName("overrideEdit")
        self.override_edit.setPlaceholderText("path=value, e.g. routing.mode=spray")
        self.error_label = QLabel()
        self.error_label.setObjectName("inspectorMessage")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #d62728")

        # the form scrolls: the fabric page with its Transport group is taller than a short
        # window leaves the dock, and the dock must not hold the window's height up
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.addWidget(self.title)
        layout.addWidget(self.pages)
        layout.addWidget(QLabel("Set a field:"))
        layout.addWidget(self.override_edit)
        layout.addWidget(self.error_label)
        layout.addStretch(1)
        self.scroll = QScrollArea()
        self.scroll.setObjectName("inspectorScroll")
        self.scroll.setWidget(content)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        bar = self.scroll.verticalScrollBar().sizeHint().width()
        self.scroll.setMinimumWidth(content.sizeHint().width() + bar)
        # a few rows at least; what is taller scrolls, so the dock never holds the Results
        # dock below it short (the plots need the height at 1280x800)
        self.scroll.setMinimumHeight(min(content.minimumSizeHint().height(), MIN_FORM_HEIGHT))
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroll)

        self.count_spin.valueChanged.connect(self._count_edited)
        self.model_combo.activated.connect(self._model_edited)
        self.tier_combo.activated.connect(self._tier_edited)
        self.routing_combo.activated.connect(self._routing_edited)
        self.hash_scope_combo.activated.connect(
            lambda i: self._apply("routing.hash_scope", self.hash_scope_combo.itemText(i))
        )
        self.latency_spin.valueChanged.connect(self._latency_edited)
        self.override_edit.returnPressed.connect(self._override_entered)
        self.pattern_combo.activated.connect(
            lambda i: self._bundle_edit("pattern", self.pattern_combo.itemText(i))
        )
        self.links_spin.valueChanged.connect(lambda v: self._bundle_edit("links_per_pair", str(v)))
        self.speed_spin.valueChanged.connect(lambda v: self._bundle_edit("speed_gbps", repr(v)))
        self.blocks_spin.valueChanged.connect(lambda v: self._bundle_edit("blocks", str(v)))
        self.length_spin.valueChanged.connect(lambda v: self._bundle_edit("length_m", repr(v)))
        self.cable_edit.editingFinished.connect(
            lambda: self._bundle_edit("cable", self.cable_edit.text().strip() or "auto")
        )
        document.changed.connect(self.refresh)
        self.refresh()

    # ---- showing ----------------------------------------------------------------------------

    def show_group(self, group_id: str) -> None:
        """Inspect the group `group_id` (``""``: the fabric and routing settings)."""
        self.group_id = group_id
        self.bundle_id = ""
        self.refresh()

    def show_bundle(self, bundle_id: str) -> None:
        """Inspect the bundle `bundle_id` (ignored while a group is inspected)."""
        if self.group_id and bundle_id:
            return
        self.bundle_id = bundle_id
        self.refresh()

    def refresh(self) -> None:
        """Load the current values into the widgets without triggering edits."""
        scenario = self.document.scenario
        try:
            group = scenario.group(self.group_id) if self.group_id else None
        except KeyError:
            group, self.group_id = None, ""
        bundle = next((b for b in scenario.bundles if b.id == self.bundle_id), None)
        if bundle is None:
            self.bundle_id = ""
        widgets = (
            self.count_spin,
            self.model_combo,
            self.tier_combo,
            self.routing_combo,
            self.hash_scope_combo,
            self.latency_spin,
            *self._bundle_widgets(),
        )
        for w in widgets:
            w.blockSignals(True)
        try:
            if group is None and bundle is not None:
                self.title.setText(f"<b>{bundle.id}</b> (bundle)")
                self.pages.setCurrentIndex(2)
                self.ends_label.setText(f"{bundle.a} → {bundle.b}")
                if self.pattern_combo.findText(bundle.pattern) < 0:
                    self.pattern_combo.addItem(bundle.pattern)
                self.pattern_combo.setCurrentText(bundle.pattern)
                self.links_spin.setValue(max(1, min(MAX_LINKS_PER_PAIR, bundle.links_per_pair)))
                self.speed_spin.setValue(float(bundle.speed_gbps))
                self.blocks_spin.setValue(max(1, min(MAX_BLOCKS, bundle.blocks)))
                self.cable_edit.setText(bundle.cable)
                self.length_spin.setValue(float(bundle.length_m))
            elif group is None:
                self.title.setText("<b>Fabric and routing</b>")
                self.pages.setCurrentIndex(0)
                self.routing_combo.setCurrentText(scenario.routing.mode)
                scope = scenario.routing.hash_scope
                if self.hash_scope_combo.findText(scope) < 0:
                    self.hash_scope_combo.addItem(scope)
                self.hash_scope_combo.setCurrentText(scope)
                latency = scenario.fabric.switch_latency_ns
                self.latency_spin.setValue(0.0 if latency is None else latency)
                self.transport.refresh()
            else:
                self.title.setText(f"<b>{group.name or group.id}</b> ({group.kind})")
                self.pages.setCurrentIndex(1)
                self.count_spin.setValue(max(1, min(MAX_COUNT, group.count)))
                self.model_combo.clear()
                models = [d.id for d in self.document.catalog.of_kind(group.kind)]
                if group.model not in models:
                    models.append(group.model)
                self.model_combo.addItems(models)
                self.model_combo.setCurrentText(group.model)
                self.tier_combo.clear()
                tiers = ["server"] if group.kind != "switch" else list(SWITCH_TIERS)
                if group.tier not in tiers:
                    tiers.append(group.tier)
                self.tier_combo.addItems(tiers)
                self.tier_combo.setCurrentText(group.tier)
                self.tier_combo.setEnabled(group.kind != "server")
        finally:
            for w in widgets:
                w.blockSignals(False)

    def _bundle_widgets(self) -> tuple[QWidget, ...]:
        return (
            self.pattern_combo,
            self.links_spin,
            self.speed_spin,
            self.blocks_spin,
            self.cable_edit,
            self.length_spin,
        )

    # ---- editing ----------------------------------------------------------------------------

    def _bundle_edit(self, field: str, text: str) -> None:
        if self.bundle_id and not self.group_id:
            self._apply(f"bundles.{self.bundle_id}.{field}", text)

    def _fit_page(self, index: int) -> None:
        for i in range(self.pages.count()):
            policy = QSizePolicy.Policy.Preferred if i == index else QSizePolicy.Policy.Ignored
            self.pages.widget(i).setSizePolicy(policy, policy)
        self.pages.adjustSize()

    def _apply(self, path: str, text: str) -> None:
        error = self.document.set_field(path, text)
        self.error_label.setText(error or "")
        self.message.emit(error or "")
        if error:
            self.refresh()

    def _refuse(self, message: str) -> None:
        """Show why an edit was not made, as `_apply` shows a refusal of the document."""
        self.error_label.setText(message)
        self.message.emit(message)

    def _count_edited(self, value: int) -> None:
        if self.group_id:
            self._apply(f"groups.{self.group_id}.count", str(value))

    def _model_edited(self, index: int) -> None:
        if self.group_id:
            self._apply(f"groups.{self.group_id}.model", self.model_combo.itemText(index))

    def _tier_edited(self, index: int) -> None:
        """Move the group to the chosen tier, its node into that tier's band (one step)."""
        if not self.group_id:
            return
        group = self.document.scenario.group(self.group_id)
        tier = self.tier_combo.itemText(index)
        position = None
        if group.position != (0.0, 0.0):  # a placed node moves to the new band
            position = (group.position[0], tier_y(tier))
        self.document.set_tier(self.group_id, tier, position)
        self.error_label.setText("")
        self.message.emit("")

    def _routing_edited(self, index: int) -> None:
        self._apply("routing.mode", self.routing_combo.itemText(index))

    def _latency_edited(self, value: float) -> None:
        text = "none" if value <= self.latency_spin.minimum() else repr(value)
        self._apply("fabric.switch_latency_ns", text)

    def _override_entered(self) -> None:
        text = self.override_edit.text().strip()
        path, sep, value = text.partition("=")
        if not sep or not path.strip():
            self.error_label.setText("write path=value, e.g. routing.mode=spray")
            self.message.emit(self.error_label.text())
            return
        self._apply(path.strip(), value.strip())
        if not self.error_label.text():
            self.override_edit.clear()
