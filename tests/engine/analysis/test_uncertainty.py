"""The verdict's range over the inputs no source pins down (engine.analysis.uncertainty)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.analysis import VerdictRange, convert_technology, verdict_range
from engine.analysis.uncertainty import _ratio, unknowns
from engine.model.scenario import from_json, to_json
from engine.topology import generators as gen

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def pair(catalog):
    """A 64-GPU rail-optimized InfiniBand fabric and its RoCE twin, a 256 MiB all-reduce."""
    ib = gen.rail_optimized(64, "dgx-h100", "qm9700", catalog=catalog)
    ib.workload.message_bytes = 256 * 2**20
    ib.metadata.name = "ib-64"
    roce = convert_technology(ib, "roce", catalog)
    roce.metadata.name = "roce-64"
    return roce, ib


@pytest.fixture(scope="module")
def band(pair, catalog):
    return verdict_range(*pair, catalog)


def test_the_range_holds_the_baseline_and_every_alternative(band):
    assert band.baseline == pytest.approx(band.b_value / band.a_value)
    assert band.low <= band.baseline <= band.high
    assert len(band.swings) == len(unknowns_named(band)) == 6
    for s in band.swings:
        assert s.low <= band.baseline <= s.high
        known = [r for r in s.b_over_a if r is not None]
        assert s.low == min([band.baseline, *known]) and s.high == max([band.baseline, *known])
        assert band.low <= s.low and s.high <= band.high
        assert s.source  # a source, or "not published"
    swings = [s.swing for s in band.swings]
    assert swings == sorted(swings, reverse=True)  # a tornado: the largest first
    buffer = next(s for s in band.swings if s.applies_to == "infiniband")
    assert buffer.source.startswith("not published")


def unknowns_named(band: VerdictRange) -> set[str]:
    return {s.name for s in band.swings}


def test_a_reading_writes_every_scenario_of_its_technology_and_no_other(pair):
    seen = []

    def busbw(scenario):
        seen.append(json.loads(to_json(scenario))["transport"])
        return 100.0

    roce, ib = pair
    settings = (("transport.dcqcn_g_reading", "gain"),)
    assert _ratio((roce, roce), "roce", settings, busbw, [], "G") == 1.0
    assert [t["dcqcn_g_reading"] for t in seen] == ["gain", "gain"]
    seen.clear()
    _ratio((roce, ib), "roce", settings, busbw, [], "G")
    assert [t["dcqcn_g_reading"] for t in seen] == ["gain", None]


def test_an_unknown_neither_scenario_has_is_left_out_with_a_note(pair, catalog):
    _, ib = pair
    band = verdict_range(ib, from_json(to_json(ib)), catalog)
    assert band.baseline == pytest.approx(1.0)
    assert [s.applies_to for s in band.swings] == ["infiniband"]
    roce_unknowns = [u for u in unknowns(catalog) if u.applies_to == "roce"]
    assert len(band.notes) == len(roce_unknowns)
    assert all("neither scenario is roce" in note for note in band.notes)


def test_compare_uncertainty_prints_the_range_as_json(pair, tmp_path):
    roce, ib = pair
    files = []
    for scenario in (roce, ib):
        path = tmp_path / f"{scenario.metadata.name}.json"
        path.write_text(to_json(scenario))
        files.append(str(path))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "compare", *files, "--uncertainty", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    band = VerdictRange.from_dict(json.loads(proc.stdout))
    assert band.a == "roce-64" and band.b == "ib-64"
    assert band.low <= band.baseline <= band.high and len(band.swings) == 6
