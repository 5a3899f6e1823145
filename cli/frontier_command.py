"""The ``pareto`` sub-command (alias ``frontier``): cost against performance, the designs
not beaten on both.

``pareto SCENARIO --param PATH --values V`` sweeps one field of one scenario;
``pareto A B C ...`` sets whole scenarios side by side; ``pareto --library [PATH]
[--search QUERY]`` takes the scenarios of a library (the default one without PATH), with any
named scenarios beside them. Each design is a point of a cost
(``--cost``: capex, network capex or capex per GPU) and a performance (``--performance``:
step time, tokens/s, GPU utilization, MFU, busbw or goodput); the output marks the points
on the Pareto front, lists it cheapest first, and names for every other point one front
point that beats it. One call into `engine.analysis` (`frontier_sweep`,
`frontier_scenarios` or `frontier_library`); bad input is a `ScenarioError` naming the option (exit 2).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

from engine.analysis import (
    FRONTIER_COSTS,
    FRONTIER_PERFORMANCE,
    Frontier,
    frontier,
    frontier_library,
    frontier_scenarios,
    frontier_sweep,
)
from engine.model.errors import Problem, ScenarioError

EXIT_OK = 0
EXIT_INVALID = 2


def add_frontier_command(
    sub: argparse._SubParsersAction,
    scenario_command: Callable[..., argparse.ArgumentParser],
) -> None:
    """Register ``pareto`` (alias ``frontier``) on `sub`; `scenario_command` adds the shared
    --set/--json."""
    p = scenario_command(
        sub,
        "pareto",
        run_frontier,
        "cost vs step time (or goodput): the Pareto front over a sweep, scenarios or a library",
        scenario=False,
        csv=True,
        aliases=("frontier",),
    )
    p.add_argument(
        "scenarios", nargs="*", help="one scenario with --param, or two or more (or --library)"
    )
    p.add_argument(
        "--library",
        nargs="?",
        const="",
        default=None,
        metavar="PATH",
        help="the scenarios of a library (default: $FABRICLAB_LIBRARY or the user's library)",
    )
    p.add_argument("--search", metavar="QUERY", help="with --library: only the scenarios matching")
    p.add_argument("--param", help="dotted path to sweep, e.g. groups.spine.count")
    p.add_argument("--values", help="values of --param: v1,v2,... or start:stop:count")
    p.add_argument(
        "--cost", default="capex_usd", choices=sorted(FRONTIER_COSTS), help="the cost axis"
    )
    p.add_argument(
        "--performance",
        default="step_s",
        choices=sorted(FRONTIER_PERFORMANCE),
        help="the performance axis (step_s: lower is better; the others: higher)",
    )


def run_frontier(args: argparse.Namespace) -> int:
    """Print the frontier as a table (text or CSV) or JSON."""
    from cli.inputs import load_scenario

    if args.param:
        if len(args.scenarios) != 1 or not args.values or args.library is not None:
            raise ScenarioError(
                Problem(
                    "--param", "a sweep takes one scenario and --values with --param, no --library"
                )
            )
        scenario = load_scenario(args.scenarios[0], args.set)
        result = frontier_sweep(scenario, args.param, args.values, args.cost, args.performance)
    elif args.library is not None:
        path = args.library or os.environ.get("FABRICLAB_LIBRARY") or None
        result = frontier_library(path, args.search, args.cost, args.performance)
        if args.scenarios:
            result = _with_named(result, args)
    else:
        if len(args.scenarios) < 2:
            raise ScenarioError(
                Problem("scenarios", "name two or more scenarios, or one with --param")
            )
        scenarios = [load_scenario(ref, args.set) for ref in args.scenarios]
        result = frontier_scenarios(scenarios, args.scenarios, args.cost, args.performance)
    if args.json:
        print(result.to_json())
    elif args.csv:
        print(frontier_csv(result), end="")
    else:
        print(format_frontier(result))
    return EXIT_OK if not result.errors else EXIT_INVALID


def _with_named(library: Frontier, args: argparse.Namespace) -> Frontier:
    """The library's frontier with the named scenarios added as points (evaluated once)."""
    from cli.inputs import load_scenario

    named = frontier_scenarios(
        [load_scenario(ref, args.set) for ref in args.scenarios],
        args.scenarios,
        args.cost,
        args.performance,
    )
    points = library.points + named.points
    return frontier(
        [p.label for p in points],
        [p.cost for p in points],
        [p.performance for p in points],
        args.cost,
        args.performance,
        library.errors + named.errors,
    )


def _number(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:.6g}"


def frontier_csv(result: Frontier) -> str:
    """One row per point: label, cost, performance, on the front, dominated by."""
    rows = [f"label,{result.cost_metric},{result.performance_metric},on_front,dominated_by"]
    for p in result.points:
        cost = "" if p.cost is None else repr(p.cost)
        perf = "" if p.performance is None else repr(p.performance)
        rows.append(f'"{p.label}",{cost},{perf},{str(p.on_front).lower()},"{p.dominated_by}"')
    return "\n".join(rows) + "\n"


def format_frontier(result: Frontier) -> str:
    """The points, the front marked, and the front in order of cost."""
    width = max(len(p.label) for p in result.points)
    lines = [
        f"decision frontier: {result.cost_metric} (lower is better) vs "
        f"{result.performance_metric} ({result.better} is better)",
        f"  {'design':<{width}}  {result.cost_metric:>16}  {result.performance_metric:>16}  front",
    ]
    for p in result.points:
        mark = "*" if p.on_front else (f"beaten by {p.dominated_by}" if p.dominated_by else "–")
        lines.append(
            f"  {p.label:<{width}}  {_number(p.cost):>16}  {_number(p.performance):>16}  {mark}"
        )
    lines.append("front, cheapest first: " + " -> ".join(result.front_labels()))
    lines += [f"error: {e}" for e in result.errors]
    return "\n".join(lines)
