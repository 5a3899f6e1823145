"""The HTML report: every section from the figures it is given, text escaped, images inline."""

from __future__ import annotations

import json

import pytest

from engine.analysis import (
    DEFAULT_PRESET,
    decision_table,
    html_report,
    load_preset,
    run_evaluation,
)
from engine.model.overrides import apply_override
from engine.model.scenario import to_json


@pytest.fixture(scope="module")
def evaluated(catalog):
    scenario = apply_override(load_preset(DEFAULT_PRESET), "metadata.name", "<b>mine</b>")
    scenario = apply_override(scenario, "failures.switches", '[{"group": "spine", "index": 3}]')
    return scenario, run_evaluation(scenario, catalog)


def test_every_section_is_there_and_text_is_escaped(evaluated):
    scenario, report = evaluated
    text = html_report(report, "Report of <b>mine</b>", json.loads(to_json(scenario)))
    assert "<title>Report of &lt;b&gt;mine&lt;/b&gt;</title>" in text
    assert "<b>mine</b>" not in text
    for heading in ("The scenario", "Headline figures", "Bill of materials"):
        assert f"<h2>{heading}</h2>" in text
    assert "<h2>Assumptions and sources</h2>" in text and "<h2>Comparison</h2>" not in text
    assert "Failed: switch 3 of spine." in text
    assert f"{report.cost.capex_usd:,.0f}" in text
    assert text.count("<tr>") > len(report.cost.bom) + len(report.collective.rows)


def test_a_comparison_and_images_are_embedded(evaluated):
    _scenario, report = evaluated
    table = decision_table(["a", "b"], [report, report])
    png = b"\x89PNG\r\n\x1a\nfake"
    text = html_report(report, "t", None, table, [("busbw", png)])
    assert "<h2>Comparison</h2>" in text and "<h2>Plots</h2>" in text
    assert 'src="data:image/png;base64,iVBORw0KGgpmYWtl"' in text
    assert "<figcaption>busbw</figcaption>" in text
    assert '<td class="num best">' not in text  # equal values: nothing is better


def test_the_verdict_s_range_lists_every_unknown_with_its_source(evaluated):
    from engine.analysis import UnknownSwing, VerdictRange

    _scenario, report = evaluated
    swing = UnknownSwing(
        "DCE_TCP_G's reading",
        "transport.dcqcn_g_reading",
        "roce",
        "retention",
        ("gain",),
        (1.23,),
        1.23,
        2.01,
        "Mellanox <community> DOC-2790",
    )
    refused = UnknownSwing(
        "Quantum-2's port buffer",
        "transport.port_buffer_bytes",
        "infiniband",
        "catalog",
        ("64 KiB",),
        (None,),
        2.01,
        2.01,
        "not published",
    )
    verdict = VerdictRange(
        "ib",
        "roce",
        "collective busbw (GB/s)",
        2**30,
        150.0,
        302.0,
        2.013,
        1.23,
        2.013,
        (swing, refused),
        ("the switches' ECN profile: refused",),
    )
    text = html_report(report, "t", verdict=verdict)
    assert "<h2>The verdict's range</h2>" in text
    assert "<b>2.013</b> at the catalog's defaults" in text and "<b>1.230</b>" in text
    assert "gain 1.230" in text and "64 KiB refused" in text
    assert "Mellanox &lt;community&gt; DOC-2790" in text and "not published" in text
    assert "the switches&#x27; ECN profile: refused" in text
