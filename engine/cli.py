"""The headless command line: list presets, validate and evaluate scenarios.

``python main.py presets``, ``python main.py evaluate SCENARIO [--set PATH=VALUE ...] [--json]``
and ``python main.py validate SCENARIO``. SCENARIO is a preset name or a scenario JSON file.
A broken scenario prints every problem (element, field, what to do) and exits 2; a bad
command line exits 2 as well; nothing prints a traceback at the user.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from engine.catalog import default_catalog
from engine.errors import CatalogError, Problem, ScenarioError
from engine.model import Scenario, apply_override, from_json
from engine.presets import PRESETS, load_preset

EXIT_OK, EXIT_INVALID = 0, 2


def load_scenario(ref: str, overrides: list[str] | None = None) -> Scenario:
    """A scenario from a preset name or a JSON file, with ``PATH=VALUE`` overrides applied."""
    if ref in PRESETS:
        scenario = load_preset(ref)
    else:
        path = Path(ref)
        if not path.exists():
            names = ", ".join(PRESETS)
            raise ScenarioError(
                Problem("scenario", f"{ref!r} is neither a preset ({names}) nor a file")
            )
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ScenarioError(Problem(str(path), f"cannot read the file: {exc}")) from None
        try:
            scenario = from_json(text)
        except ScenarioError as exc:
            raise ScenarioError(
                [Problem(f"{path}: {p.where}", p.message, p.field) for p in exc.problems]
            ) from None
    for item in overrides or []:
        if "=" not in item:
            raise ScenarioError(Problem("--set", f"expected PATH=VALUE, got {item!r}"))
        key, value = item.split("=", 1)
        scenario = apply_override(scenario, key.strip(), value.strip())
    return scenario


def _gbps(bytes_per_s: float) -> str:
    return f"{bytes_per_s * 8 / 1e9:,.0f} Gb/s"


def format_report(report: dict[str, Any]) -> str:
    """The evaluation report as text for a terminal."""
    t, p = report["topology"], report["permutation"]
    lines = [f"{t['name']}: {t['gpus']:,} GPUs on {t['servers']:,} servers"]
    lines.append("  switches: " + ", ".join(f"{n:,} {tier}" for tier, n in t["switches"].items()))
    lines.append(
        "  cables:   "
        + ", ".join(f"{n:,} {b}" for b, n in t["cables"].items())
        + f" ({t['cables_working']:,} of {t['cables_total']:,} working)"
    )
    lines.append(f"  bisection bandwidth: {_gbps(t['bisection_bandwidth_Bps'])}")
    if t["oversubscription"]:
        lines.append(
            "  oversubscription:   "
            + ", ".join(f"{tier} {v:.2f}:1" for tier, v in t["oversubscription"].items())
        )
    f = p["throughput_fraction"]
    lines.append("")
    lines.append(
        f"permutation traffic, routing {p['routing']} ({p['flows_per_connection']} flow(s) per connection), "
        f"{p['connections']:,} connections"
    )
    lines.append(
        f"  per-flow throughput / line rate: min {f['min']:.3f}  mean {f['mean']:.3f}  max {f['max']:.3f}"
    )
    c = p["cross_leaf_throughput_fraction"]
    if p["cross_leaf_connections"]:
        lines.append(
            f"  cross-leaf flows ({p['cross_leaf_connections']:,}):     min {c['min']:.3f}  "
            f"mean {c['mean']:.3f}  max {c['max']:.3f}"
        )
    lines.append(f"  flows below 99% of line rate: {p['below_99pct_fraction']:.1%}")
    if p["unreachable"]:
        lines.append(f"  UNREACHABLE connections: {p['unreachable']:,}")
    lines.append(f"  mean path latency: {p['mean_path_latency_s'] * 1e6:.2f} µs")
    lines.append("  link utilization per tier (min / mean / max, idle share):")
    for label, u in p["link_utilization"].items():
        lines.append(
            f"    {label:<14} {u['min']:.2f} / {u['mean']:.2f} / {u['max']:.2f}   "
            f"idle {u['idle_fraction']:.1%} of {u['links']:,}"
        )
    for w in report.get("warnings", []):
        lines.append(w)
    return "\n".join(lines)


def _cmd_presets(args: argparse.Namespace) -> int:
    if args.json:
        print(
            json.dumps(
                [{"name": n, "description": f().metadata.description} for n, f in PRESETS.items()],
                indent=2,
            )
        )
    else:
        for name, factory in PRESETS.items():
            print(f"{name:<28} {factory().metadata.description}")
    return EXIT_OK


def _cmd_validate(args: argparse.Namespace) -> int:
    from engine.topology.expand import expand

    scenario = load_scenario(args.scenario, args.set)
    fabric = expand(scenario, default_catalog())
    print(
        f"{scenario.metadata.name}: valid ({fabric.n_gpus:,} GPUs, {fabric.n_links:,} directed links)"
    )
    return EXIT_OK


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from engine.evaluate import evaluate

    scenario = load_scenario(args.scenario, args.set)
    report = evaluate(scenario, default_catalog())
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of all headless sub-commands."""
    parser = argparse.ArgumentParser(
        prog="fabriclab", description="FabricLab: what-if explorer for AI cluster networks"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("presets", help="list the shipped preset scenarios")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_presets)
    for name, func, text in (
        ("validate", _cmd_validate, "check a scenario and report every problem"),
        ("evaluate", _cmd_evaluate, "topology summary and permutation-traffic test"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("scenario", help="preset name or scenario JSON file")
        p.add_argument(
            "--set",
            action="append",
            default=[],
            metavar="PATH=VALUE",
            help="override a field by dotted path, e.g. routing.mode=spray (repeatable)",
        )
        p.add_argument("--json", action="store_true", help="print JSON")
        p.set_defaults(func=func)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one sub-command; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except ScenarioError as exc:
        print(f"{len(exc.problems)} problem(s) in the scenario:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return EXIT_INVALID
    except CatalogError as exc:
        print(f"catalog error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except MemoryError as exc:
        print(f"too large: {exc}", file=sys.stderr)
        return EXIT_INVALID
