"""Reports kept in the library: each finished run's, keyed by the scenario's content.

A cached report has the same content hash and engine version as the scenario asked about,
so it can be shown instead of a run; an unreadable cache entry counts as none.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from engine.library.store import Library
from engine.model.scenario import Scenario

RESULT_KIND = "report"


def cached_report(library: Library, scenario: Scenario) -> dict[str, Any] | None:
    """The report the library keeps for `scenario`, or ``None`` (none, or unreadable)."""
    try:
        return library.cached_result(scenario, RESULT_KIND)
    except (sqlite3.Error, ValueError):
        return None
