"""Reports kept in the library: each finished run's, keyed by the scenario's content.

A cached report has the same content hash and engine version as the scenario asked about,
so it can be shown instead of a run. The library keeps the report's JSON form
(`AppReport.to_dict`) and it is rebuilt with `AppReport.from_dict`; an entry that cannot be
read, or was kept in a shape this version no longer reads, counts as none (the scenario is
evaluated again).
"""

from __future__ import annotations

import sqlite3

from engine.analysis import AppReport
from engine.library.store import Library
from engine.model.scenario import Scenario

RESULT_KIND = "report"


def cached_report(library: Library, scenario: Scenario) -> AppReport | None:
    """The report the library keeps for `scenario`, or ``None`` (none, or unreadable)."""
    try:
        stored = library.cached_result(scenario, RESULT_KIND)
    except (sqlite3.Error, ValueError):
        return None
    if stored is None:
        return None
    try:
        return AppReport.from_dict(stored)
    except (ValueError, TypeError):  # ResultFormatError: kept by a version of another shape
        return None


def cache_report(library: Library, scenario: Scenario, report: AppReport) -> None:
    """Keep `report` for `scenario` (its JSON form); raises what the library raises."""
    library.cache_result(scenario, RESULT_KIND, report.to_dict())
