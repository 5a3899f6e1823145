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


@dataclass(frozen=True)
class DecisionRow(JsonResult):
    """One deciding figure of several scenarios, against the first (the baseline).

    `values` are in the engine's units (`unit`: seconds, watts, US dollars, GB/s, a
    fraction...), ``None`` where a scenario lacks the figure; `deltas` are value minus
    baseline and `relative` that delta over the baseline (``None`` for the baseline itself,
    a missing value or a zero baseline). `better` is ``"higher"`` or ``"lower"``, and `best`
    the index of the better value (``None`` when fewer than two values or all equal).
    """

    title: str
    unit: str
    better: str
    values: tuple[float | None, ...]
    deltas: tuple[float | None, ...]
    relative: tuple[float | None, ...]
    best: int | None


@dataclass(frozen=True)
class DecisionTable(JsonResult):
    """The figures that decide between scenarios: one row per figure, one column per
    scenario (`labels`, the first the baseline)."""

    labels: tuple[str, ...]
    rows: tuple[DecisionRow, ...]

    def row(self, title: str) -> DecisionRow:
        """The row titled `title` (`KeyError` when there is none)."""
        for row in self.rows:
            if row.title == title:
                return row
        raise KeyError(title)

    def csv_header(self) -> list[str]:
        """The CSV columns: figure, unit, better, each scenario's value, then each other
        scenario's delta and relative delta against the baseline."""
        others = self.labels[1:]
        return [
            "figure",
            "unit",
            "better",
            *self.labels,
            *(f"{label} - {self.labels[0]}" for label in others),
            *(f"{label} vs {self.labels[0]} (relative)" for label in others),
        ]

    def csv_rows(self) -> list[list[object]]:
        """One CSV row per figure, in the engine's units (empty cells where missing)."""
        return [
            [
                r.title,
                r.unit,
                r.better,
                *("" if v is None else v for v in r.values),
                *("" if d is None else d for d in r.deltas[1:]),
                *("" if d is None else d for d in r.relative[1:]),
            ]
            for r in self.rows
        ]
