"""The IB-vs-RoCE verdict as a range over the inputs no source pins down, as
`engine.analysis.verdict_range` returns it: the baseline ratio, the band, and one swing per
unknown for a tornado plot."""

from __future__ import annotations

from dataclasses import dataclass

from engine.analysis.results.codec import JsonResult


@dataclass(frozen=True)
class UnknownSwing(JsonResult):
    """What one unpublished input does to the verdict, the others at their defaults.

    `field` is the scenario setting it moves (on every scenario of technology
    `applies_to`); `default` is the catalog's choice and `values` the alternatives, with
    the verdict's ratio ``b / a`` under each (`b_over_a`, ``None`` where a run was
    refused); `low` and `high` span those and the baseline. `source` says where the
    default and the alternatives come from, or that they are not published.
    """

    name: str
    field: str
    applies_to: str
    default: str
    values: tuple[str, ...]
    b_over_a: tuple[float | None, ...]
    low: float
    high: float
    source: str

    def values_text(self) -> str:
        """Each alternative with its ratio: ``"gain 1.230, 64 B refused"``."""
        return ", ".join(
            f"{label} {'refused' if r is None else f'{r:.3f}'}"
            for label, r in zip(self.values, self.b_over_a, strict=True)
        )

    @property
    def swing(self) -> float:
        """How far the input moves the ratio, high over low (1: not at all)."""
        return self.high / self.low if self.low > 0 else float("inf")


@dataclass(frozen=True)
class VerdictRange(JsonResult):
    """The ratio ``b / a`` of `metric` between scenarios `a` and `b` at `size_bytes`: at the
    defaults (`baseline`), and from `low` to `high` as each unknown takes its alternatives
    one at a time (`swings`, the largest swing first). `notes` name what could not be
    varied and why."""

    a: str
    b: str
    metric: str
    size_bytes: int
    a_value: float
    b_value: float
    baseline: float
    low: float
    high: float
    swings: tuple[UnknownSwing, ...]
    notes: tuple[str, ...] = ()
