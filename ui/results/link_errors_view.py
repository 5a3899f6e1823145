"""The Goodput tab's link-errors box: post-FEC loss at a pre-FEC BER and what it costs a step.

A BER field and a Run button hand the document's scenario to `engine.analysis.link_errors`
on the box's own `TaskWorker` (the training step runs once per loss recovery); the box shows
the typed result as it comes: the FEC, the loss per link, the FEC's latency per path, the
expected losses per step and the step's cost under link-level retry, go-back-N and selective
repeat. It formats figures and nothing else.
"""

from __future__ import annotations

import html

from PySide6.QtGui import QDoubleValidator
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
)

from engine.analysis import LinkErrorsResult, link_errors
from engine.model.errors import ScenarioError
from ui.document.document import ScenarioDocument
from ui.results.tables import fill_table, make_table
from ui.work.tasks import Task, TaskWorker

KEY = "link-errors"
DEFAULT_BER = "1e-4"


def link_error_rows(r: LinkErrorsResult) -> list[list[str]]:
    """The box's table: one figure per row."""
    rows = [
        ["FEC", f"{r.fec}, {r.fec_latency_ns:.0f} ns per link"],
        ["Pre-FEC BER (limit)", f"{r.pre_fec_ber:.3g} ({r.pre_fec_ber_limit:.3g})"],
        ["Post-FEC loss per link", f"{r.packet_loss_per_link:.3g} per packet"],
        ["FEC latency over the path", f"{r.fec_path_latency_ns:.0f} ns ({r.links_per_path} links)"],
        ["Step time the FEC latency adds", f"+{r.fec_latency_cost_s * 1e3:.4g} ms"],
        ["Expected losses per step", f"{r.expected_losses_per_step:.3g}"],
        ["Step without link errors", f"{r.base_step_s:.6g} s"],
    ]
    for c in r.costs:
        mark = " (this fabric's)" if c.recovery == r.recovery else ""
        rows.append([f"Cost with {c.recovery}{mark}", f"+{c.cost_s * 1e3:.4g} ms"])
    return rows


class LinkErrorsView(QGroupBox):
    """Link errors of the document's scenario at a chosen pre-FEC bit error ratio."""

    def __init__(self, document: ScenarioDocument) -> None:
        super().__init__("Link errors (BER, FEC, retransmission)")
        self.setObjectName("linkErrorsBox")
        self.document = document
        self.result: LinkErrorsResult | None = None
        self.ber_edit = QLineEdit(DEFAULT_BER)
        self.ber_edit.setObjectName("linkErrorsBer")
        validator = QDoubleValidator(0.0, 0.999, 12, self.ber_edit)
        validator.setNotation(QDoubleValidator.Notation.ScientificNotation)
        self.ber_edit.setValidator(validator)
        self.ber_edit.setToolTip("Pre-FEC bit error ratio of every link, e.g. 2.4e-4")
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("linkErrorsRun")
        self.summary = QLabel("Run to see the post-FEC loss and what it costs a step.")
        self.summary.setObjectName("linkErrorsSummary")
        self.summary.setWordWrap(True)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Pre-FEC BER"))
        bar.addWidget(self.ber_edit)
        bar.addWidget(self.run_button)
        bar.addStretch(1)
        self.table = make_table("linkErrorsTable", ["figure", "value"])
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        self.worker = TaskWorker(self)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self.run_button.clicked.connect(self.run)

    def run(self) -> int | None:
        """Evaluate link errors at the typed BER on the worker; the request id (None when
        the field does not hold a number)."""
        try:
            ber = float(self.ber_edit.text())
        except ValueError:
            self.summary.setText("Type a bit error ratio, e.g. 1e-4.")
            return None
        scenario, catalog = self.document.scenario, self.document.catalog
        self.run_button.setEnabled(False)
        self.summary.setText("Running: the training step under each loss recovery…")

        def job(task: Task) -> LinkErrorsResult:
            return link_errors(scenario, catalog, ber)

        return self.worker.submit(KEY, job)

    def shutdown(self) -> None:
        """Drop any run and wait for its job to end."""
        self.worker.shutdown()

    def _on_finished(self, _key: str, _request: int, result: object) -> None:
        self.run_button.setEnabled(True)
        if isinstance(result, LinkErrorsResult):
            self.show_result(result)

    def _on_failed(self, _key: str, _request: int, error: object) -> None:
        self.run_button.setEnabled(True)
        text = error.brief() if isinstance(error, ScenarioError) else f"{error}"
        self.summary.setText(f"Link errors not evaluated: {html.escape(text)}")

    def show_result(self, result: LinkErrorsResult) -> None:
        """Fill the table and the summary from `result`."""
        self.result = result
        fill_table(self.table, link_error_rows(result))
        limit = "within" if result.within_limit else "above"
        self.summary.setText(
            f"{result.technology}: {result.expected_losses_per_step:.3g} packets lost per step "
            f"at BER {result.pre_fec_ber:.3g} ({limit} the PMD limit), costing "
            f"{result.cost_s * 1e3:.4g} ms per step with {result.recovery}."
        )
