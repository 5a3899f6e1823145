"""File > Export fabric…, File > Import topology… and File > Import traffic matrix…: the
open formats from the window.

`FormatActions` is mixed into `MainWindow` (with `WindowMenus`). The window only asks for
a file name and hands the scenario to `engine.analysis` (`export_fabric`,
`import_topology`); what the file holds, and why a file cannot be read (its name and
line), come from the engine. An imported topology replaces the scenario, an imported
traffic matrix its workload, each as one undoable edit.
"""

from __future__ import annotations

import copy

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog

from engine.analysis import export_fabric, import_topology, import_traffic
from engine.model.errors import ScenarioError
from engine.model.traffic import TrafficFlow

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


class FormatActions:
    """Export the fabric in an open format and import a topology (a mixin of the window,
    which provides `document`, `catalog`, `canvas`, `statusBar` and `_file_error`)."""

    def export_fabric(self) -> list[str]:
        """Ask where and in which format, and write the expanded fabric and its traffic
        there; returns the files written (none when cancelled or refused)."""
        name = self.document.scenario.metadata.name or "fabric"
        path, chosen = QFileDialog.getSaveFileName(
            self, "Export fabric", f"{name}.graphml", ";;".join(EXPORT_FILTERS)
        )
        if not path:
            return []
        fmt = EXPORT_FILTERS.get(chosen, "graphml")
        suffix = SUFFIXES[fmt]
        if suffix and not path.endswith(suffix):
            path += suffix
        QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            written = export_fabric(self.document.scenario, fmt, path, self.catalog)
        except ScenarioError as exc:
            self._file_error(f"Cannot export to {path}", _problems(exc))
            return []
        except OSError as exc:
            self._file_error(f"Cannot write {path}", str(exc))
            return []
        finally:
            QGuiApplication.restoreOverrideCursor()
        shown = ", ".join(str(p) for p in written)
        self.statusBar().showMessage(f"Exported {fmt}: {shown}", 8000)
        return [str(p) for p in written]

    def import_topology_file(self) -> bool:
        """Ask for a GraphML or CSV link list and replace the scenario with its grouped
        topology (undoable); a file that cannot be read is reported with its line."""
        path, _ = QFileDialog.getOpenFileName(self, "Import topology", "", IMPORT_FILTER)
        if not path:
            return False
        try:
            scenario = import_topology(path, self.catalog)
        except ScenarioError as exc:
            self._file_error(f"Cannot import {path}", _problems(exc))
            return False
        self.document.replace_with(scenario, f"Import topology: {scenario.metadata.name}")
        groups = ", ".join(f"{g.count} × {g.model}" for g in scenario.groups)
        self.statusBar().showMessage(f"Imported {path}: {groups}", 8000)
        QTimer.singleShot(0, self.canvas.fit)
        return True

    def import_traffic_file(self) -> bool:
        """Ask for a traffic matrix (CSV or htsim ``.cm``) and make it the scenario's
        workload (kind ``traffic``, undoable): the flow test and the Congestion tab's
        "traffic matrix" run its flows."""
        path, _ = QFileDialog.getOpenFileName(self, "Import traffic matrix", "", TRAFFIC_FILTER)
        if not path:
            return False
        try:
            flows = import_traffic(path)
        except ScenarioError as exc:
            self._file_error(f"Cannot import {path}", _problems(exc))
            return False
        scenario = copy.deepcopy(self.document.scenario)
        scenario.workload.kind = "traffic"
        scenario.workload.matrix = [
            TrafficFlow(f.src, f.dst, float(f.size_bytes), f.start_s) for f in flows
        ]
        self.document.replace_with(scenario, f"Import traffic matrix ({len(flows):,} flows)")
        self.statusBar().showMessage(f"Imported {len(flows):,} flows from {path}", 8000)
        return True


def _problems(exc: ScenarioError) -> str:
    return "\n".join(f"{p.where}: {p.message}" for p in exc.problems) or str(exc)
