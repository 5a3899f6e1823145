"""The IB-vs-RoCE verdict with its uncertainty: a range over the inputs no source pins down.

A verdict such as "InfiniBand's all-reduce is 1.2x RoCE's" rests on inputs that nobody
publishes or that the public sources read two ways: what NVIDIA's DCQCN registers mean
(`engine.transport.readings`), which ECN profile the operator deployed, and how much buffer
a Quantum-2 port has. `verdict_range` evaluates the pair with each such input at each of its
alternatives, one at a time (the others at the catalog's defaults), and returns the ratio's
band and a swing per input, largest first: a tornado plot of which unknown moves the
verdict most. An input about one technology applies to every scenario of it at once (a
firmware reading is true of every RoCE fabric or of none), and is left out, with a note,
when neither scenario has that technology. Every alternative carries its source, or says
it is not published.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.analysis.results import EvaluationResult, UnknownSwing, VerdictRange
from engine.catalog.devices import Catalog, default_catalog
from engine.model.catalogs import scenario_catalog
from engine.model.errors import ScenarioError
from engine.model.overrides import apply_override
from engine.model.scenario import Scenario, to_json
from engine.runtime.progress import Progress, checkpoint

METRIC = "collective busbw (GB/s)"


@dataclass(frozen=True)
class Unknown:
    """One unpublished input: the settings each alternative writes (dotted path, text) on
    every scenario of technology `applies_to`, and where the default and alternatives come
    from (`source`, read from the catalog)."""

    name: str
    field: str
    applies_to: str
    default: str
    alternatives: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    source: str


def _figure(catalog: Catalog, tech: str, name: str):
    return catalog.technology(tech).fields[name]


def _ecn(label: str, profile: dict) -> tuple[str, tuple[tuple[str, str], ...]]:
    return (
        label,
        (
            ("transport.ecn_kmin_bytes", f"{profile['kmin_bytes']:g}"),
            ("transport.ecn_kmax_bytes", f"{profile['kmax_bytes']:g}"),
            ("transport.ecn_pmax", f"{profile['pmax']:g}"),
        ),
    )


def unknowns(catalog: Catalog) -> tuple[Unknown, ...]:
    """The inputs the verdict's range varies, with their alternatives and sources."""
    nvidia = "dcqcn-nvidia"
    g = _figure(catalog, nvidia, "dce_tcp_g_reading")
    unit = _figure(catalog, nvidia, "byte_counter_unit_bytes")
    pacing = _figure(catalog, nvidia, "cnp_pacing")
    known = _figure(catalog, "verdict-unknowns", "ecn_dcqcn_paper")
    sonic = _figure(catalog, "verdict-unknowns", "ecn_sonic_lossless")
    low = _figure(catalog, "verdict-unknowns", "ib_port_buffer_bytes_low")
    high = _figure(catalog, "verdict-unknowns", "ib_port_buffer_bytes_high")
    return (
        Unknown(
            "DCE_TCP_G's reading",
            "transport.dcqcn_g_reading",
            "roce",
            str(g.value),
            (("gain", (("transport.dcqcn_g_reading", "gain"),)),),
            g.provenance(),
        ),
        Unknown(
            "RPG_BYTE_RESET's unit",
            "transport.dcqcn_byte_unit_bytes",
            "roce",
            f"{unit.value:g} B",
            (("64 B", (("transport.dcqcn_byte_unit_bytes", "64"),)),),
            unit.provenance(),
        ),
        Unknown(
            "CNP pacing",
            "transport.dcqcn_cnp_pacing",
            "roce",
            f"per {pacing.value}",
            (("per port", (("transport.dcqcn_cnp_pacing", "port"),)),),
            pacing.provenance(),
        ),
        Unknown(
            "DCQCN's byte counter",
            "transport.dcqcn_byte_counter",
            "roce",
            "present",
            (("absent", (("transport.dcqcn_byte_counter", "false"),)),),
            "present in NVIDIA's parameter set (mstflint) and in Zhu's ns3-rdma; absent from the "
            "HPCC artifact's NVIDIA-style DCQCN (alibaba-edu/High-Precision-Congestion-Control, "
            "rdma-hw.cc)",
        ),
        Unknown(
            "the switches' ECN profile",
            "transport.ecn_kmin_bytes, ecn_kmax_bytes, ecn_pmax",
            "roce",
            "each switch's catalog profile",
            (_ecn("DCQCN paper", known.value), _ecn("SONiC lossless", sonic.value)),
            f"DCQCN paper: {known.provenance()}; SONiC lossless: {sonic.provenance()}",
        ),
        Unknown(
            "Quantum-2's port buffer",
            "transport.port_buffer_bytes",
            "infiniband",
            "each switch's catalog figure",
            (
                (f"{low.value / 1024:g} KiB", (("transport.port_buffer_bytes", f"{low.value}"),)),
                (f"{high.value / 1024:g} KiB", (("transport.port_buffer_bytes", f"{high.value}"),)),
            ),
            f"not published; {low.provenance()}",
        ),
    )


def _busbw(report: EvaluationResult) -> float:
    return float(report.collective.rows[-1].busbw_GBps)


def verdict_range(
    a: Scenario,
    b: Scenario,
    catalog: Catalog | None = None,
    progress: Progress | None = None,
) -> VerdictRange:
    """The ratio b / a of the two scenarios' collective busbw (each its workload's collective
    at its message size) at the defaults and as each unknown takes its alternatives.

    Raises `ScenarioError` when either scenario cannot be evaluated at its defaults; an
    alternative a scenario refuses is left out of its swing, with a note. `progress` hears
    each run and can stop between them (`engine.runtime.progress.RunCancelledError`).
    """
    from engine.analysis.evaluation import evaluate

    cat = catalog or default_catalog()
    kept: dict[str, float] = {}

    def busbw(scenario: Scenario) -> float:
        key = to_json(scenario)
        if key not in kept:
            kept[key] = _busbw(evaluate(scenario, cat, parts=("collective",)))
        return kept[key]

    pair = (a, b)
    techs = [s.fabric.technology for s in pair]
    runs = 1 + sum(len(u.alternatives) for u in unknowns(scenario_catalog(a, cat)))
    done = 0

    def step(what: str) -> None:
        nonlocal done
        checkpoint(progress, done / runs, what)
        done += 1

    step("the defaults")
    a_value, b_value = busbw(a), busbw(b)
    baseline = b_value / a_value if a_value > 0 else float("inf")
    swings, notes = [], []
    if a.workload.message_bytes != b.workload.message_bytes:
        notes.append(
            f"the two workloads' collectives differ in size ({a.workload.message_bytes:,.0f} "
            f"and {b.workload.message_bytes:,.0f} B): the ratio compares them as they are"
        )
    for unknown in unknowns(scenario_catalog(a, cat)):
        if unknown.applies_to not in techs:
            notes.append(f"{unknown.name}: neither scenario is {unknown.applies_to}, left out")
            done += len(unknown.alternatives)
            continue
        ratios: list[float | None] = []
        for label, settings in unknown.alternatives:
            step(f"{unknown.name}: {label}")
            ratios.append(_ratio(pair, unknown.applies_to, settings, busbw, notes, unknown.name))
        known = [r for r in ratios if r is not None]
        swings.append(
            UnknownSwing(
                name=unknown.name,
                field=unknown.field,
                applies_to=unknown.applies_to,
                default=unknown.default,
                values=tuple(label for label, _ in unknown.alternatives),
                b_over_a=tuple(ratios),
                low=min([baseline, *known]),
                high=max([baseline, *known]),
                source=unknown.source,
            )
        )
    checkpoint(progress, 1.0, "done")
    swings.sort(key=lambda s: -s.swing)
    return VerdictRange(
        a=a.metadata.name,
        b=b.metadata.name,
        metric=METRIC,
        size_bytes=int(b.workload.message_bytes),
        a_value=a_value,
        b_value=b_value,
        baseline=baseline,
        low=min([baseline, *(s.low for s in swings)]),
        high=max([baseline, *(s.high for s in swings)]),
        swings=tuple(swings),
        notes=tuple(notes),
    )


def _ratio(
    pair: tuple[Scenario, Scenario],
    technology: str,
    settings: tuple[tuple[str, str], ...],
    busbw: Callable[[Scenario], float],
    notes: list[str],
    name: str,
) -> float | None:
    """b / a with `settings` written on each scenario of `technology` (None: refused)."""
    values = []
    for scenario in pair:
        changed = scenario
        if scenario.fabric.technology == technology:
            try:
                for path, text in settings:
                    changed = apply_override(changed, path, text)
                values.append(busbw(changed))
            except ScenarioError as exc:
                notes.append(f"{name}: {scenario.metadata.name} refused it ({exc.brief()})")
                return None
        else:
            values.append(busbw(scenario))
    return values[1] / values[0] if values[0] > 0 else None


def describe(result: VerdictRange) -> str:
    """The range and its tornado as text: one line per unknown, the largest swing first."""
    lines = [
        f"{result.metric}, {result.b} / {result.a} at {result.size_bytes:,} B: "
        f"{result.baseline:.3f} at the defaults ({result.b_value:.1f} / {result.a_value:.1f}), "
        f"{result.low:.3f} to {result.high:.3f} over the unknowns",
    ]
    for s in result.swings:
        lines.append(
            f"  {s.name} ({s.applies_to}; default {s.default}): {s.values_text()}; "
            f"{s.low:.3f} to {s.high:.3f}"
        )
        lines.append(f"    source: {s.source}")
    lines += [f"  note: {n}" for n in result.notes]
    return "\n".join(lines)
