"""The ``goodput`` sub-command: effective training goodput under part failures.

One call into `engine.analysis` (`goodput`, or `goodput_by_technology` with ``--ib-vs-roce``);
``--reliability FIELD=VALUE`` overrides a figure of the catalog's ``reliability`` profile
(a rate per part-year, a detection or restart time), ``--checkpoint-interval`` sets the work
between checkpoints instead of Young's optimum, ``--hot-spares`` restarts on a standby host. Bad input is a `ScenarioError` naming the
field, which the entry point turns into exit 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from engine.analysis import GoodputResult, goodput, goodput_by_technology
from engine.catalog.devices import default_catalog
from engine.model.errors import Problem, ScenarioError

EXIT_OK = 0


def add_goodput_command(
    sub: argparse._SubParsersAction,
    scenario_command: Callable[..., argparse.ArgumentParser],
) -> None:
    """Register ``goodput`` on `sub`; `scenario_command` adds the shared SCENARIO/--set/--json."""
    p = scenario_command(
        sub,
        "goodput",
        run_goodput,
        "interruptions per day from part failure rates, checkpoint interval, effective goodput",
    )
    p.add_argument(
        "--checkpoint-interval",
        type=float,
        default=None,
        metavar="S",
        help="seconds of work between checkpoints (default: Young's optimum sqrt(2 C MTBI))",
    )
    p.add_argument(
        "--reliability",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="override a catalog reliability figure, e.g. gpu_per_year=0.05 (repeatable)",
    )
    p.add_argument(
        "--hot-spares",
        action="store_true",
        help="restart on a standby host (catalog restart_with_spare_s) instead of rescheduling",
    )
    p.add_argument(
        "--ib-vs-roce",
        action="store_true",
        help="the same topology as InfiniBand and as RoCE, side by side",
    )


def parse_reliability(items: list[str]) -> dict[str, float]:
    """``FIELD=VALUE`` texts as a dict; a malformed one raises `ScenarioError` naming it."""
    figures: dict[str, float] = {}
    for item in items:
        name, sep, text = item.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            figures[name.strip()] = float(text)
        except ValueError:
            raise ScenarioError(
                Problem("--reliability", f"expected FIELD=NUMBER, not {item!r}")
            ) from None
    return figures


def run_goodput(args: argparse.Namespace) -> int:
    """Print the goodput of the scenario (or of its IB and RoCE forms) as text or JSON."""
    from cli.inputs import load_scenario

    scenario = load_scenario(args.scenario, args.set)
    figures = parse_reliability(args.reliability)
    catalog = default_catalog()
    if args.ib_vs_roce:
        comparison = goodput_by_technology(
            scenario, catalog, args.checkpoint_interval, figures, args.hot_spares
        )
        print(comparison.to_json() if args.json else format_goodputs(comparison.results))
        return EXIT_OK
    result = goodput(scenario, catalog, args.checkpoint_interval, figures, args.hot_spares)
    print(result.to_json() if args.json else format_goodputs((result,)))
    return EXIT_OK


def _hours(seconds: float | None) -> str:
    return "never" if seconds is None else f"{seconds / 3600:,.2f} h"


def _minutes(seconds: float | None) -> str:
    return "none" if seconds is None else f"{seconds / 60:,.1f} min"


def format_goodputs(results: tuple[GoodputResult, ...]) -> str:
    """One column per result: parts, interruptions, their cost and the goodput."""
    head = results[0]
    width = 16
    lines = [
        f"{head.scenario}: goodput under failures ({head.gpus:,} GPUs in the job"
        + (", hot spares)" if head.hot_spares else ")"),
        f"  {'':<34}" + "".join(f"{r.technology:>{width}}" for r in results),
    ]

    def row(label: str, values: list[str]) -> None:
        lines.append(f"  {label:<34}" + "".join(f"{v:>{width}}" for v in values))

    for i, part in enumerate(head.parts):
        row(
            f"{part.label} ({part.per_year:g}/y)",
            [f"{r.parts[i].count:,} {r.parts[i].interruptions_per_day:.3f}/d" for r in results],
        )
    row("interruptions per day", [f"{r.interruptions_per_day:.3f}" for r in results])
    row("mean time between interruptions", [_hours(r.mtbi_s) for r in results])
    row("checkpoint write (= reload)", [f"{r.checkpoint_write_s:,.1f} s" for r in results])
    row("detection + restart", [f"{(r.detection_s + r.restart_s) / 60:,.1f} min" for r in results])
    row("checkpoint interval", [_minutes(r.checkpoint_interval_s) for r in results])
    row("lost per interruption", [_minutes(r.lost_per_interruption_s) for r in results])
    row(
        "lost to checkpoints / failures",
        [f"{r.checkpoint_share:.1%} / {r.failure_share:.1%}" for r in results],
    )
    row("throughput (tokens/s)", [f"{r.tokens_per_s:,.0f}" for r in results])
    row("goodput (tokens/s)", [f"{r.goodput_tokens_per_s:,.0f}" for r in results])
    row("goodput share", [f"{r.goodput_share:.1%}" for r in results])
    lines += [f"  note: {note}" for note in head.notes]
    return "\n".join(lines)
