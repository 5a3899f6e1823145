"""The sub-commands: each reads its arguments, makes one call into `engine.analysis` and
prints the answer as text, JSON (the typed result's own `to_json`) or CSV.

``import-nccl-tests`` and ``measurements`` store and list measured runs in the library; they
word their own refusals ("cannot import FILE: ...") since what is wrong is a file or the
library, not a scenario.
"""

from __future__ import annotations

import argparse
import json
import sys

from cli.formatting import (
    format_collective,
    format_cost,
    format_measurement,
    format_report,
    format_training,
    format_transport,
    number,
)
from cli.inputs import load_scenario, with_traffic
from cli.link_errors_command import format_link_errors, link_errors_of, with_link_errors_json
from cli.progress import stage_progress
from engine.analysis import (
    PRESETS,
    Measurement,
    NcclTestsRun,
    TransportWorkload,
    collective_run,
    compare,
    convert_technology,
    cost_run,
    default_executor,
    describe_verdict_range,
    evaluate,
    fabric_size,
    measurement_run,
    open_library,
    parse_values,
    read_nccl_tests,
    store_run,
    sweep,
    training_run,
    transport_study,
    verdict_range,
)
from engine.catalog.devices import default_catalog
from engine.library.store import LibraryError
from engine.model.errors import Problem, ScenarioError
from engine.model.scenario import to_json
from engine.model.sizes import parse_sizes

EXIT_OK, EXIT_INVALID = 0, 2
DASK_CONNECT_TIMEOUT_S = 5.0  # a scheduler that does not answer by then is named as unreachable


def run_presets(args: argparse.Namespace) -> int:
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


def run_validate(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario, args.set)
    size = fabric_size(scenario, default_catalog())
    print(
        f"{scenario.metadata.name}: valid ({size['gpus']:,} GPUs, {size['directed_links']:,} directed links)"
    )
    return EXIT_OK


def run_evaluate(args: argparse.Namespace) -> int:
    scenario = with_traffic(load_scenario(args.scenario, args.set), args.traffic)
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
    with stage_progress() as progress:
        report = evaluate(scenario, default_catalog(), parts, progress=progress, side_by_side=True)
    errors = link_errors_of(args, scenario)
    traffic = scenario.workload.kind == "traffic"
    if args.json:
        print(
            report.to_json() if errors is None else with_link_errors_json(report.to_json(), errors)
        )
    else:
        print(format_report(report, traffic))
        if errors is not None:
            print(format_link_errors(errors))
    return EXIT_OK


def run_collective(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario, args.set)
    sizes = parse_sizes(args.sizes, args.factor)
    result = collective_run(
        scenario, default_catalog(), sizes, args.op, args.ranks, args.algo, args.protocol
    )
    print(result.rows_json() if args.json else format_collective(result))
    return EXIT_OK


def run_train(args: argparse.Namespace) -> int:
    overrides = list(args.set)
    if args.model:
        overrides.insert(0, f"workload.training.model={args.model}")
    scenario = load_scenario(args.scenario, overrides)
    step = training_run(scenario, default_catalog())
    print(step.to_json() if args.json else format_training(step))
    return EXIT_OK


def run_transport(args: argparse.Namespace) -> int:
    """One workload through the scenario's transport mechanisms (``transport``)."""
    scenario = with_traffic(load_scenario(args.scenario, args.set), args.traffic)
    kind, count = ("traffic", None) if args.traffic else args.workload
    if count is not None and args.senders is not None and count != args.senders:
        raise ScenarioError(
            Problem("--senders", f"--workload incast:{count} and --senders {args.senders} disagree")
        )
    senders = count if count is not None else args.senders
    workload = TransportWorkload(
        kind=kind,
        senders=TransportWorkload.senders if senders is None else senders,
        ranks=args.ranks,
        op=args.op,
        algorithm=args.algorithm,
        bytes_per_flow=args.bytes,
        victim=args.victim,
        seed=args.seed,
        horizon_s=args.horizon,
    )
    with stage_progress() as progress:
        study = transport_study(scenario, workload, default_catalog(), progress)
    print(study.to_json() if args.json else format_transport(study))
    return EXIT_OK


def run_cost(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario, args.set)
    report = cost_run(
        scenario,
        default_catalog(),
        years=args.years,
        usd_per_kwh=args.usd_per_kwh,
        pue=args.pue,
    )
    if args.json:
        print(report.to_json())
        return EXIT_OK
    print(format_cost(report, scenario.metadata.name))
    return EXIT_OK


def run_sweep(args: argparse.Namespace) -> int:
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
        try:
            client = Client(args.dask, timeout=DASK_CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ScenarioError(
                Problem(
                    "--dask",
                    f"cannot reach a dask scheduler at {args.dask!r} within "
                    f"{DASK_CONNECT_TIMEOUT_S:g} s ({type(exc).__name__}: {exc})",
                )
            ) from None
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
        print(result.to_json())
    else:
        columns = result.table()
        names = list(columns)
        print("  ".join(f"{n:>24}" for n in names))
        for i in range(len(result.points)):
            print("  ".join(f"{columns[n][i]!s:>24}" for n in names))
        for i, err in result.errors.items():
            print(f"point {i}: {err}", file=sys.stderr)
    return EXIT_OK if not result.errors else EXIT_INVALID


def run_compare(args: argparse.Namespace) -> int:
    a = load_scenario(args.scenario_a, args.set)
    if args.scenario_b:
        b = load_scenario(args.scenario_b, args.set)
    elif args.convert:
        b = convert_technology(a, args.convert, default_catalog())
    else:
        raise ScenarioError(
            Problem("compare", "give a second scenario or --convert infiniband|roce")
        )
    if args.uncertainty:
        band = verdict_range(a, b, default_catalog())
        print(band.to_json() if args.json else describe_verdict_range(band))
        return EXIT_OK
    parts = tuple(p.strip() for p in args.parts.split(",") if p.strip())
    result = compare(a, b, default_catalog(), parts)
    if args.json:
        print(result.to_json())
        return EXIT_OK
    print(f"{'':<30}{result.a[:24]:>26}{result.b[:24]:>26}{'b / a':>10}")
    for row in result.rows:
        ratio = "" if row.b_over_a is None else f"{row.b_over_a:.3f}"
        print(f"{row.metric:<30}{number(row.a):>26}{number(row.b):>26}{ratio:>10}")
    return EXIT_OK


def run_library(args: argparse.Namespace) -> int:
    try:
        # only import writes; the other verbs read, and never create a library to do it
        lib = open_library(args.path, create=args.action == "import")
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


def _refused(head: str, exc: ScenarioError | LibraryError) -> int:
    """Print why a measurement command refused (every problem of a file, or the library's
    one message) and return the exit code of bad input."""
    if isinstance(exc, ScenarioError):
        print(f"{head}:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
    else:
        print(f"{head}: {exc}", file=sys.stderr)
    return EXIT_INVALID


def _measurement_json(measurement: Measurement, run: NcclTestsRun) -> dict:
    """A stored run as ``--json`` prints it: the library's fields, points, and peak busbw."""
    return {**measurement.to_dict(), "peak_busbw_GBps": run.peak_busbw_GBps}


def run_import_nccl_tests(args: argparse.Namespace) -> int:
    """Read an nccl-tests output file and store the run in the library (``import-nccl-tests``).

    The file is read first, so a file that is not a run never creates a library.
    """
    try:
        run = read_nccl_tests(args.file, args.op)
    except ScenarioError as exc:
        return _refused(f"cannot import {args.file}", exc)
    try:
        lib = open_library(args.library)
    except LibraryError as exc:
        return _refused("cannot open the library", exc)
    try:
        if lib.message:
            print(lib.message, file=sys.stderr)
        stored = store_run(lib, run, args.name, args.scenario)
    except LibraryError as exc:
        return _refused(f"cannot store {args.file} in {lib.path}", exc)
    finally:
        lib.close()
    if args.json:
        print(json.dumps(_measurement_json(stored, run), indent=2))
    else:
        print(f"stored in {lib.path}\n{format_measurement(stored, run)}")
    return EXIT_OK


def run_measurements(args: argparse.Namespace) -> int:
    """List the measured runs of the library (``measurements``); never creates a library."""
    try:
        lib = open_library(args.library, create=False, read_only=True)
    except LibraryError as exc:
        return _refused("cannot open the library", exc)
    try:
        stored = [(m, measurement_run(m)) for m in lib.measurements()]
    except LibraryError as exc:
        return _refused(f"cannot read the measurements of {lib.path}", exc)
    finally:
        lib.close()
    if args.json:
        print(json.dumps([_measurement_json(m, run) for m, run in stored], indent=2))
        return EXIT_OK
    if not stored:
        print(
            f"no measurements in {lib.path} (add one with import-nccl-tests FILE)", file=sys.stderr
        )
        return EXIT_OK
    print(
        f"{'name':<32} {'op':<14} {'ranks':>6} {'points':>6} {'peak busbw':>11}  "
        f"{'imported':<19}  {'scenario':<24} gpu"
    )
    for m, run in stored:
        print(
            f"{m.name:<32} {run.op:<14} {run.ranks:>6} {len(run.points):>6} "
            f"{run.peak_busbw_GBps:>6.2f} GB/s  {m.imported[:19]:<19}  {m.scenario or '-':<24} "
            f"{run.gpu}"
        )
    return EXIT_OK
