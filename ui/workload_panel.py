"""The Workload dock: the collective benchmark and the training job, edited in the window.

The collective part sets the operation, the ranks it runs on (0: every GPU), the
permutation test's message size and the range of sizes the collective curve covers; the
training part the model preset, its parallelism (TP, PP, DP, EP, CP), micro-batch, global batch, sequence length, ZeRO stage and whether the
data-parallel traffic overlaps the backward pass. A zero keeps the preset's value ("preset"
in the box). Every edit goes through `ScenarioDocument.set_field`, so it is one undo step,
and the panel shows the same messages the inspector does: a refused edit's reason, and the
structural problems of the workload (`engine.model.validation`) while there are any. The
number boxes accept a minus sign, so a negative entry is answered by that message rather
than silently dropped.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from engine.analysis import OPS, parse_bytes
from engine.catalog.model_presets import model_names
from engine.model.errors import Problem
from ui.document.document import ScenarioDocument

PRESET_TEXT = "preset"
MAX_COUNT = 10_000_000
# the training job's whole-number fields: (field, label, tooltip)
TRAINING_NUMBERS = (
    ("tp", "TP", "tensor-parallel ranks"),
    ("pp", "PP", "pipeline stages"),
    ("dp", "DP", "data-parallel ranks (0: what the GPUs left over allow)"),
    ("ep", "EP", "expert-parallel ranks (mixture-of-experts models)"),
    ("cp", "CP", "context-parallel ranks"),
    ("micro_batch", "Micro-batch", "sequences per micro-batch"),
    ("global_batch", "Global batch", "sequences per step"),
    ("seq_len", "Sequence length", "tokens per sequence"),
)
ZERO_STAGES = ((PRESET_TEXT, -1), ("0 (off)", 0), ("1", 1), ("2", 2), ("3", 3))


def bytes_text(value: float) -> str:
    """A byte count as typed back into the box: ``1G``, ``256M``, ``4K`` when exact, else the
    plain number (`parse_bytes` reads every one of them back)."""
    for suffix, unit in (("T", 2**40), ("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if value >= unit and value % unit == 0:
            return f"{value / unit:g}{suffix}"
    return f"{value:.0f}" if float(value).is_integer() else f"{value:g}"


def _number_box(name: str, tooltip: str, special: str) -> QSpinBox:
    box = QSpinBox()
    box.setObjectName(name)
    box.setRange(-MAX_COUNT, MAX_COUNT)  # a typed minus reaches the validation message
    box.setKeyboardTracking(False)
    box.setToolTip(f"{tooltip}; 0 = {special}")
    return box


class WorkloadPanel(QWidget):
    """The workload form (see the module docstring), mirroring the document's workload."""

    def __init__(self, document: ScenarioDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.setObjectName("workloadPanel")

        self.op_combo = QComboBox()
        self.op_combo.setObjectName("workloadOp")
        self.op_combo.addItems(list(OPS))
        self.ranks_spin = _number_box("workloadRanks", "GPUs the collective runs on", "all")
        self.message_edit = QLineEdit()
        self.message_edit.setObjectName("workloadMessage")
        self.message_edit.setToolTip(
            "Bytes each connection of the permutation test carries, e.g. 1G, 256M, 1e9"
        )
        self.sizes_edit = QLineEdit()
        self.sizes_edit.setObjectName("workloadSizes")
        self.sizes_edit.setPlaceholderText("8:8G (steps of 4)")
        self.sizes_edit.setToolTip(
            "Message sizes of the collective curve: MIN:MAX in steps of 4, or MIN:MAX:FACTOR, "
            "e.g. 1M:8G or 64K:1G:2; empty for 8 B to 8 GiB"
        )
        collective = QGroupBox("Collective and permutation test")
        form = QFormLayout(collective)
        form.addRow("Operation", self.op_combo)
        form.addRow("Ranks", self.ranks_spin)
        form.addRow("Message size (B)", self.message_edit)
        form.addRow("Curve sizes (B)", self.sizes_edit)

        self.model_combo = QComboBox()
        self.model_combo.setObjectName("workloadModel")
        self.model_combo.addItems(model_names())
        self.numbers: dict[str, QSpinBox] = {}
        training = QGroupBox("Training job (0: the model preset's value)")
        form2 = QFormLayout(training)
        form2.addRow("Model", self.model_combo)
        for field, label, tooltip in TRAINING_NUMBERS:
            box = _number_box(f"training_{field}", tooltip, "the preset's")
            self.numbers[field] = box
            form2.addRow(label, box)
        self.zero_combo = QComboBox()
        self.zero_combo.setObjectName("workloadZero")
        for text, stage in ZERO_STAGES:
            self.zero_combo.addItem(text, stage)
        self.overlap_box = QCheckBox("DP traffic overlaps the backward pass")
        self.overlap_box.setObjectName("workloadOverlap")
        form2.addRow("ZeRO stage", self.zero_combo)
        form2.addRow(self.overlap_box)

        self.error_label = QLabel()
        self.error_label.setObjectName("workloadMessageLabel")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #d62728")
        layout = QVBoxLayout(self)
        layout.addWidget(collective)
        layout.addWidget(training)
        layout.addWidget(self.error_label)
        layout.addStretch(1)

        self.op_combo.activated.connect(
            lambda i: self._apply("workload.op", self.op_combo.itemText(i))
        )
        self.ranks_spin.valueChanged.connect(lambda v: self._apply("workload.ranks", str(v)))
        self.message_edit.editingFinished.connect(self._message_entered)
        self.sizes_edit.editingFinished.connect(
            lambda: self._apply("workload.sizes", self.sizes_edit.text().strip())
        )
        self.model_combo.activated.connect(
            lambda i: self._apply("workload.training.model", self.model_combo.itemText(i))
        )
        for field, box in self.numbers.items():
            box.valueChanged.connect(
                lambda v, f=field: self._apply(f"workload.training.{f}", str(v))
            )
        self.zero_combo.activated.connect(
            lambda i: self._apply("workload.training.zero_stage", str(self.zero_combo.itemData(i)))
        )
        self.overlap_box.toggled.connect(
            lambda on: self._apply("workload.training.overlap_dp", "true" if on else "false")
        )
        document.changed.connect(self.refresh)
        document.problemsChanged.connect(self._show_problems)
        self.refresh()

    def _widgets(self) -> list[QWidget]:
        return [
            self.op_combo,
            self.ranks_spin,
            self.message_edit,
            self.sizes_edit,
            self.model_combo,
            *self.numbers.values(),
            self.zero_combo,
            self.overlap_box,
        ]

    def refresh(self) -> None:
        """Load the scenario's workload into the widgets without triggering edits."""
        w = self.document.scenario.workload
        job = w.training
        widgets = self._widgets()
        for widget in widgets:
            widget.blockSignals(True)
        try:
            if self.op_combo.findText(w.op) < 0:
                self.op_combo.addItem(w.op)
            self.op_combo.setCurrentText(w.op)
            self.ranks_spin.setValue(max(-MAX_COUNT, min(MAX_COUNT, w.ranks)))
            self.message_edit.setText(bytes_text(w.message_bytes))
            self.sizes_edit.setText(w.sizes)
            if self.model_combo.findText(job.model) < 0:
                self.model_combo.addItem(job.model)
            self.model_combo.setCurrentText(job.model)
            for field, box in self.numbers.items():
                box.setValue(max(-MAX_COUNT, min(MAX_COUNT, getattr(job, field))))
            index = self.zero_combo.findData(job.zero_stage)
            self.zero_combo.setCurrentIndex(index if index >= 0 else 0)
            self.overlap_box.setChecked(job.overlap_dp)
        finally:
            for widget in widgets:
                widget.blockSignals(False)
        self._show_problems(self.document.problems)

    def _show_problems(self, problems: list[Problem]) -> None:
        mine = [p for p in problems if p.where.startswith("workload")]
        if mine:
            self.error_label.setText("\n".join(f"{p.where}: {p.message}" for p in mine))
        elif self.error_label.property("refusal") is None:
            self.error_label.setText("")

    def _apply(self, path: str, text: str) -> None:
        refusal = self.document.set_field(path, text)
        self.error_label.setProperty("refusal", refusal)
        if refusal:
            self.error_label.setText(refusal)
            self.refresh()
        else:
            self._show_problems(self.document.problems)

    def _message_entered(self) -> None:
        text = self.message_edit.text().strip()
        try:
            value = parse_bytes(text)
        except ValueError as exc:
            self.error_label.setProperty("refusal", str(exc))
            self.error_label.setText(f"message size: {exc}")
            return
        self._apply("workload.message_bytes", str(value))
