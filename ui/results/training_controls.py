"""The Training tab's bar of job controls: model, parallel layout, schedule, recomputation.

A training what-if is asked by changing the job: the model preset, the TP/PP/DP/CP/EP degrees,
the micro-batch, the pipeline schedule (1F1B, interleaved by virtual stages, ZB-H1),
activation recomputation and the attention kernel. The bar shows the document's
``workload.training`` and edits it through the document's undoable `SetFieldCommand`
(`ScenarioDocument.set_field`), so the window re-evaluates as after any other edit and Ctrl+Z
undoes it. Zero in a degree means "the preset's layout fitted to the fabric", as in the
scenario file. What the engine refuses about the job shows beside the bar, from the
document's `problemsChanged`. The bar computes nothing.
"""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QGridLayout, QLabel, QSpinBox, QWidget

from engine.catalog.model_presets import MODEL_PRESETS
from engine.model.errors import Problem
from engine.model.scenario import TrainingJob
from ui.document.document import ScenarioDocument
from ui.results.result_tab import ERROR_STYLE

WHERE = "workload.training"
PRESET = "preset"
# Degrees and sizes: (field, label, tooltip, maximum).
DEGREES = (
    ("tp", "TP", "tensor-parallel degree (across servers when larger than a server)", 4096),
    ("pp", "PP", "pipeline stages", 4096),
    ("dp", "DP", "data-parallel degree (preset: fill the fabric)", 1_000_000),
    ("cp", "CP", "context-parallel degree", 4096),
    ("ep", "EP", "expert-parallel degree (mixture-of-experts models)", 4096),
    ("micro_batch", "µbatch", "sequences per micro-batch", 4096),
)
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
)
KNOB_DEFAULTS = {"schedule": 0.0, "recompute": 0.0, "flash_attention": 1.0}


class TrainingControls(QWidget):
    """Combos and spin boxes that show, and edit, the document's training job."""

    def __init__(self, document: ScenarioDocument | None = None) -> None:
        super().__init__()
        self.setObjectName("trainingControls")
        self.document: ScenarioDocument | None = None
        self._syncing = False
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(3)

        self.model_combo = QComboBox()
        self.model_combo.setObjectName("trainingModelCombo")
        self.model_combo.setToolTip("the model preset (shape and published layout)")
        for model_id, preset in MODEL_PRESETS.items():
            self.model_combo.addItem(preset.name, model_id)
        self.model_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.model_combo.setMinimumContentsLength(13)
        self.model_combo.currentIndexChanged.connect(self._model_chosen)
        grid.addWidget(QLabel("Model"), 0, 0)
        grid.addWidget(self.model_combo, 0, 1)

        self.choice_combos: dict[str, QComboBox] = {}
        for column, (knob, label, tip, options) in enumerate(CHOICES):
            combo = QComboBox()
            combo.setObjectName(f"training_{knob}_combo")
            combo.setToolTip(tip)
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            for value, text in options:
                combo.addItem(text, value)
            combo.currentIndexChanged.connect(lambda _i, k=knob: self._choice_chosen(k))
            grid.addWidget(QLabel(label), 0, 2 + 2 * column)
            grid.addWidget(combo, 0, 3 + 2 * column)
            self.choice_combos[knob] = combo

        self.spins: dict[str, QSpinBox] = {}
        for column, (name, label, tip, maximum) in enumerate(DEGREES):
            spin = self._spin(f"training_{name}_spin", tip, maximum)
            spin.valueChanged.connect(lambda _v, n=name: self._degree_chosen(n))
            first = 2 + 2 * len(CHOICES) + 2 * column
            grid.addWidget(QLabel(label), 0, first)
            grid.addWidget(spin, 0, first + 1)
            self.spins[name] = spin
        self.virtual_spin = self._spin(
            "training_virtual_stages_spin", "interleaved model chunks per pipeline stage", 64
        )
        self.virtual_spin.valueChanged.connect(self._virtual_chosen)
        last = 2 + 2 * len(CHOICES) + 2 * len(DEGREES)
        grid.addWidget(QLabel("v"), 0, last)
        grid.addWidget(self.virtual_spin, 0, last + 1)
        grid.setColumnStretch(last + 2, 1)

        self.note = QLabel()
        self.note.setObjectName("trainingControlsNote")
        self.note.setStyleSheet(ERROR_STYLE)
        self.note.setWordWrap(True)
        grid.addWidget(self.note, 1, 0, 1, last + 3)
        self.note.setVisible(False)
        self.setVisible(False)
        if document is not None:
            self.set_document(document)

    @staticmethod
    def _spin(name: str, tip: str, maximum: int) -> QSpinBox:
        """A degree's spin box: 0 reads "preset"; typed numbers count when committed."""
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
        if self.document is not None:
            self.document.changed.disconnect(self.sync)
            self.document.problemsChanged.disconnect(self.show_problems)
        self.document = document
        document.changed.connect(self.sync)
        document.problemsChanged.connect(self.show_problems)
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
            index = self.model_combo.findData(job.model)
            if index < 0:  # a model the presets lack: show it rather than misstate it
                self.model_combo.addItem(job.model, job.model)
                index = self.model_combo.count() - 1
            self.model_combo.setCurrentIndex(index)
            for name, spin in self.spins.items():
                spin.setValue(max(0, int(getattr(job, name))))
            virtual = job.overrides.get("virtual_stages", -1)
            self.virtual_spin.setValue(max(0, int(virtual)))
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

    def _model_chosen(self) -> None:
        self._set(f"{WHERE}.model", str(self.model_combo.currentData()))

    def _degree_chosen(self, name: str) -> None:
        self._set(f"{WHERE}.{name}", str(self.spins[name].value()))

    def _virtual_chosen(self) -> None:
        value = self.virtual_spin.value()
        self._set(f"{WHERE}.overrides.virtual_stages", str(value if value else -1))

    def _choice_chosen(self, knob: str) -> None:
        value = self.choice_combos[knob].currentData()
        self._set(f"{WHERE}.overrides.{knob}", repr(float(value)))
