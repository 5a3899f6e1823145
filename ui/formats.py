"""File > Export fabric…, File > Import topology… and File > Import traffic matrix…: the
open formats from the window.

`FormatActions` is mixed into `MainWindow` (with `WindowMenus`). The window only asks for
a file name; the reading and writing (`engine.analysis.export_fabric`, `import_topology`,
`import_traffic`) run as jobs on the window's own `TaskWorker`, so a large fabric never
freezes the window, and what comes back is applied on the GUI thread: an imported topology
replaces the scenario, an imported traffic matrix its workload, each as one undoable edit.
Why a file cannot be read (its name and line) comes from the engine and is shown as it is.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFileDialog

from engine.analysis import export_fabric, import_topology, import_traffic
from engine.model.errors import ScenarioError
from engine.model.traffic import TrafficFlow
from ui.work.tasks import Task, TaskWorker

# save-dialog filter -> export format; ns-3 writes a folder of topology.txt and flow.txt
EXPORT_FILTERS = {
    "GraphML, any graph tool (*.graphml)": "graphml",
    "ns-3 RDMA / SimAI topology and flows, a folder (*)": "ns3",
    "htsim connection matrix (*.cm)": "htsim",
    "ASTRA-sim analytical network (*.yml)": "astra",
}
SUFFIXES = {"graphml": ".graphml", "htsim": ".cm", "astra": ".yml", "ns3": ""}
IMPORT_FILTER = "Topology: GraphML or CSV link list (*.graphml *.xml *.csv);;All files (*)"
TRAFFIC_FILTER = "Traffic matrix: CSV src,dst,bytes or htsim (*.csv *.cm);;All files (*)"
EXPORT, TOPOLOGY, TRAFFIC = "export", "import-topology", "import-traffic"


@dataclass(frozen=True)
class FileJob:
    """What a finished file job hands back: its kind, the file, and its result."""

    kind: str
    path: str
    result: object
    detail: str = ""


class FormatActions:
    """Export the fabric in an open format, import a topology or a traffic matrix (a mixin
    of the window, which provides `document`, `catalog`, `canvas`, `statusBar` and
    `_file_error`). `file_tasks` runs the jobs; `last_file_job` is the last one finished."""

    def file_worker(self) -> TaskWorker:
        """The worker of the file jobs, made on first use."""
        worker = getattr(self, "file_tasks", None)
        if worker is None:
            worker = self.file_tasks = TaskWorker(self)
            worker.finished.connect(lambda _key, _request, job: self._file_job_done(job))
            worker.failed.connect(lambda key, _request, error: self._file_job_failed(key, error))
        return worker

    def shutdown_file_jobs(self) -> None:
        """Wait for a running file job before the window closes."""
        worker = getattr(self, "file_tasks", None)
        if worker is not None:
            worker.shutdown()

    def export_fabric(self) -> bool:
        """Ask where and in which format, and write the expanded fabric and its traffic
        there off the GUI thread; false when cancelled."""
        name = self.document.scenario.metadata.name or "fabric"
        path, chosen = QFileDialog.getSaveFileName(
            self, "Export fabric", f"{name}.graphml", ";;".join(EXPORT_FILTERS)
        )
        if not path:
            return False
        fmt = EXPORT_FILTERS.get(chosen, "graphml")
        suffix = SUFFIXES[fmt]
        if suffix and not path.endswith(suffix):
            path += suffix
        scenario, catalog = copy.deepcopy(self.document.scenario), self.catalog

        def job(_task: Task) -> FileJob:
            written = export_fabric(scenario, fmt, path, catalog)
            return FileJob(EXPORT, path, [str(p) for p in written], fmt)

        self._start_file_job(EXPORT, job, f"Exporting {fmt} to {path}…")
        return True

    def import_topology_file(self) -> bool:
        """Ask for a GraphML or CSV link list and, once read off the GUI thread, replace the
        scenario with its grouped topology (undoable); false when cancelled."""
        path, _ = QFileDialog.getOpenFileName(self, "Import topology", "", IMPORT_FILTER)
        if not path:
            return False
        catalog = self.catalog

        def job(_task: Task) -> FileJob:
            return FileJob(TOPOLOGY, path, import_topology(path, catalog))

        self._start_file_job(TOPOLOGY, job, f"Importing {path}…")
        return True

    def import_traffic_file(self) -> bool:
        """Ask for a traffic matrix (CSV or htsim ``.cm``) and make it the scenario's
        workload (kind ``traffic``, undoable): the flow test and the Congestion tab's
        "traffic matrix" run its flows. False when cancelled."""
        path, _ = QFileDialog.getOpenFileName(self, "Import traffic matrix", "", TRAFFIC_FILTER)
        if not path:
            return False

        def job(_task: Task) -> FileJob:
            return FileJob(TRAFFIC, path, import_traffic(path))

        self._start_file_job(TRAFFIC, job, f"Importing {path}…")
        return True

    def _start_file_job(self, key: str, job, message: str) -> None:
        self.statusBar().showMessage(message)
        self.file_worker().submit(key, job)

    def _file_job_done(self, job: FileJob) -> None:
        self.last_file_job = job
        if job.kind == EXPORT:
            self.statusBar().showMessage(f"Exported {job.detail}: {', '.join(job.result)}", 8000)
        elif job.kind == TOPOLOGY:
            scenario = job.result
            self.document.replace_with(scenario, f"Import topology: {scenario.metadata.name}")
            groups = ", ".join(f"{g.count} × {g.model}" for g in scenario.groups)
            self.statusBar().showMessage(f"Imported {job.path}: {groups}", 8000)
            QTimer.singleShot(0, self.canvas.fit)
        else:
            flows = job.result
            scenario = copy.deepcopy(self.document.scenario)
            scenario.workload.kind = "traffic"
            scenario.workload.matrix = [
                TrafficFlow(f.src, f.dst, float(f.size_bytes), f.start_s) for f in flows
            ]
            self.document.replace_with(scenario, f"Import traffic matrix ({len(flows):,} flows)")
            self.statusBar().showMessage(f"Imported {len(flows):,} flows from {job.path}", 8000)

    def _file_job_failed(self, key: str, error: object) -> None:
        title = "Cannot export the fabric" if key == EXPORT else "Cannot import the file"
        if isinstance(error, ScenarioError):
            detail = "\n".join(f"{p.where}: {p.message}" for p in error.problems) or str(error)
        elif isinstance(error, OSError):
            detail = f"{error.filename or ''}: {error.strerror or error}"
        else:
            detail = f"{type(error).__name__}: {error}"
        self._file_error(title, detail)
