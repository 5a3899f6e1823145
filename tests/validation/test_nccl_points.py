"""The model against every public nccl-tests point (docs/validation.md's table).

The bars are `nccl_points.MEDIAN_LIMIT` on the median absolute error and `POINT_LIMIT` on
any point without a written reason; both were set before the first comparison.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tests.validation import nccl_points as npts
from tests.validation.bars import hold_median, hold_point

VALIDATION_MD = Path(__file__).resolve().parents[2] / "docs" / "validation.md"


@functools.cache
def _rows() -> tuple[npts.Comparison, ...]:
    return tuple(npts.comparisons())


def test_the_points_cover_sizes_scales_and_collectives():
    pts = npts.points()
    assert len(pts) >= 25
    sizes = [p.size_bytes for p in pts]
    assert min(sizes) <= 1024 and max(sizes) >= 16 * 2**30
    servers = [p.system["servers"] for p in pts]
    assert min(s for s in servers if s > 1) == 2 and max(servers) >= 100
    assert {"all-reduce", "all-gather", "reduce-scatter", "all-to-all"} <= {p.op for p in pts}
    assert len({p.id for p in pts}) == len(pts)
    switches = {p.system["switch"] for p in pts}
    assert {"qm9700", "qm8700"} <= switches and "sn5600" in switches  # InfiniBand and RoCE


def test_every_point_names_its_source():
    for p in npts.points():
        assert p.source["url"].startswith("https://"), p.id
        assert p.source["date"] and p.source["origin"], p.id
        assert p.quantity in npts.UNITS, p.id


def test_median_error_is_within_the_bar():
    rows = list(_rows())
    hold_median(npts.median_error(rows), npts.MEDIAN_LIMIT, npts.MEDIAN_KNOWN_GAP, npts.table(rows))


@pytest.mark.parametrize("point", npts.points(), ids=lambda p: p.id)
def test_a_point_misses_by_more_than_35_percent_only_with_a_written_reason(point):
    row = next(c for c in _rows() if c.point.id == point.id)
    detail = f"model {row.model:.4g} vs measured {point.measured:.4g}"
    hold_point(point.id, row.error, npts.POINT_LIMIT, point.reason, detail)


def test_docs_validation_md_holds_the_current_table():
    text = VALIDATION_MD.read_text(encoding="utf-8")
    start, end = text.find(npts.TABLE_START), text.find(npts.TABLE_END)
    assert 0 <= start < end, "docs/validation.md has no nccl-points table: run make validation"
    shown = text[start : end + len(npts.TABLE_END)]
    assert shown == npts.table(list(_rows())), "docs/validation.md is stale: run make validation"
