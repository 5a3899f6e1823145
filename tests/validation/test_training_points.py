"""The training step model against every published training point (docs/validation.md).

The bars are `training_points.MEDIAN_LIMIT` on the median absolute error and `POINT_LIMIT` on
any point without a written reason; both were set before the first comparison.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tests.validation import training_points as tpts
from tests.validation.bars import hold_median, hold_point

VALIDATION_MD = Path(__file__).resolve().parents[2] / "docs" / "validation.md"


@functools.cache
def _rows() -> tuple[tpts.Comparison, ...]:
    return tuple(tpts.comparisons())


def test_at_least_ten_points_over_systems_models_and_scales():
    pts = tpts.points()
    assert len(pts) >= 10
    assert len({p.id for p in pts}) == len(pts)
    assert len({p.job["model"] for p in pts}) >= 3
    assert len({p.system["server"] for p in pts}) >= 2
    gpus = [p.system["gpus"] for p in pts]
    assert min(gpus) <= 128 and max(gpus) >= 16384


def test_every_point_names_its_source_and_quantity():
    for p in tpts.points():
        assert p.source["url"].startswith("https://"), p.id
        assert p.source["date"] and p.source["origin"], p.id
        assert p.quantity in tpts.UNITS, p.id


def test_median_error_is_within_the_bar():
    rows = list(_rows())
    hold_median(tpts.median_error(rows), tpts.MEDIAN_LIMIT, tpts.MEDIAN_KNOWN_GAP, tpts.table(rows))


@pytest.mark.parametrize("point", tpts.points(), ids=lambda p: p.id)
def test_a_point_misses_by_more_than_35_percent_only_with_a_written_reason(point):
    row = next(c for c in _rows() if c.point.id == point.id)
    detail = f"model {row.model:.4g} vs published {point.measured:.4g}"
    hold_point(point.id, row.error, tpts.POINT_LIMIT, point.reason, detail)


def test_docs_validation_md_holds_the_current_table():
    text = VALIDATION_MD.read_text(encoding="utf-8")
    start, end = text.find(tpts.TABLE_START), text.find(tpts.TABLE_END)
    assert 0 <= start < end, "docs/validation.md has no training-points table: run make validation"
    shown = text[start : end + len(tpts.TABLE_END)]
    assert shown == tpts.table(list(_rows())), "docs/validation.md is stale: run make validation"
