"""The Congestion tab's workload form: what traffic the transport study runs.

The form edits a `TransportWorkload` (the study's own input, not part of the scenario, so
not an undoable document edit): its kind (incast N:1, permutation, all-to-all, the first
stage of a collective), the fields that kind reads (senders and a victim for an incast,
ranks, the collective's op and algorithm, a seed for a permutation), the bytes each flow
carries and the horizon, in one row above the results. Fields the chosen kind does not
read are hidden.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QWidget,
)

from engine.analysis import COLLECTIVE_ALGORITHMS, OPS, TRANSPORT_KINDS, TransportWorkload

KIND_TITLES = {
    "incast": "incast (N:1)",
    "collective": "collective (first stage)",
    "traffic": "traffic matrix (the scenario's)",
}
KINDS = {kind: KIND_TITLES.get(kind, kind) for kind in TRANSPORT_KINDS}
MIB = float(2**20)
MAX_SENDERS = 65_536
MAX_RANKS = 1_000_000
MAX_MIB = 1_048_576.0
MAX_HORIZON_MS = 1_000_000.0
DEFAULT_MIB = 16.0  # a study of a few milliseconds on the presets' 400G links
# which rows each kind reads (kind and bytes per flow always show)
ROWS = {
    "senders": ("incast",),
    "victim": ("incast",),
    "ranks": ("all-to-all", "collective"),
    "op": ("collective",),
    "algorithm": ("collective",),
    "seed": ("permutation",),
}


class WorkloadForm(QWidget):
    """Kind, senders, victim, ranks, op, algorithm, seed, bytes per flow and horizon.

    `workload()` is the `TransportWorkload` the controls describe; `set_workload` shows
    one. `changed` fires after every edit of a control.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("congestionWorkload")
        defaults = TransportWorkload()
        self.kind_combo = QComboBox()
        self.kind_combo.setObjectName("congestionKindCombo")
        for kind, title in KINDS.items():
            self.kind_combo.addItem(title, kind)
        self.kind_combo.setToolTip("The traffic pattern the study runs")
        self.senders_spin = QSpinBox()
        self.senders_spin.setObjectName("congestionSendersSpin")
        self.senders_spin.setRange(1, MAX_SENDERS)
        self.senders_spin.setSuffix(" : 1")
        self.senders_spin.setToolTip("GPUs on other servers sending to one GPU at once")
        self.victim_check = QCheckBox("add a victim flow")
        self.victim_check.setObjectName("congestionVictimCheck")
        self.victim_check.setToolTip(
            "One more flow on the first sender's uplink, bound elsewhere: what PFC's or "
            "credits' back-pressure costs a bystander"
        )
        self.ranks_spin = QSpinBox()
        self.ranks_spin.setObjectName("congestionRanksSpin")
        self.ranks_spin.setRange(0, MAX_RANKS)
        self.ranks_spin.setSpecialValueText("all GPUs")
        self.ranks_spin.setToolTip("The first this many GPUs take part (all GPUs at 0)")
        self.op_combo = QComboBox()
        self.op_combo.setObjectName("congestionOpCombo")
        self.op_combo.addItems(list(OPS))
        self.algorithm_combo = QComboBox()
        self.algorithm_combo.setObjectName("congestionAlgorithmCombo")
        self.algorithm_combo.addItems(list(COLLECTIVE_ALGORITHMS[self.op_combo.currentText()]))
        self.algorithm_combo.setEditable(True)
        self.algorithm_combo.setToolTip("The collective's algorithm; its first stage is run")
        self.seed_spin = QSpinBox()
        self.seed_spin.setObjectName("congestionSeedSpin")
        self.seed_spin.setRange(0, 2**31 - 1)
        self.seed_spin.setToolTip("Which random permutation")
        self.bytes_spin = QDoubleSpinBox()
        self.bytes_spin.setObjectName("congestionBytesSpin")
        self.bytes_spin.setRange(0.001, MAX_MIB)
        self.bytes_spin.setDecimals(3)
        self.bytes_spin.setSuffix(" MiB")
        self.bytes_spin.setToolTip("Bytes each flow carries")
        self.horizon_spin = QDoubleSpinBox()
        self.horizon_spin.setObjectName("congestionHorizonSpin")
        self.horizon_spin.setRange(0.0, MAX_HORIZON_MS)
        self.horizon_spin.setDecimals(3)
        self.horizon_spin.setSuffix(" ms")
        self.horizon_spin.setSpecialValueText("to the end")
        self.horizon_spin.setToolTip(
            "Stop the run at this simulated time ('to the end': until every flow is done)"
        )

        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(0, 0, 0, 0)
        self.fields: dict[QWidget, QWidget] = {}  # control -> its labelled field
        for title, control in (
            ("Workload", self.kind_combo),
            ("Senders", self.senders_spin),
            ("", self.victim_check),
            ("Ranks", self.ranks_spin),
            ("Collective", self.op_combo),
            ("Algorithm", self.algorithm_combo),
            ("Seed", self.seed_spin),
            ("Per flow", self.bytes_spin),
            ("Horizon", self.horizon_spin),
        ):
            self.fields[control] = self._field(title, control)
            self.row.addWidget(self.fields[control])
        self.row.addStretch(1)
        self.set_workload(
            TransportWorkload(
                kind=defaults.kind,
                senders=defaults.senders,
                bytes_per_flow=DEFAULT_MIB * MIB,
            )
        )

        self.kind_combo.currentIndexChanged.connect(self._kind_changed)
        for spin in (self.senders_spin, self.ranks_spin, self.seed_spin):
            spin.valueChanged.connect(self.changed)
        for spin in (self.bytes_spin, self.horizon_spin):
            spin.valueChanged.connect(self.changed)
        self.victim_check.toggled.connect(self.changed)
        self.op_combo.currentIndexChanged.connect(self._op_changed)
        self.op_combo.currentIndexChanged.connect(self.changed)
        self.algorithm_combo.currentTextChanged.connect(self.changed)

    def _op_changed(self) -> None:
        """Offer the algorithms the chosen operation has (keeping the choice when it has it)."""
        current = self.algorithm_combo.currentText()
        names = list(COLLECTIVE_ALGORITHMS.get(self.op_combo.currentText(), ()))
        self.algorithm_combo.blockSignals(True)
        self.algorithm_combo.clear()
        self.algorithm_combo.addItems(names)
        self.algorithm_combo.setCurrentText(current if current in names else names[0])
        self.algorithm_combo.blockSignals(False)

    @staticmethod
    def _field(title: str, control: QWidget) -> QWidget:
        field = QWidget()
        layout = QHBoxLayout(field)
        layout.setContentsMargins(0, 0, 6, 0)
        layout.setSpacing(4)
        if title:
            label = QLabel(title)
            label.setBuddy(control)
            layout.addWidget(label)
        layout.addWidget(control)
        return field

    def rows(self) -> dict[str, QWidget]:
        """The controls whose rows depend on the kind, by the workload field they set."""
        return {
            "senders": self.senders_spin,
            "victim": self.victim_check,
            "ranks": self.ranks_spin,
            "op": self.op_combo,
            "algorithm": self.algorithm_combo,
            "seed": self.seed_spin,
        }

    def kind(self) -> str:
        """The chosen kind (``incast``, ``permutation``, ``all-to-all``, ``collective``)."""
        return str(self.kind_combo.currentData())

    def set_kind(self, kind: str) -> None:
        """Choose `kind` (as a user would in the combo)."""
        self.kind_combo.setCurrentIndex(max(0, self.kind_combo.findData(kind)))

    def workload(self) -> TransportWorkload:
        """The workload the controls describe (fields the kind does not read at defaults)."""
        kind = self.kind()
        defaults = TransportWorkload()
        reads = {name: kind in kinds for name, kinds in ROWS.items()}
        return TransportWorkload(
            kind=kind,
            senders=self.senders_spin.value() if reads["senders"] else defaults.senders,
            ranks=self.ranks_spin.value() if reads["ranks"] else defaults.ranks,
            op=self.op_combo.currentText() if reads["op"] else defaults.op,
            algorithm=(
                self.algorithm_combo.currentText().strip() or defaults.algorithm
                if reads["algorithm"]
                else defaults.algorithm
            ),
            bytes_per_flow=self.bytes_spin.value() * MIB,
            victim=self.victim_check.isChecked() and reads["victim"],
            seed=self.seed_spin.value() if reads["seed"] else defaults.seed,
            horizon_s=self.horizon_spin.value() * 1e-3,
        )

    def set_workload(self, workload: TransportWorkload) -> None:
        """Show `workload` in the controls."""
        self.set_kind(workload.kind)
        self.senders_spin.setValue(workload.senders)
        self.victim_check.setChecked(workload.victim)
        self.ranks_spin.setValue(workload.ranks)
        self.op_combo.setCurrentText(workload.op)
        self.algorithm_combo.setCurrentText(workload.algorithm)
        self.seed_spin.setValue(workload.seed)
        self.bytes_spin.setValue(workload.bytes_per_flow / MIB)
        self.horizon_spin.setValue(workload.horizon_s * 1e3)
        self._show_rows()

    def _kind_changed(self, _index: int) -> None:
        self._show_rows()
        self.changed.emit()

    def _show_rows(self) -> None:
        kind = self.kind()
        for name, widget in self.rows().items():
            self.fields[widget].setVisible(kind in ROWS[name])


def workload_text(workload: TransportWorkload) -> str:
    """A workload in a few words: ``incast 8:1 + victim, 16 MiB per flow``."""
    kind = workload.kind
    if kind == "incast":
        what = f"incast {workload.senders}:1" + (" + victim" if workload.victim else "")
    elif kind == "permutation":
        what = f"permutation (seed {workload.seed})"
    else:
        ranks = f"{workload.ranks:,} GPUs" if workload.ranks else "all GPUs"
        what = (
            f"all-to-all over {ranks}"
            if kind == "all-to-all"
            else f"{workload.op} ({workload.algorithm}) over {ranks}"
        )
    size = workload.bytes_per_flow / MIB
    horizon = f", until {workload.horizon_s * 1e3:g} ms" if workload.horizon_s > 0 else ""
    return f"{what}, {size:g} MiB per flow{horizon}"
