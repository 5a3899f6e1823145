"""``export`` and ``import``: a scenario's fabric and traffic out to the simulators' open
formats, and a topology file in as a grouped scenario.

``export SCENARIO --format ns3|htsim|astra|graphml OUT`` writes the files (ns3: a folder of
topology.txt and flow.txt) and lists them. ``import FILE`` reads GraphML or a CSV link list
and prints the scenario JSON, or writes it to ``--out FILE`` or stores it in the library
(``--library``). A file that cannot be read is refused with its name and line; nothing
prints a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys

from cli.commands import EXIT_INVALID, EXIT_OK
from cli.inputs import load_scenario
from engine.analysis import EXPORT_FORMATS, export_fabric, import_topology, open_library
from engine.catalog.devices import default_catalog
from engine.library.store import LibraryError
from engine.model.errors import ScenarioError
from engine.model.scenario import Scenario, to_json

_DEFAULT_LIBRARY = "-"  # --library without a path: the user's library


def add_format_commands(sub, scenario_command) -> None:
    """Register ``export`` and ``import`` on the sub-command parser `sub`;
    `scenario_command` adds a command with the shared SCENARIO/--set/--json options."""
    p = scenario_command(
        sub,
        "export",
        run_export,
        "write the fabric and traffic for ns-3, htsim, ASTRA-sim or graph tools",
    )
    p.add_argument("--format", required=True, choices=EXPORT_FORMATS, help="the format to write")
    p.add_argument("out", help="output file (ns3: a folder for topology.txt and flow.txt)")
    p.add_argument(
        "--simai",
        action="store_true",
        help="ns3: SimAI's first line (GPUs per server, NVLink switches, GPU type)",
    )
    p = sub.add_parser(
        "import", help="a topology (GraphML, or CSV node,port,node,port,rate) as a scenario"
    )
    p.add_argument("file", help="a .graphml or .csv topology file")
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--out", metavar="FILE", help="write the scenario JSON here (default: print it)"
    )
    where.add_argument(
        "--library",
        nargs="?",
        const=_DEFAULT_LIBRARY,
        metavar="PATH",
        help="store it in the library (default: the user's library)",
    )
    p.add_argument(
        "--switch", metavar="MODEL", help="catalog model of the switches where the file names none"
    )
    p.add_argument("--name", help="the scenario's name (default: the file's own, or its file name)")
    p.set_defaults(func=run_import)


def run_export(args: argparse.Namespace) -> int:
    """Write the scenario in the chosen format (``export``)."""
    scenario = load_scenario(args.scenario, args.set)
    try:
        paths = export_fabric(scenario, args.format, args.out, default_catalog(), args.simai)
    except OSError as exc:
        print(f"cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_INVALID
    if args.json:
        print(json.dumps({"format": args.format, "files": [str(p) for p in paths]}, indent=2))
    else:
        for path in paths:
            print(f"wrote {path}")
    return EXIT_OK


def run_import(args: argparse.Namespace) -> int:
    """Read a topology file into a scenario and print, write or store it (``import``)."""
    try:
        scenario = import_topology(args.file, default_catalog(), args.switch)
    except ScenarioError as exc:
        print(f"cannot import {args.file}:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return EXIT_INVALID
    if args.name:
        scenario.metadata.name = args.name
    print(_summary(scenario), file=sys.stderr)
    if args.library is not None:
        return _store(scenario, None if args.library == _DEFAULT_LIBRARY else args.library)
    if args.out:
        try:
            with open(args.out, "w", encoding="utf-8") as f:
                f.write(to_json(scenario) + "\n")
        except OSError as exc:
            print(f"cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_INVALID
        print(f"wrote {args.out}")
    else:
        print(to_json(scenario))
    return EXIT_OK


def _summary(scenario: Scenario) -> str:
    groups = ", ".join(f"{g.count} x {g.model} ({g.id})" for g in scenario.groups)
    bundles = ", ".join(
        f"{b.a}-{b.b} {b.pattern}"
        + (f"/{b.blocks}" if b.blocks > 1 else "")
        + (f" x{b.links_per_pair}" if b.links_per_pair > 1 else "")
        + f" at {b.speed_gbps:g}G"
        for b in scenario.bundles
    )
    return f"{scenario.metadata.name}: {groups}; bundles {bundles}"


def _store(scenario: Scenario, path: str | None) -> int:
    try:
        lib = open_library(path)
    except LibraryError as exc:
        print(f"cannot open the library: {exc}", file=sys.stderr)
        return EXIT_INVALID
    try:
        if lib.message:
            print(lib.message, file=sys.stderr)
        version = lib.save(scenario, note="imported")
    except LibraryError as exc:
        print(f"cannot store {scenario.metadata.name} in {lib.path}: {exc}", file=sys.stderr)
        return EXIT_INVALID
    finally:
        lib.close()
    print(f"stored {scenario.metadata.name} (version {version}) in {lib.path}")
    return EXIT_OK
