"""The ``shared`` sub-command: several jobs on one fabric and what they cost each other.

``shared SCENARIO`` times the scenario's `jobs` (each alone, then all at once) through
`engine.analysis.shared_run` and prints one row per job: its placement, servers, slowest
flow alone and shared, time alone and shared, and the slowdown. ``--jobs N`` first splits
the servers into N equal all-reduce jobs (``--placement packed|spread|fragmented``,
``--checkpoint-servers K`` adds a job of K servers writing a checkpoint to K free ones,
``--inference-servers K`` a job of K inference servers answering K free front-ends),
replacing the scenario's jobs; ``--set jobs=[...]`` gives any list. Bad input is a
`ScenarioError` naming the job and field, which the entry point turns into exit 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from engine.analysis import SharedResult, equal_jobs, shared_run
from engine.catalog.devices import default_catalog
from engine.model.jobs import PLACEMENTS

EXIT_OK = 0


def add_shared_command(
    sub: argparse._SubParsersAction,
    scenario_command: Callable[..., argparse.ArgumentParser],
) -> None:
    """Register ``shared`` on `sub`; `scenario_command` adds the shared SCENARIO/--set/--json."""
    p = scenario_command(
        sub,
        "shared",
        run_shared,
        "several jobs on one fabric: each job's time alone and shared, and its slowdown",
    )
    p.add_argument(
        "--jobs", type=int, default=None, metavar="N", help="split the servers into N equal jobs"
    )
    p.add_argument(
        "--placement", choices=PLACEMENTS, default="packed", help="how --jobs places them"
    )
    p.add_argument(
        "--checkpoint-servers",
        type=int,
        default=0,
        metavar="K",
        help="with --jobs: a job of K servers writing a checkpoint to K free servers",
    )
    p.add_argument(
        "--inference-servers",
        type=int,
        default=0,
        metavar="K",
        help="with --jobs: a job of K inference servers taking requests from K free front-ends",
    )


def run_shared(args: argparse.Namespace) -> int:
    """Print each job's time alone and shared as text or JSON."""
    from cli.inputs import load_scenario

    scenario = load_scenario(args.scenario, args.set)
    catalog = default_catalog()
    if args.jobs is not None:
        scenario.jobs = equal_jobs(
            scenario,
            catalog,
            args.jobs,
            args.placement,
            None,
            args.checkpoint_servers,
            args.inference_servers,
        )
    result = shared_run(scenario, catalog)
    print(result.to_json() if args.json else format_shared(result))
    return EXIT_OK


def _servers(servers: tuple[int, ...]) -> str:
    shown = ",".join(str(s) for s in servers[:6])
    return shown + (f",… ({len(servers)})" if len(servers) > 6 else "")


def _rate(rate: float | None) -> str:
    return "NVLink only" if rate is None else f"{rate * 8 / 1e9:,.1f} Gb/s"


def format_shared(result: SharedResult) -> str:
    """One row per job, then the model's notes."""
    head = (
        f"  {'job':<12}{'kind':<11}{'placement':<11}{'GPUs':>7}  {'servers':<22}"
        f"{'flow alone':>14}{'flow shared':>14}{'alone':>12}{'shared':>12}{'slowdown':>10}"
    )
    lines = [
        f"{result.scenario}: {len(result.jobs)} jobs sharing the fabric "
        f"({result.storage_servers} servers free)",
        head,
    ]
    for j in result.jobs:
        lines.append(
            f"  {j.name:<12}{j.kind:<11}{j.placement:<11}{j.gpus:>7,}  {_servers(j.servers):<22}"
            f"{_rate(j.alone_rate_Bps):>14}{_rate(j.shared_rate_Bps):>14}"
            f"{j.alone_s * 1e3:>10.3f}ms{j.shared_s * 1e3:>10.3f}ms{j.slowdown:>9.2f}x"
        )
    lines += [f"  note: {note}" for note in result.notes]
    return "\n".join(lines)
