"""The Training tab's bar of step-model knobs: schedule, recomputation, kernels, precision, MoE.

The job's model and parallel layout are edited in the Workload dock (ui.workload_panel); this
bar holds what the step model adds on top of the layout: the pipeline schedule (1F1B,
interleaved by virtual stages, ZB-H1), activation recomputation, the attention kernel,
sequence parallelism, the matmul precision and the experts' load (capacity factor, imbalance). They are ``workload.training.overrides`` knobs: the bar shows them and
edits them through the document's undoable `SetFieldCommand` (`ScenarioDocument.set_field`),
so the window re-evaluates as after any other edit and Ctrl+Z undoes it. What the engine
refuses about the job shows beside the bar, from the document's `problemsChanged`. The bar
computes nothing.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QLabel,
    QSpinBox,
    QWidget,
)

from engine.model.errors import Problem
from engine.model.scenario import TrainingJob
from ui.document.document import ScenarioDocument
from ui.document.follow import follow
from ui.results.result_tab import ERROR_STYLE

WHERE = "workload.training"
PRESET = "preset"
# Step-model knobs shown as choices: (knob, label, tooltip, [(value, text)]).
CHOICES = (
    (
        "schedule",
        "Schedule",
        "pipeline schedule: 1F1B (interleaved when virtual stages > 1) or zero-bubble ZB-H1",
        [(0.0, "1F1B"), (1.0, "ZB-H1")],
    ),
    (
        "recompute",
        "Recompute",
        "activation recomputation: none, selective (the attention core) or full (every layer)",
        [(0.0, "none"), (1.0, "selective"), (2.0, "full")],
    ),
    (
        "flash_attention",
        "Attention",
        "attention kernel: fused (FlashAttention-class) or unfused (Megatron before 2022)",
        [(1.0, "fused"), (0.0, "unfused")],
    ),
    (
        "sequence_parallel",
        "SP",
        "sequence parallelism with TP (all-gather + reduce-scatter instead of all-reduce)",
        [(-1.0, PRESET), (0.0, "off"), (1.0, "on")],
    ),
    (
        "fp8",
        "Matmuls",
        "precision of the linear layers' matmuls: BF16, or FP8 at the GPU's FP8 ceiling",
        [(0.0, "BF16"), (1.0, "FP8")],
    ),
)
KNOB_DEFAULTS = {
    "schedule": 0.0,
    "recompute": 0.0,
    "flash_attention": 1.0,
    "sequence_parallel": -1.0,
    "fp8": 0.0,
}
# Mixture-of-experts load knobs: (knob, label, tooltip, minimum, special text at the minimum).
MOE_KNOBS = (
    (
        "capacity_factor",
        "Capacity",
        "MoE: each expert's buffer over the mean load (padding); dropless routes every token",
        0.0,
        "dropless",
    ),
    (
        "expert_imbalance",
        "Imbalance",
        "MoE: the busiest expert's tokens over the mean when routing is dropless",
        1.0,
        "even",
    ),
)
MOE_DEFAULTS = {"capacity_factor": 0.0, "expert_imbalance": 1.0}


class TrainingControls(QWidget):
    """Combos and a spin box that show, and edit, the training job's step-model knobs."""

    def __init__(self, document: ScenarioDocument | None = None) -> None:
        super().__init__()
        self.setObjectName("trainingControls")
        self.document: ScenarioDocument | None = None
        self._syncing = False
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(3)

        self.choice_combos: dict[str, QComboBox] = {}
        for column, (knob, label, tip, options) in enumerate(CHOICES):
            combo = QComboBox()
            combo.setObjectName(f"training_{knob}_combo")
            combo.setToolTip(tip)
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            for value, text in options:
                combo.addItem(text, value)
            combo.currentIndexChanged.connect(lambda _i, k=knob: self._choice_chosen(k))
            grid.addWidget(QLabel(label), 0, 2 * column)
            grid.addWidget(combo, 0, 1 + 2 * column)
            self.choice_combos[knob] = combo

        self.virtual_spin = self._spin(
            "training_virtual_stages_spin", "interleaved model chunks per pipeline stage", 64
        )
        self.virtual_spin.valueChanged.connect(self._virtual_chosen)
        last = 2 * len(CHOICES)
        grid.addWidget(QLabel("Virtual stages"), 0, last)
        grid.addWidget(self.virtual_spin, 0, last + 1)
        self.moe_spins: dict[str, QDoubleSpinBox] = {}
        for k, (knob, label, tip, minimum, special) in enumerate(MOE_KNOBS):
            box = QDoubleSpinBox()
            box.setObjectName(f"training_{knob}_spin")
            box.setToolTip(tip)
            box.setRange(minimum, 64.0)
            box.setSingleStep(0.25)
            box.setDecimals(2)
            box.setSpecialValueText(special)
            box.setKeyboardTracking(False)
            box.valueChanged.connect(lambda v, n=knob: self._set(f"{WHERE}.overrides.{n}", repr(v)))
            grid.addWidget(QLabel(label), 0, last + 2 + 2 * k)
            grid.addWidget(box, 0, last + 3 + 2 * k)
            self.moe_spins[knob] = box
        last += 2 * len(MOE_KNOBS)
        layout_hint = QLabel("layout: Workload dock")
        layout_hint.setObjectName("trainingLayoutHint")
        grid.addWidget(layout_hint, 0, last + 2)
        grid.setColumnStretch(last + 3, 1)

        self.note = QLabel()
        self.note.setObjectName("trainingControlsNote")
        self.note.setStyleSheet(ERROR_STYLE)
        self.note.setWordWrap(True)
        grid.addWidget(self.note, 1, 0, 1, last + 4)
        self.note.setVisible(False)
        self.setVisible(False)
        if document is not None:
            self.set_document(document)

    @staticmethod
    def _spin(name: str, tip: str, maximum: int) -> QSpinBox:
        """A count's spin box: 0 reads "preset"; typed numbers count when committed."""
        spin = QSpinBox()
        spin.setObjectName(name)
        spin.setToolTip(f"{tip}; {PRESET}: the model preset's, fitted to the fabric")
        spin.setRange(0, maximum)
        spin.setMinimumWidth(60)
        spin.setMaximumWidth(80)
        spin.setSpecialValueText(PRESET)
        spin.setKeyboardTracking(False)  # one edit per number typed, not per keystroke
        return spin

    # ---- the document -----------------------------------------------------------------------

    def set_document(self, document: ScenarioDocument) -> None:
        """Show and edit `document`'s training job from now on."""
        if document is self.document:
            return
        follow(self.document, document, self.sync, self.show_problems)
        self.document = document
        self.sync()
        self.show_problems(document.problems)
        self.setVisible(True)

    def sync(self) -> None:
        """Make every control show the document's job (after an edit, undo or load)."""
        if self.document is None:
            return
        job: TrainingJob = self.document.scenario.workload.training
        self._syncing = True
        try:
            virtual = job.overrides.get("virtual_stages", -1)
            self.virtual_spin.setValue(max(0, int(virtual)))
            for knob, box in self.moe_spins.items():
                box.setValue(float(job.overrides.get(knob, MOE_DEFAULTS[knob])))
            for knob, combo in self.choice_combos.items():
                value = float(job.overrides.get(knob, KNOB_DEFAULTS[knob]))
                found = combo.findData(value)
                combo.setCurrentIndex(found if found >= 0 else 0)
        finally:
            self._syncing = False

    def show_problems(self, problems: list[Problem]) -> None:
        """What the engine refused about the training job, beside the controls."""
        mine = [p for p in problems if p.where.startswith(WHERE)]
        self._say("; ".join(p.message for p in mine))

    def _say(self, text: str) -> None:
        self.note.setText(text)
        self.note.setVisible(bool(text))

    # ---- edits ------------------------------------------------------------------------------

    def _set(self, path: str, text: str) -> None:
        if self._syncing or self.document is None:
            return
        error = self.document.set_field(path, text)
        if error:
            self._say(error)
            self.sync()

    def _virtual_chosen(self) -> None:
        value = self.virtual_spin.value()
        self._set(f"{WHERE}.overrides.virtual_stages", str(value if value else -1))

    def _choice_chosen(self, knob: str) -> None:
        value = self.choice_combos[knob].currentData()
        self._set(f"{WHERE}.overrides.{knob}", repr(float(value)))
