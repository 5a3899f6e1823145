"""The Sweep panel's frontier: cost against the swept metric, the Pareto front marked.

After a sweep, *Frontier* hands the same parameter, values and metric (when the metric is a
performance the frontier knows: step time, tokens/s, GPU utilization, MFU, busbw, goodput)
with the chosen cost to `engine.analysis.frontier_sweep` on the view's own `TaskWorker`, and
draws what comes back in a `FrontierPlot`: the front in colour, joined cheapest first, the
dominated points grey, and a table naming for each dominated point one that beats it.
Nothing is computed here.
"""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from engine.analysis import FRONTIER_COSTS, FRONTIER_PERFORMANCE, Frontier, frontier_sweep
from engine.model.errors import ScenarioError
from engine.model.scenario import Scenario
from ui.results.frontier_plot import TITLES, FrontierPlot
from ui.work.tasks import Task, TaskWorker

KEY = "sweep-frontier"
# what the panel hands over: the scenario, the parameter, its values text and the metric
SweepInputs = Callable[[], tuple[Scenario, str, str, str]]


class SweepFrontier(QWidget):
    """A cost combo, a Frontier button and the frontier of the panel's sweep."""

    def __init__(self, inputs: SweepInputs) -> None:
        super().__init__()
        self.setObjectName("sweepFrontier")
        self.inputs = inputs
        self.result: Frontier | None = None
        self.cost_combo = QComboBox()
        self.cost_combo.setObjectName("sweepFrontierCost")
        for key in FRONTIER_COSTS:
            self.cost_combo.addItem(TITLES.get(key, key), key)
        self.run_button = QPushButton("Frontier")
        self.run_button.setObjectName("sweepFrontierRun")
        self.run_button.setToolTip("Cost against the metric over the sweep's values")
        self.message = QLabel("Run a sweep, then Frontier: cost against its metric.")
        self.message.setObjectName("sweepFrontierMessage")
        self.message.setWordWrap(True)
        self.plot = FrontierPlot(choose_axes=False, name="sweepFrontierPlot")
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Cost:"))
        bar.addWidget(self.cost_combo)
        bar.addWidget(self.run_button)
        bar.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.message)
        layout.addWidget(self.plot, 1)
        self.worker = TaskWorker(self)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self.run_button.clicked.connect(self.run)

    def run(self) -> int | None:
        """The frontier of the panel's sweep on the worker; the request id (None when the
        metric is not one the frontier can rank)."""
        scenario, param, values, metric = self.inputs()
        if metric not in FRONTIER_PERFORMANCE:
            choices = ", ".join(FRONTIER_PERFORMANCE)
            self.message.setText(f"The frontier ranks {choices}; {metric} is not one of them.")
            return None
        cost = str(self.cost_combo.currentData())
        self.run_button.setEnabled(False)
        self.message.setText(f"Evaluating {cost} and {metric} over the sweep's values…")

        def job(task: Task) -> Frontier:
            return frontier_sweep(scenario, param, values, cost, metric)

        return self.worker.submit(KEY, job)

    def shutdown(self) -> None:
        """Drop any run and wait for its job to end."""
        self.worker.shutdown()

    def _on_finished(self, _key: str, _request: int, result: object) -> None:
        self.run_button.setEnabled(True)
        if isinstance(result, Frontier):
            self.result = result
            self.plot.show_frontier(result)
            errors = f"; {len(result.errors)} point(s) failed" if result.errors else ""
            self.message.setText(
                f"{len(result.front)} of {len(result.points)} point(s) on the front{errors}."
            )

    def _on_failed(self, _key: str, _request: int, error: object) -> None:
        self.run_button.setEnabled(True)
        text = error.brief() if isinstance(error, ScenarioError) else f"{error}"
        self.message.setText(f"Frontier not evaluated: {html.escape(text)}")
