"""The GPU-utilization-vs-latency curve of each shown report, kept beside the report.

The engine's reports are frozen, and the curve costs a training step per point, so the
results panel asks for it later than the report and keeps it here: the rows once they are
all in, or why they could not be computed. A report is looked up by identity, so the
current report pinned shares its curve with its pin; the entries of reports no longer
shown are dropped (`keep_only`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engine.analysis import AppReport


@dataclass
class _Entry:
    report: AppReport  # held, so its id is not reused while the entry lives
    rows: list[dict[str, Any]] | None = None
    error: str | None = None


class LatencyCurves:
    """Latency rows (`engine.analysis.latency_rows`) or an error message per report."""

    def __init__(self) -> None:
        self._entries: dict[int, _Entry] = {}

    def rows(self, report: AppReport | None) -> list[dict[str, Any]] | None:
        """The finished curve of `report`, ``None`` while there is none."""
        entry = self._entry(report)
        return entry.rows if entry else None

    def error(self, report: AppReport | None) -> str | None:
        """Why `report`'s curve could not be computed, ``None`` if it did not fail."""
        entry = self._entry(report)
        return entry.error if entry else None

    def settled(self, report: AppReport) -> bool:
        """Whether `report`'s curve is in or has failed (nothing more to ask for)."""
        entry = self._entry(report)
        return entry is not None and (entry.rows is not None or entry.error is not None)

    def set_rows(self, report: AppReport, rows: list[dict[str, Any]]) -> None:
        """Keep the finished curve of `report`."""
        self._entries[id(report)] = _Entry(report, rows=list(rows))

    def set_error(self, report: AppReport, message: str) -> None:
        """Keep why `report`'s curve could not be computed."""
        self._entries[id(report)] = _Entry(report, error=message)

    def keep_only(self, reports: Iterable[AppReport | None]) -> None:
        """Drop the curves of every report but `reports` (the ones still shown)."""
        shown = {id(r) for r in reports if r is not None}
        self._entries = {k: e for k, e in self._entries.items() if k in shown}

    def _entry(self, report: AppReport | None) -> _Entry | None:
        if report is None:
            return None
        entry = self._entries.get(id(report))
        return entry if entry is not None and entry.report is report else None
