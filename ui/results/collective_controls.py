"""The Collective tab's bar of workload controls: NCCL's algorithm and protocol, overridable.

NCCL picks an algorithm (ring, tree, NVLS, ...) and a protocol (LL, LL128, Simple) per
message size; ``NCCL_ALGO`` and ``NCCL_PROTO`` force them. The scenario's workload carries
the same two choices (``workload.algorithm``, ``workload.protocol``, ``"auto"`` for NCCL's
own pick), and this bar shows and edits them. It never changes the scenario itself: a choice
becomes the document's undoable `SetFieldCommand` (`ScenarioDocument.set_field`), and the
window re-evaluates on the document's `changed` like after any other edit. The combos follow
the document's `changed` (undo, redo, load, an edit of the op elsewhere), and the bar shows
what the engine refused about the two fields (a Simple-only algorithm with LL, say) from the
document's `problemsChanged`.

The small text helpers below word a report's choices for the tab's titles, info line and
point tooltips; they format what the report holds and compute nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

from engine.analysis import COLLECTIVE_ALGORITHMS, CollectiveRow
from engine.model.errors import Problem
from engine.model.scenario import Workload
from ui.document.document import ScenarioDocument
from ui.document.follow import follow
from ui.results.result_tab import ERROR_STYLE

AUTO = "auto"
ALGORITHM_PATH = "workload.algorithm"
PROTOCOL_PATH = "workload.protocol"
# NCCL's protocols as the scenario spells them (engine.collectives.nccl_model.PROTOCOLS,
# which engine.analysis does not export) and as NCCL's documentation writes them.
PROTOCOL_LABELS = {AUTO: "auto", "ll": "LL", "ll128": "LL128", "simple": "Simple"}
ALGORITHM_TIPS = {
    "ring": "NCCL's ring, one per NIC rail",
    "tree": "NCCL's double binary tree between servers",
    "sharp": "CollNet: in-network reduction in the switches (SHARP)",
    "nvls": "NVLink SHARP inside one server",
    "nvlstree": "NVLink SHARP in each server with a tree between servers (NVLSTree)",
}
BINARY_PREFIXES = ("B", "KiB", "MiB", "GiB", "TiB")


def protocol_label(protocol: str) -> str:
    """NCCL's spelling of a protocol (``ll128`` reads LL128); an unknown name as it is."""
    return PROTOCOL_LABELS.get(protocol, protocol)


def choice_text(algorithm: str, protocol: str) -> str:
    """What a workload forces: ``"ring, LL128 (forced)"``, ``"ring (forced)"``,
    ``"LL (forced)"``, or ``""`` when NCCL picks both per size."""
    forced = [name for name in (algorithm, protocol) if name != AUTO]
    if not forced:
        return ""
    labels = [algorithm] if algorithm != AUTO else []
    if protocol != AUTO:
        labels.append(protocol_label(protocol))
    return f"{', '.join(labels)} (forced)"


def size_text(size: float) -> str:
    """A message size with a binary prefix, as nccl-tests sizes are: 32 KiB, 4 MiB, 8 B."""
    value, unit = float(size), 0
    while value >= 1024 and unit < len(BINARY_PREFIXES) - 1:
        value /= 1024
        unit += 1
    return f"{value:.3g} {BINARY_PREFIXES[unit]}"


def pick_label(row: CollectiveRow, algorithm_forced: bool) -> str:
    """The pick of one size: ``tree/LL``, or the protocol alone when the algorithm is forced."""
    protocol = protocol_label(row.protocol)
    return protocol if algorithm_forced else f"{row.algorithm}/{protocol}"


def picks_text(rows: Sequence[CollectiveRow], algorithm_forced: bool) -> str:
    """The report's pick per size in runs: ``"tree/LL ≤ 32 KiB, ring/Simple above"``.

    With a forced algorithm only the protocol varies, so only it is named; one pick at every
    size reads ``"LL128 at every size"``; no rows give ``""``.
    """
    runs: list[tuple[str, int]] = []  # (pick, the last size it holds)
    for row in rows:
        label = pick_label(row, algorithm_forced)
        if runs and runs[-1][0] == label:
            runs[-1] = (label, row.bytes)
        else:
            runs.append((label, row.bytes))
    if not runs:
        return ""
    if len(runs) == 1:
        return f"{runs[0][0]} at every size"
    parts = [f"{label} ≤ {size_text(last)}" for label, last in runs[:-1]]
    return ", ".join([*parts, f"{runs[-1][0]} above"])


def forcing_text(rows: Sequence[CollectiveRow]) -> str:
    """The what-if of forcing NCCL's choice where the report says it pays most:
    ``"forcing ring/Simple would be 41% faster at 8 GiB (3 sizes gain)"``, or ``""`` when
    NCCL's pick is the fastest at every size (or the report does not say)."""
    gaining = [row for row in rows if row.forcing_gain() >= 0.005]
    if not gaining:
        return ""
    most = max(gaining, key=lambda row: row.forcing_gain())
    pair = f"{most.fastest_algorithm}/{protocol_label(most.fastest_protocol)}"
    text = f"forcing {pair} would be {most.forcing_gain():.0%} faster at {size_text(most.bytes)}"
    if len(gaining) > 1:
        text += f" ({len(gaining)} sizes gain)"
    return text


def workload_choice(scenario: Mapping[str, object] | None) -> tuple[str, str]:
    """The algorithm and protocol of a report's scenario document (its JSON mapping), or
    ``("auto", "auto")`` for a report kept without its scenario."""
    workload = scenario.get("workload") if scenario is not None else None
    if not isinstance(workload, Mapping):
        return AUTO, AUTO
    return str(workload.get("algorithm", AUTO)), str(workload.get("protocol", AUTO))


class CollectiveControls(QWidget):
    """The "Algorithm" and "Protocol" combos: they show, and edit, the document's workload.

    Without a document (`set_document` not called yet) the bar stays hidden. Each combo
    item's data is the value the scenario stores (``"ll128"``); its text is the reader's
    (``"LL128"``). A value the scenario holds that the list lacks (an algorithm of another
    op, an unknown protocol) is shown as an extra item, so the combos never misstate the
    document.
    """

    def __init__(self, document: ScenarioDocument | None = None) -> None:
        super().__init__()
        self.setObjectName("collectiveControls")
        self.document: ScenarioDocument | None = None
        self._syncing = False
        self._shown: tuple[str, str, str] | None = None  # (op, algorithm, protocol) shown

        self.algorithm_combo = QComboBox()
        self.algorithm_combo.setObjectName("collectiveAlgorithmCombo")
        self.algorithm_combo.setToolTip(
            "The collective's algorithm (NCCL_ALGO): auto lets NCCL's tuner pick per size"
        )
        self.protocol_combo = QComboBox()
        self.protocol_combo.setObjectName("collectiveProtocolCombo")
        self.protocol_combo.setToolTip(
            "NCCL's protocol (NCCL_PROTO): auto lets the tuner pick LL, LL128 or Simple per size"
        )
        self.note = QLabel()
        self.note.setObjectName("collectiveControlsNote")
        self.note.setStyleSheet(ERROR_STYLE)
        self.note.setWordWrap(True)
        algorithm_label = QLabel("Algorithm")
        algorithm_label.setBuddy(self.algorithm_combo)
        protocol_label_widget = QLabel("Protocol")
        protocol_label_widget.setBuddy(self.protocol_combo)

        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(algorithm_label)
        layout.addWidget(self.algorithm_combo)
        layout.addSpacing(12)
        layout.addWidget(protocol_label_widget)
        layout.addWidget(self.protocol_combo)
        layout.addSpacing(12)
        layout.addWidget(self.note, 1)

        self.algorithm_combo.currentIndexChanged.connect(
            lambda _index: self._chosen(self.algorithm_combo, ALGORITHM_PATH)
        )
        self.protocol_combo.currentIndexChanged.connect(
            lambda _index: self._chosen(self.protocol_combo, PROTOCOL_PATH)
        )
        self.setVisible(False)
        if document is not None:
            self.set_document(document)

    # ---- the document -----------------------------------------------------------------------

    def set_document(self, document: ScenarioDocument) -> None:
        """Show and edit `document`'s workload from now on (attaching it again is a no-op)."""
        if document is self.document:
            return
        follow(self.document, document, self.sync, self.show_problems)
        self.document = document
        self._shown = None
        self.sync()
        self.show_problems(document.problems)
        self.setVisible(True)

    def sync(self) -> None:
        """Make the combos show the document's workload (after an edit, undo or load)."""
        if self.document is None:
            return
        workload: Workload = self.document.scenario.workload
        shown = (workload.op, workload.algorithm, workload.protocol)
        if shown == self._shown:
            return  # most edits touch no workload field: nothing to redo
        self._syncing = True
        try:
            names = COLLECTIVE_ALGORITHMS.get(workload.op, ())
            algorithms = [(AUTO, AUTO), *((n, n) for n in names)]
            # refill on a new op, or to drop an extra item a value outside the list added
            new_op = self._shown is None or self._shown[0] != workload.op
            if new_op or self.algorithm_combo.count() != len(algorithms):
                self._fill(self.algorithm_combo, algorithms, ALGORITHM_TIPS)
            if self.protocol_combo.count() != len(PROTOCOL_LABELS):
                self._fill(self.protocol_combo, list(PROTOCOL_LABELS.items()))
            self._select(self.algorithm_combo, workload.algorithm, workload.algorithm)
            self._select(self.protocol_combo, workload.protocol, protocol_label(workload.protocol))
        finally:
            self._syncing = False
        self._shown = shown

    def show_problems(self, problems: list[Problem]) -> None:
        """Name, beside the combos, what is wrong with the workload's algorithm or protocol."""
        mine = [
            p
            for p in problems
            if p.where == "workload"
            and p.field in ("algorithm", "protocol")
            and p.severity == "error"
        ]
        self.note.setText("; ".join(f"⚠ {p.message}" for p in mine))

    # ---- the combos -------------------------------------------------------------------------

    @staticmethod
    def _fill(
        combo: QComboBox, items: list[tuple[str, str]], tips: Mapping[str, str] | None = None
    ) -> None:
        combo.clear()
        for value, text in items:
            combo.addItem(text, value)
            if tips and value in tips:
                combo.setItemData(combo.count() - 1, tips[value], Qt.ItemDataRole.ToolTipRole)

    @staticmethod
    def _select(combo: QComboBox, value: str, text: str) -> None:
        index = combo.findData(value)
        if index < 0:  # a value the list lacks: show it as it is
            combo.addItem(text, value)
            index = combo.count() - 1
        combo.setCurrentIndex(index)

    def _chosen(self, combo: QComboBox, path: str) -> None:
        """A choice the user made becomes one undoable edit of the document."""
        if self._syncing or self.document is None:
            return
        value = combo.currentData()
        if not isinstance(value, str):
            return
        error = self.document.set_field(path, value)
        if error:
            self.note.setText(f"⚠ {error}")
        # an accepted edit has re-synced the combos through `changed`; a refused or empty
        # one changed nothing, so put back what the document holds
        workload = self.document.scenario.workload
        self._syncing = True
        try:
            self._select(self.algorithm_combo, workload.algorithm, workload.algorithm)
            self._select(self.protocol_combo, workload.protocol, protocol_label(workload.protocol))
        finally:
            self._syncing = False
