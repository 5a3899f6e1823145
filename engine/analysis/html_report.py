"""One self-contained HTML file that tells what a scenario does and what it rests on.

`html_report` writes, for an evaluated scenario: what was built (groups, technology, routing,
failures), the headline figures (permutation test, the collective at every size, the
training step, cost and power), a comparison of several scenarios when one was made
(`DecisionTable`: values, deltas against the baseline, the better value marked), the
IB-vs-RoCE verdict as a range over the inputs no source pins down when one was asked for
(`VerdictRange`: the band, each unknown's swing and its source or "not published"), the plots
the caller hands in as PNG bytes (embedded as data URIs, so the file travels alone), the
bill of materials, and every assumption with its source: the catalog provenance of each
priced part, how each cost figure was derived, the training model's assumptions and notes.
Nothing is computed here; the figures are the report's and the comparison's, only laid out.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine import __version__
from engine.analysis.results import DecisionTable, EvaluationResult, VerdictRange

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 1.8em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.best { font-weight: bold; background: #e8f5e9; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0; }
.small { color: #666; font-size: 0.85em; }
"""


def _e(value: object) -> str:
    return html.escape(str(value))


def _num(value: float | int | None, digits: int = 4) -> str:
    if value is None:
        return "–"
    if isinstance(value, int) or abs(value) >= 1e4:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]], numeric: bool = True) -> str:
    """An HTML table; numbers right-aligned (a cell given as (text, css class) keeps both)."""
    out = ["<table>", "<tr>" + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr>"]
    for row in rows:
        cells = []
        for cell in row:
            if isinstance(cell, tuple):
                text, css = cell
                cells.append(f'<td class="{css}">{_e(text)}</td>')
            elif numeric and isinstance(cell, (int, float)) and not isinstance(cell, bool):
                cells.append(f'<td class="num">{_num(cell)}</td>')
            else:
                cells.append(f"<td>{_e('–' if cell is None else cell)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _scenario_section(scenario: Mapping[str, Any]) -> str:
    meta = scenario.get("metadata", {})
    fabric, routing = scenario.get("fabric", {}), scenario.get("routing", {})
    parts = [
        "<h2>The scenario</h2>",
        f"<p>{_e(meta.get('description', ''))}</p>",
        f"<p>Technology <b>{_e(fabric.get('technology', '?'))}</b>, routing "
        f"<b>{_e(routing.get('mode', '?'))}</b>.</p>",
        _table(
            ["group", "kind", "model", "count", "tier"],
            [
                [g.get("id"), g.get("kind"), g.get("model"), g.get("count"), g.get("tier")]
                for g in scenario.get("groups", [])
            ],
        ),
        _table(
            ["bundle", "from", "to", "pattern", "links per pair", "speed (Gb/s)"],
            [
                [b.get(k) for k in ("id", "a", "b", "pattern", "links_per_pair", "speed_gbps")]
                for b in scenario.get("bundles", [])
            ],
        ),
    ]
    failures = scenario.get("failures") or {}
    down = [f"switch {f['index']} of {f['group']}" for f in failures.get("switches", [])]
    down += [f"{f['links_down']} cable(s) of {f['bundle']}" for f in failures.get("links", [])]
    if down:
        parts.append(f"<p>Failed: {_e(', '.join(down))}.</p>")
    return "\n".join(parts)


def _figures_section(report: EvaluationResult) -> str:
    rows: list[list[Any]] = [
        ["GPUs", report.topology.gpus],
        ["switches", report.topology.switches_total],
        ["cables", report.topology.cables_total],
    ]
    if report.permutation is not None:
        rows.append(["permutation mean throughput", report.permutation.throughput_fraction.mean])
    t = report.training
    if t is not None:
        rows += [
            ["training step (s)", t.step_s],
            ["GPU utilization", t.gpu_utilization],
            ["MFU", t.mfu],
            ["tokens/s", t.tokens_per_s],
        ]
    c = report.cost
    if c is not None:
        rows += [
            ["capex (USD)", c.capex_usd],
            ["network capex (USD)", c.network_capex_usd],
            ["power (W)", c.power_w],
            [f"opex over {c.years:g} years (USD)", c.opex_usd],
            ["cost per GPU (USD)", c.cost_per_gpu_usd],
        ]
    parts = ["<h2>Headline figures</h2>", _table(["figure", "value"], rows)]
    if report.training_error:
        parts.append(f"<p>Training step not evaluated: {_e(report.training_error)}</p>")
    if report.cost_error:
        parts.append(f"<p>Cost not evaluated: {_e(report.cost_error)}</p>")
    col = report.collective
    if col is not None:
        parts.append(f"<h2>{_e(col.op)} on {col.ranks:,} GPUs</h2>")
        parts.append(
            _table(
                ["bytes", "time (s)", "algbw (GB/s)", "busbw (GB/s)", "algorithm", "protocol"],
                [
                    [r.bytes, r.time_s, r.algbw_GBps, r.busbw_GBps, r.algorithm, r.protocol]
                    for r in col.rows
                ],
            )
        )
    return "\n".join(parts)


def _comparison_section(comparison: DecisionTable) -> str:
    labels = comparison.labels
    header = ["figure", "unit", labels[0]]
    for label in labels[1:]:
        header += [label, f"Δ {label}", "relative"]
    rows = []
    for r in comparison.rows:
        row: list[Any] = [f"{r.title} ({r.better} is better)", r.unit]
        for i, value in enumerate(r.values):
            row.append((_num(value), "num best" if r.best == i else "num"))
            if i:
                rel = r.relative[i]
                row += [r.deltas[i], "–" if rel is None else f"{rel:+.1%}"]
        rows.append(row)
    return "\n".join(
        [
            "<h2>Comparison</h2>",
            f"<p>Against the baseline <b>{_e(labels[0])}</b>; the better value is in bold.</p>",
            _table(header, rows),
        ]
    )


def _verdict_section(verdict: VerdictRange) -> str:
    rows = []
    for s in verdict.swings:
        rows.append([s.name, s.applies_to, s.default, s.values_text(), s.low, s.high, s.source])
    header = ["unknown", "on", "default", "alternatives (b / a)", "low", "high", "source"]
    return "\n".join(
        [
            "<h2>The verdict's range</h2>",
            f"<p>{_e(verdict.metric)}, <b>{_e(verdict.b)}</b> over <b>{_e(verdict.a)}</b> at "
            f"{verdict.size_bytes:,} B: <b>{verdict.baseline:.3f}</b> at the catalog's defaults "
            f"({verdict.b_value:.1f} / {verdict.a_value:.1f}), from <b>{verdict.low:.3f}</b> to "
            f"<b>{verdict.high:.3f}</b> as each unknown takes its alternatives (one at a time, "
            "the largest swing first).</p>",
            _table(header, rows),
            _list("Left out", verdict.notes),
        ]
    )


def _bom_section(report: EvaluationResult) -> str:
    cost = report.cost
    if cost is None:
        return ""
    rows = [
        [b.item, b.catalog_id, b.tier, b.count, b.unit_price_usd, b.price_usd, b.power_w, b.note]
        for b in cost.bom
    ]
    header = ["item", "catalog id", "tier", "count", "unit price (USD)", "price (USD)"]
    return "\n".join(["<h2>Bill of materials</h2>", _table([*header, "power (W)", "note"], rows)])


def _assumptions_section(report: EvaluationResult) -> str:
    parts = ["<h2>Assumptions and sources</h2>"]
    cost = report.cost
    if cost is not None:
        parts.append("<h3>Prices and power, with their sources</h3>")
        parts.append(
            _table(
                ["item", "catalog id", "source"],
                [[s.get("item"), s.get("catalog_id"), s.get("provenance")] for s in cost.sources],
                numeric=False,
            )
        )
        parts.append("<h3>How each cost figure is derived</h3>")
        parts.append(_table(["figure", "derivation"], list(cost.derivation.items()), False))
        parts.append(_list("Cost notes", cost.notes))
    t = report.training
    if t is not None:
        parts.append(_list("Training step assumptions", t.assumptions))
        parts.append(_list("Training step notes", t.notes))
    parts.append(_list("Warnings of the expansion", report.warnings))
    return "\n".join(p for p in parts if p)


def _list(title: str, items: Iterable[str]) -> str:
    items = list(items)
    if not items:
        return ""
    return f"<h3>{_e(title)}</h3><ul>" + "".join(f"<li>{_e(i)}</li>" for i in items) + "</ul>"


def _images_section(images: Sequence[tuple[str, bytes]]) -> str:
    if not images:
        return ""
    parts = ["<h2>Plots</h2>"]
    for caption, png in images:
        data = base64.b64encode(png).decode("ascii")
        parts.append(
            f'<figure><img alt="{_e(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>"
        )
    return "\n".join(parts)


def html_report(
    report: EvaluationResult,
    title: str,
    scenario: Mapping[str, Any] | None = None,
    comparison: DecisionTable | None = None,
    images: Sequence[tuple[str, bytes]] = (),
    verdict: VerdictRange | None = None,
) -> str:
    """The whole report as one HTML document (see the module docstring).

    `scenario` is the scenario's JSON form (an `AppReport` keeps it), `comparison` a
    `decision_table` to include, `images` (caption, PNG bytes) pairs embedded in the file,
    `verdict` a `verdict_range` to include.
    """
    body = [
        f"<h1>{_e(title)}</h1>",
        f'<p class="small">FabricLab {_e(__version__)}: flow-level model; every figure below '
        "comes with the assumptions and sources listed at the end.</p>",
        _scenario_section(scenario) if scenario else "",
        _figures_section(report),
        _comparison_section(comparison) if comparison is not None else "",
        _verdict_section(verdict) if verdict is not None else "",
        _images_section(images),
        _bom_section(report),
        _assumptions_section(report),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>\n"
        + "\n".join(part for part in body if part)
        + "\n</body></html>\n"
    )
