"""The argument parser of every headless sub-command, and the entry that runs one.

``fabriclab presets``, ``validate``, ``evaluate``, ``cost``, ``sweep``, ``compare``,
``train``, ``collective``, ``transport``, ``goodput``, ``frontier``, ``library``, ``export`` and ``import`` for open
formats, and ``import-nccl-tests``, ``measurements`` and ``calibrate`` for measured runs. A broken scenario prints every problem (element,
field, what to do) and exits 2; a bad command line exits 2 as well; nothing prints a
traceback at the user.
"""

from __future__ import annotations

import argparse
import re
import sys

from cli import commands as cmd
from cli.calibrate_command import add_calibrate_options, run_calibrate
from cli.commands import EXIT_INVALID, EXIT_OK
from cli.crash import silence_stdout, write_crash_report
from cli.formats_command import add_format_commands
from cli.frontier_command import add_frontier_command
from cli.goodput_command import add_goodput_command
from cli.link_errors_command import add_link_errors_option
from cli.output_stream import GuardedStream, OutputError, say
from cli.shared_command import add_shared_command
from cli.template_command import add_template_command
from cli.warm_up_command import add_warm_up_command
from engine.analysis import (
    METRICS,
    OPS,
    TRANSPORT_KINDS,
    TransportWorkload,
    parse_bytes,
    set_memory_limit,
)
from engine.catalog.errors import CatalogError
from engine.model.errors import ScenarioError
from engine.model.sizes import parse_size

EXIT_INTERNAL = 70  # EX_SOFTWARE of sysexits.h: a bug, not bad input
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl+C
EXIT_OUTPUT = 74  # EX_IOERR of sysexits.h: the answer could not be written


def _command(
    sub,
    name: str,
    func,
    text: str,
    json_help: str = "print JSON",
    scenario: bool = True,
    csv: bool = False,
    aliases: tuple[str, ...] = (),
) -> argparse.ArgumentParser:
    """A sub-command with the options every scenario command shares (SCENARIO, --set, --json)."""
    p = sub.add_parser(name, help=text, aliases=list(aliases))
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


def _memory(text: str) -> int:
    """``--max-memory`` in bytes (argparse turns the ValueError into a usage error)."""
    try:
        return parse_bytes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _workload(text: str) -> tuple[str, int | None]:
    """``--workload``: a transport workload kind, ``incast:N`` giving the senders of N:1."""
    kind, _, count = text.strip().partition(":")
    if kind in TRANSPORT_KINDS and not count:
        return kind, None
    if kind == "incast" and count.isdigit() and int(count) >= 1:
        return kind, int(count)
    raise argparse.ArgumentTypeError(
        f"unknown workload {text!r}; use {', '.join(TRANSPORT_KINDS)} or incast:N (N:1)"
    )


def _size(text: str) -> float:
    """``--bytes`` in bytes, binary units (64M, 1G)."""
    try:
        return parse_size(text)
    except ScenarioError as exc:
        raise argparse.ArgumentTypeError(exc.brief()) from None


_PER_SECOND = {"": 1.0, "s": 1.0, "ms": 1e3, "us": 1e6, "µs": 1e6, "ns": 1e9}


def _duration(text: str) -> float:
    """``--horizon`` in seconds: ``0.01``, ``10ms``, ``500us`` (0: run to the end)."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(s|ms|us|µs|ns)?\s*", text)
    if match is None:
        raise argparse.ArgumentTypeError(f"cannot read {text!r} as a time (e.g. 10ms, 500us, 0.01)")
    return float(match.group(1)) / _PER_SECOND[match.group(2) or ""]


def _transport_options(p: argparse.ArgumentParser) -> None:
    """The options of ``transport``: the workload, as `TransportWorkload` has it."""
    d = TransportWorkload()
    p.add_argument(
        "--workload",
        type=_workload,
        default=(d.kind, None),
        metavar="KIND",
        help=f"{', '.join(TRANSPORT_KINDS)}; incast:N for N:1 (default {d.kind})",
    )
    p.add_argument(
        "--senders", type=int, metavar="N", help=f"incast senders, N:1 (default {d.senders})"
    )
    p.add_argument(
        "--ranks",
        type=int,
        default=d.ranks,
        metavar="N",
        help="all-to-all, collective: the first N GPUs (0: all)",
    )
    p.add_argument("--op", choices=OPS, default=d.op, help=f"collective (default {d.op})")
    p.add_argument(
        "--algorithm", default=d.algorithm, help=f"its algorithm (default {d.algorithm})"
    )
    p.add_argument(
        "--bytes",
        type=_size,
        default=d.bytes_per_flow,
        metavar="SIZE",
        help=f"bytes per flow, e.g. 8M (default {d.bytes_per_flow / 2**20:g}M)",
    )
    p.add_argument(
        "--victim", action="store_true", help="incast: add a flow sharing the first sender's uplink"
    )
    p.add_argument("--seed", type=int, default=d.seed, help="permutation seed (default 0)")
    p.add_argument(
        "--horizon",
        type=_duration,
        default=d.horizon_s,
        metavar="TIME",
        help="stop at this simulated time, e.g. 10ms or 0.01 (default: when every flow is done)",
    )


def _transport_settings_help() -> str:
    """What ``transport --help`` says of the settings that change the mechanisms, with the
    catalog's DCQCN profiles by name."""
    from engine.catalog.devices import default_catalog

    profiles = sorted(k for k in default_catalog().technologies if k.startswith("dcqcn-"))
    return (
        "transport settings (--set PATH=VALUE): transport.dcqcn_profile=NAME runs a catalog "
        f"DCQCN profile ({', '.join(profiles)}; default: the NICs' own); "
        "transport.dcqcn_g_reading=retention|gain, transport.dcqcn_byte_unit_bytes=1|64, "
        "transport.dcqcn_byte_counter=false and transport.dcqcn_cnp_pacing=flow|port read "
        "NVIDIA's firmware registers as the other public sources do (docs/transport.md, 'The readings'); transport.dcqcn=false, "
        "transport.pfc=false, transport.ib_cc=true, transport.ecn_kmin_bytes, ecn_kmax_bytes, "
        "ecn_pmax, pfc_xoff_bytes and port_buffer_bytes set one mechanism each; "
        "transport.model=ideal runs the bound instead: max-min fair rates, no queue, pause, "
        "mark or drop."
    )


def _traffic_option(p: argparse.ArgumentParser) -> None:
    """``--traffic FILE``: a traffic matrix run as the workload (evaluate, transport)."""
    p.add_argument(
        "--traffic",
        metavar="FILE",
        help="run a traffic matrix instead: CSV src,dst,bytes[,start_s] or an htsim .cm",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of all headless sub-commands."""
    parser = argparse.ArgumentParser(
        prog="fabriclab", description="FabricLab: what-if explorer for AI cluster networks"
    )
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an internal error"
    )
    parser.add_argument(
        "--max-memory",
        type=_memory,
        metavar="SIZE",
        help="refuse scenarios estimated to need more, e.g. 8G (default: the memory available)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("presets", help="list the shipped preset scenarios")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd.run_presets)
    _command(sub, "validate", cmd.run_validate, "check a scenario and report every problem")
    p = _command(
        sub,
        "evaluate",
        cmd.run_evaluate,
        "topology, permutation test, collective and training step",
    )
    _traffic_option(p)
    p.add_argument(
        "--parts",
        default="permutation,collective,training",
        help="comma-separated probes: permutation, collective, training, cost (default: the first three)",
    )
    add_link_errors_option(p)
    p = _command(
        sub, "cost", cmd.run_cost, "bill of materials, capital cost, power and energy cost"
    )
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
    p = _command(
        sub, "sweep", cmd.run_sweep, "vary one or two fields and collect a metric", csv=True
    )
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
        cmd.run_compare,
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
    p.add_argument(
        "--uncertainty",
        action="store_true",
        help="the collective busbw ratio b / a as a range over the inputs no source pins "
        "down (DCQCN register readings, ECN profile, Quantum-2's buffer), with each one's "
        "swing, largest first",
    )
    p = _command(
        sub, "train", cmd.run_train, "one training step: compute, communication per kind, MFU"
    )
    p.add_argument(
        "--model", help="model preset (gpt3-175b, llama3-70b, llama3-405b, mixtral-8x7b)"
    )
    p = _command(
        sub,
        "collective",
        cmd.run_collective,
        "time a collective over message sizes (nccl-tests style)",
        json_help="print a JSON list of rows",
    )
    p.add_argument("--op", choices=OPS, help="collective (default: the scenario's)")
    p.add_argument(
        "--algo", help="algorithm, or auto (NCCL's pick per size, from its tuner's model)"
    )
    p.add_argument("--protocol", choices=["auto", "ll", "ll128", "simple"], help="NCCL protocol")
    p.add_argument("--ranks", type=int, help="the first N GPUs in placement order (8 = one server)")
    p.add_argument(
        "--sizes", default="8:16G", help="MIN:MAX bytes, e.g. 8:16G or 8G:8G (default 8:16G)"
    )
    p.add_argument("--factor", type=float, default=4.0, help="step between sizes (default 4)")
    p = _command(
        sub,
        "transport",
        cmd.run_transport,
        "queues, pauses, marks and rates of one traffic pattern (credits, PFC, ECN, DCQCN)",
    )
    _transport_options(p)
    _traffic_option(p)
    p.epilog = _transport_settings_help()
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
    p.set_defaults(func=cmd.run_library)
    _measurement_commands(sub)
    p = _command(
        sub,
        "calibrate",
        run_calibrate,
        "fit NIC efficiency, NCCL latency and Simple efficiency to measured nccl-tests runs",
        json_help="print the fit as JSON",
    )
    add_calibrate_options(p)
    add_format_commands(sub, _command)
    add_template_command(sub)
    add_warm_up_command(sub)
    add_goodput_command(sub, _command)
    add_frontier_command(sub, _command)
    add_shared_command(sub, _command)
    return parser


def _measurement_commands(sub) -> None:
    """``import-nccl-tests FILE`` and ``measurements``: measured runs in the library."""
    library_help = "library file (default: the user's library)"
    p = sub.add_parser(
        "import-nccl-tests",
        help="store a measured nccl-tests run (the output of all_reduce_perf...) in the library",
    )
    p.add_argument("file", help="the saved standard output of one nccl-tests program")
    p.add_argument(
        "--op",
        help="the collective when the output does not name it (all-reduce or all_reduce_perf...)",
    )
    p.add_argument("--name", help="its name in the library (default: the file's name)")
    p.add_argument("--scenario", metavar="NAME", help="the library scenario it measures")
    p.add_argument("--library", metavar="PATH", help=library_help)
    p.add_argument("--json", action="store_true", help="print the stored run as JSON")
    p.set_defaults(func=cmd.run_import_nccl_tests)
    p = sub.add_parser("measurements", help="list the measured runs in the library")
    p.add_argument("--library", metavar="PATH", help=library_help)
    p.add_argument("--json", action="store_true", help="print JSON (every point of each run)")
    p.set_defaults(func=cmd.run_measurements)


def main(argv: list[str] | None = None) -> int:
    """Run one sub-command; returns the process exit code.

    Problems with the input exit 2 with every problem listed; a closed output pipe ends
    quietly; an answer that cannot be written (a full disk) says so in one line (exit
    74); messages to a broken standard error are dropped; anything unexpected prints one line and the path of a saved report (exit 70),
    or the traceback with ``--debug``.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    set_memory_limit(args.max_memory)
    stdout = sys.stdout
    sys.stdout = GuardedStream(stdout)
    try:
        code = _run(args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        silence_stdout()
        return EXIT_OK
    except OutputError as exc:
        silence_stdout()  # what is still buffered would fail again at exit
        say(f"cannot write the output: {exc.strerror} (errno {exc.errno})")
        return EXIT_OUTPUT
    except KeyboardInterrupt:
        say("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:
        if args.debug:
            raise
        path = write_crash_report(exc, argv)
        where = f"the details are in {path}" if path else "no report could be saved"
        say(
            f"internal error: {type(exc).__name__}: {exc}\n  {where}; "
            "please attach it to a bug report (or run again with --debug)"
        )
        return EXIT_INTERNAL
    finally:
        if sys.stdout.__class__ is GuardedStream:
            sys.stdout = stdout


def _run(args: argparse.Namespace) -> int:
    """The sub-command, with the input errors every command can raise turned into messages."""
    try:
        return args.func(args)
    except ScenarioError as exc:
        say(f"{len(exc.problems)} problem(s) in the scenario:")
        for problem in exc.problems:
            say(f"  {problem}")
        return EXIT_INVALID
    except CatalogError as exc:
        say(f"catalog error: {exc}")
        return EXIT_INVALID
    except MemoryError as exc:
        say(f"too large: {exc}")
        return EXIT_INVALID
