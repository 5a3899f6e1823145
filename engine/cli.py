"""The headless command line: list presets, validate and evaluate scenarios.

``python main.py presets``, ``python main.py evaluate SCENARIO [--set PATH=VALUE ...] [--json]``
and ``python main.py validate SCENARIO``. SCENARIO is a preset name or a scenario JSON file.
A broken scenario prints every problem (element, field, what to do) and exits 2; a bad
command line exits 2 as well; nothing prints a traceback at the user.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

from engine.catalog import default_catalog
from engine.collective_schedules import OPS
from engine.errors import CatalogError, Problem, ScenarioError
from engine.model import Scenario, apply_override, from_json, to_json
from engine.presets import PRESETS, load_preset

EXIT_OK, EXIT_INVALID = 0, 2


def load_scenario(ref: str, overrides: list[str] | None = None) -> Scenario:
    """A scenario from a preset name or a JSON file, with ``PATH=VALUE`` overrides applied."""
    if ref.startswith("library:"):
        from engine.library import load_from_library

        scenario = load_from_library(ref, os.environ.get("FABRICLAB_LIBRARY"))
    elif ref in PRESETS:
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
    if "collective" in report:
        lines.append("")
        lines.append(format_collective(report["collective"]))
    if "training" in report:
        lines.append("")
        lines.append(format_training(report["training"]))
    for w in report.get("warnings", []):
        lines.append(w)
    return "\n".join(lines)


def format_training(step: dict[str, Any]) -> str:
    """The training-step breakdown as text."""
    lay = step.get("layout", {})
    lines = [
        f"training step: {step.get('model', '')} " + " ".join(f"{k}={v}" for k, v in lay.items()),
        f"  step {step['step_s']:.3f} s = compute {step['compute_s']:.3f} s + exposed communication "
        f"{step['exposed_comm_s']:.3f} s + pipeline bubble {step.get('bubble_s', 0.0):.3f} s",
        f"  GPU utilization {step['gpu_utilization']:.1%}   MFU {step['mfu']:.1%}   "
        f"{step['tokens_per_s']:,.0f} tokens/s",
    ]
    for kind, c in step.get("comm_s", {}).items():
        if isinstance(c, dict):
            lines.append(
                f"  {kind:<4} communication {c.get('raw_s', 0.0) * 1e3:9.2f} ms, exposed "
                f"{c.get('exposed_s', 0.0) * 1e3:9.2f} ms"
            )
    for note in step.get("notes", []):
        lines.append(f"  note: {note}")
    for item in step.get("assumptions", []):
        lines.append(f"  assumption: {item}")
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
    parts = tuple(p.strip() for p in args.parts.split(",") if p.strip())
    unknown = set(parts) - {"permutation", "collective", "training", "cost"}
    if unknown:
        raise ScenarioError(
            Problem(
                "--parts",
                f"unknown part(s) {', '.join(sorted(unknown))}; use permutation, "
                "collective, training, cost",
            )
        )
    report = evaluate(scenario, default_catalog(), parts)
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return EXIT_OK


_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_size(text: str) -> float:
    """Bytes from text like ``8``, ``64K``, ``8G``, ``8GiB`` (binary units, as nccl-tests)."""
    match = re.fullmatch(
        r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper()
    )
    if match is None:
        raise ScenarioError(Problem("--sizes", f"cannot read {text!r} as a size (e.g. 8, 64K, 8G)"))
    value = float(match.group(1)) * _UNITS[match.group(2)]
    if value <= 0:
        raise ScenarioError(Problem("--sizes", f"sizes must be positive, not {text!r}"))
    return value


def parse_sizes(spec: str, factor: float = 2.0) -> np.ndarray:
    """Sizes from ``MIN:MAX`` in steps of `factor` (``8G:8G`` is one size)."""
    lo_text, _, hi_text = spec.partition(":")
    lo = parse_size(lo_text)
    hi = parse_size(hi_text) if hi_text else lo
    if hi < lo:
        raise ScenarioError(
            Problem("--sizes", f"the largest size ({hi_text}) is below the smallest ({lo_text})")
        )
    if factor <= 1:
        raise ScenarioError(Problem("--factor", f"the step factor must exceed 1, not {factor:g}"))
    count = int(np.floor(np.log(hi / lo) / np.log(factor) + 1e-9)) + 1
    return lo * factor ** np.arange(count)


def format_collective(result: dict[str, Any]) -> str:
    """An nccl-tests-like table of a collective's times."""
    lines = [
        f"# {result['op']} over {result['ranks']} ranks",
        f"#{'size (B)':>14} {'time (us)':>12} {'algbw (GB/s)':>13} {'busbw (GB/s)':>13}  algorithm / protocol",
    ]
    for row in result["rows"]:
        lines.append(
            f"{row['bytes']:>15} {row['time_s'] * 1e6:>12.2f} {row['algbw_GBps']:>13.2f} "
            f"{row['busbw_GBps']:>13.2f}  {row['algorithm']} / {row['protocol']}"
        )
    lines.append(
        "# largest size, per stage: "
        + "; ".join(
            f"{b['stage']}: {b['bandwidth_s'] * 1e6:.1f} us transfer + {b['latency_s'] * 1e6:.1f} us latency"
            for b in result["breakdown"]
        )
    )
    hot = result["hottest_links"][:3]
    if hot:
        lines.append(
            "# hottest links: " + ", ".join(f"{h['link']} {h['utilization']:.0%}" for h in hot)
        )
    return "\n".join(lines)


def _cmd_collective(args: argparse.Namespace) -> int:
    from engine.collectives import CollectiveEngine, placement
    from engine.topology.expand import expand

    scenario = load_scenario(args.scenario, args.set)
    catalog = default_catalog()
    fabric = expand(scenario, catalog)
    w = scenario.workload
    op = args.op or w.op
    ranks = placement(fabric, args.ranks if args.ranks is not None else w.ranks)
    sizes = parse_sizes(args.sizes, args.factor)
    result = CollectiveEngine(fabric, catalog).run(
        op, ranks, sizes, args.algo or w.algorithm, args.protocol or w.protocol
    )
    data = result.to_dict()
    print(
        json.dumps(data["rows"] if args.json else data, indent=2)
        if args.json
        else format_collective(data)
    )
    return EXIT_OK


def _cmd_train(args: argparse.Namespace) -> int:
    from engine.topology.expand import expand
    from engine.training import train_step

    overrides = list(args.set)
    if args.model:
        overrides.insert(0, f"workload.training.model={args.model}")
    scenario = load_scenario(args.scenario, overrides)
    catalog = default_catalog()
    step = train_step(expand(scenario, catalog), scenario.workload.training, catalog)
    print(json.dumps(step, indent=2, default=float) if args.json else format_training(step))
    return EXIT_OK


def _cmd_cost(args: argparse.Namespace) -> int:
    from engine.cost import cost_report
    from engine.topology.expand import expand

    scenario = load_scenario(args.scenario, args.set)
    catalog = default_catalog()
    report = cost_report(
        expand(scenario, catalog),
        catalog,
        years=args.years,
        usd_per_kwh=args.usd_per_kwh,
        pue=args.pue,
    )
    if args.json:
        print(json.dumps(report, indent=2, default=str))
        return EXIT_OK
    lines = [f"{scenario.metadata.name}: bill of materials"]
    for line in report["bom"]:
        lines.append(
            f"  {line['count']:>9,} x {line['item']:<44} {line['unit_price_usd']:>11,.0f} USD "
            f"{line['unit_power_w']:>8,.1f} W  ({line['tier']})"
        )
    lines.append(
        f"capex {report['capex_usd']:,.0f} USD, network {report['network_capex_usd']:,.0f} USD "
        f"({report['network_share']:.1%}); {report['cost_per_gpu_usd']:,.0f} USD per GPU"
    )
    lines.append(
        f"power {report['power_w'] / 1e3:,.1f} kW (network {report['network_power_w'] / 1e3:,.1f} kW); "
        f"energy over {args.years:g} years {report['opex_usd']:,.0f} USD"
    )
    print("\n".join(lines))
    return EXIT_OK


def _cmd_sweep(args: argparse.Namespace) -> int:
    from engine.sweep import default_executor, parse_values, sweep

    scenario = load_scenario(args.scenario, args.set)
    params = [(args.param, parse_values(args.values))]
    if args.param2:
        if not args.values2:
            raise ScenarioError(Problem("--values2", "--param2 needs --values2"))
        params.append((args.param2, parse_values(args.values2)))

    def progress(done: int, total: int) -> None:
        if not args.json and not args.csv:
            print(f"\r{done}/{total} points", end="", file=sys.stderr, flush=True)

    client = None
    if args.dask:
        try:
            from dask.distributed import Client
        except ImportError:
            raise ScenarioError(
                Problem(
                    "--dask", "dask.distributed is not installed (pip install 'dask[distributed]')"
                )
            ) from None
        client = Client(args.dask)
        executor = client.get_executor()
    elif args.workers == 1:
        executor = None
    else:
        executor = default_executor(args.workers)
    try:
        result = sweep(scenario, params, args.metric, executor, progress)
    finally:
        if client is not None:
            client.close()
        elif executor is not None:
            executor.shutdown(cancel_futures=True)
    if not args.json and not args.csv:
        print(file=sys.stderr)
    if args.csv:
        print(result.to_csv(), end="")
    elif args.json:
        print(
            json.dumps(
                {"metric": result.metric, "table": result.table(), "errors": result.errors},
                indent=2,
            )
        )
    else:
        columns = result.table()
        names = list(columns)
        print("  ".join(f"{n:>24}" for n in names))
        for i in range(len(result.points)):
            print("  ".join(f"{columns[n][i]!s:>24}" for n in names))
        for i, err in result.errors.items():
            print(f"point {i}: {err}", file=sys.stderr)
    return EXIT_OK if not result.errors else EXIT_INVALID


def _number(value: float) -> str:
    """A figure for a table: thousands separated when large, 4 significant digits when small."""
    return f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:.4g}"


def _cmd_compare(args: argparse.Namespace) -> int:
    from engine.compare import compare, convert_technology

    a = load_scenario(args.scenario_a, args.set)
    if args.scenario_b:
        b = load_scenario(args.scenario_b, args.set)
    elif args.convert:
        b = convert_technology(a, args.convert, default_catalog())
    else:
        raise ScenarioError(
            Problem("compare", "give a second scenario or --convert infiniband|roce")
        )
    parts = tuple(p.strip() for p in args.parts.split(",") if p.strip())
    result = compare(a, b, default_catalog(), parts)
    if args.json:
        print(json.dumps(result, indent=2))
        return EXIT_OK
    print(f"{'':<30}{result['a'][:24]:>26}{result['b'][:24]:>26}{'b / a':>10}")
    for row in result["rows"]:
        ratio = "" if row["b_over_a"] is None else f"{row['b_over_a']:.3f}"
        print(f"{row['metric']:<30}{_number(row['a']):>26}{_number(row['b']):>26}{ratio:>10}")
    return EXIT_OK


def _cmd_library(args: argparse.Namespace) -> int:
    from engine.library import LibraryError, open_library

    try:
        lib = open_library(args.path)
    except LibraryError as exc:
        raise ScenarioError(Problem("--path", str(exc))) from None
    try:
        if lib.message:
            print(lib.message, file=sys.stderr)
        action = args.action
        if action == "list":
            for e in lib.list(sort=args.sort):
                print(
                    f"{e.name:<32} {e.modified[:19]}  v{e.versions:<3} {', '.join(e.tags):<30} {e.description[:60]}"
                )
        elif action == "search":
            for name in lib.search(" ".join(args.arguments)):
                print(name)
        elif action == "show":
            print(to_json(lib.load(args.arguments[0])))
        elif action == "versions":
            for v in lib.versions(args.arguments[0]):
                print(f"v{v['number']:<4} {v['created'][:19]}  {v['note']}")
        elif action == "export":
            lib.export_json(args.arguments[0], args.arguments[1])
            print(f"wrote {args.arguments[1]}")
        elif action == "import":
            print(f"imported {lib.import_json(args.arguments[0])}")
    except LibraryError as exc:
        raise ScenarioError(Problem("library", str(exc))) from None
    except IndexError:
        raise ScenarioError(
            Problem("library", f"{args.action} needs more arguments (see --help)")
        ) from None
    finally:
        lib.close()
    return EXIT_OK


def _command(
    sub,
    name: str,
    func,
    text: str,
    json_help: str = "print JSON",
    scenario: bool = True,
    csv: bool = False,
) -> argparse.ArgumentParser:
    """A sub-command with the options every scenario command shares (SCENARIO, --set, --json)."""
    p = sub.add_parser(name, help=text)
    if scenario:
        p.add_argument("scenario", help="preset name or scenario JSON file")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="override a field by dotted path, e.g. routing.mode=spray (repeatable)",
    )
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help=json_help)
    if csv:
        out.add_argument("--csv", action="store_true", help="print CSV")
    p.set_defaults(func=func)
    return p


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of all headless sub-commands."""
    from engine.sweep import METRICS

    parser = argparse.ArgumentParser(
        prog="fabriclab", description="FabricLab: what-if explorer for AI cluster networks"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("presets", help="list the shipped preset scenarios")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_presets)
    _command(sub, "validate", _cmd_validate, "check a scenario and report every problem")
    p = _command(
        sub, "evaluate", _cmd_evaluate, "topology, permutation test, collective and training step"
    )
    p.add_argument(
        "--parts",
        default="permutation,collective,training",
        help="comma-separated probes: permutation, collective, training, cost (default: the first three)",
    )
    p = _command(sub, "cost", _cmd_cost, "bill of materials, capital cost, power and energy cost")
    p.add_argument(
        "--years", type=float, default=5.0, help="years of operation for the energy cost"
    )
    p.add_argument(
        "--usd-per-kwh",
        type=float,
        default=None,
        help="electricity price (default: catalog datacenter.usd_per_kwh)",
    )
    p.add_argument(
        "--pue",
        type=float,
        default=None,
        help="power usage effectiveness (default: catalog datacenter.pue)",
    )
    p = _command(sub, "sweep", _cmd_sweep, "vary one or two fields and collect a metric", csv=True)
    p.add_argument("--param", required=True, help="dotted path, e.g. fabric.switch_latency_ns")
    p.add_argument("--values", required=True, help="v1,v2,... or start:stop:count")
    p.add_argument("--param2", help="a second dotted path (a grid)")
    p.add_argument("--values2", help="values of --param2")
    p.add_argument("--metric", required=True, choices=sorted(METRICS), help="what to collect")
    p.add_argument(
        "--workers", type=int, default=0, help="processes (default: one per core; 1: inline)"
    )
    p.add_argument("--dask", metavar="ADDRESS", help="run on a dask.distributed scheduler")
    p = _command(
        sub,
        "compare",
        _cmd_compare,
        "two scenarios side by side (or one against its IB/RoCE twin)",
        scenario=False,
    )
    p.add_argument("scenario_a", help="preset name or scenario JSON file")
    p.add_argument("scenario_b", nargs="?", help="the second scenario")
    p.add_argument(
        "--convert", choices=["infiniband", "roce"], help="compare with scenario_a converted"
    )
    p.add_argument(
        "--parts", default="permutation,collective,training,cost", help="what to compare"
    )
    p = _command(
        sub, "train", _cmd_train, "one training step: compute, communication per kind, MFU"
    )
    p.add_argument(
        "--model", help="model preset (gpt3-175b, llama3-70b, llama3-405b, mixtral-8x7b)"
    )
    p = _command(
        sub,
        "collective",
        _cmd_collective,
        "time a collective over message sizes (nccl-tests style)",
        json_help="print a JSON list of rows",
    )
    p.add_argument("--op", choices=OPS, help="collective (default: the scenario's)")
    p.add_argument("--algo", help="algorithm, or auto (the fastest per size)")
    p.add_argument("--protocol", choices=["auto", "ll", "ll128", "simple"], help="NCCL protocol")
    p.add_argument("--ranks", type=int, help="the first N GPUs in placement order (8 = one server)")
    p.add_argument(
        "--sizes", default="8:16G", help="MIN:MAX bytes, e.g. 8:16G or 8G:8G (default 8:16G)"
    )
    p.add_argument("--factor", type=float, default=4.0, help="step between sizes (default 4)")
    p = sub.add_parser(
        "library", help="the scenario library: list, search, show, versions, export, import"
    )
    p.add_argument(
        "--path",
        help="library file (default: the user's library; FABRICLAB_LIBRARY for library:NAME)",
    )
    p.add_argument(
        "--sort", default="modified", choices=["modified", "name", "created"], help="list order"
    )
    p.add_argument("action", choices=["list", "search", "show", "versions", "export", "import"])
    p.add_argument("arguments", nargs="*", help="QUERY | NAME | NAME FILE | FILE")
    p.set_defaults(func=_cmd_library)
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
