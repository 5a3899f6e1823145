"""Two scenarios' headline figures side by side, as `engine.analysis.compare` returns them."""

from __future__ import annotations

from dataclasses import dataclass

from engine.analysis.results.codec import JsonResult


@dataclass(frozen=True)
class ComparisonRow(JsonResult):
    """One figure of scenarios `a` and `b`, and ``b / a`` (``None`` when `a` is zero)."""

    metric: str
    a: float
    b: float
    b_over_a: float | None


@dataclass(frozen=True)
class ComparisonResult(JsonResult):
    """The names of the two scenarios and one row per figure both of them have."""

    a: str
    b: str
    rows: tuple[ComparisonRow, ...]
