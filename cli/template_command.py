"""``template``: a scenario from a topology template, as the app's New from template… makes it.

``template NAME --gpus N --server MODEL --switch MODEL [--oversubscription X] [--planes P]
[--speed GBPS] [--ethernet-pod SWITCH] [--storage-nodes N] [--out FILE]`` prints the
scenario JSON (or writes it to FILE), ready for ``validate``, ``evaluate`` and the other
commands. A size or part the template cannot build
is refused with the template's message (exit status 2), never a traceback.
"""

from __future__ import annotations

import argparse
import sys

from cli.commands import EXIT_INVALID, EXIT_OK
from engine.analysis import MIXED_PODS, OVERSUBSCRIBED, PLANED, TEMPLATES, generate
from engine.catalog.devices import default_catalog
from engine.model.errors import ScenarioError
from engine.model.scenario import to_json


def add_template_command(sub: argparse._SubParsersAction) -> None:
    """Register ``template`` on the sub-command parser `sub`."""
    p = sub.add_parser("template", help="write a scenario from a topology template")
    p.add_argument("name", choices=TEMPLATES, help="the template")
    p.add_argument("--gpus", type=int, default=1024, help="GPUs (default 1024)")
    p.add_argument(
        "--server",
        default=None,
        help="server model (default gb200-nvl72 for nvl72, dgx-h100 otherwise)",
    )
    p.add_argument("--switch", default="qm9700", help="switch model (default qm9700)")
    p.add_argument(
        "--oversubscription",
        type=float,
        default=None,
        help=f"leaf down:up ratio, for {', '.join(OVERSUBSCRIBED)} (default 1)",
    )
    p.add_argument("--planes", type=int, default=None, help=f"planes, for {', '.join(PLANED)}")
    p.add_argument("--speed", type=float, default=None, help="port speed in Gb/s")
    p.add_argument(
        "--ethernet-pod",
        default=None,
        metavar="SWITCH",
        help=f"for {', '.join(MIXED_PODS)}: build the last pod of this Ethernet switch (RoCE), "
        "its spines straight on the Ethernet core",
    )
    p.add_argument(
        "--storage-nodes",
        type=int,
        default=0,
        help="storage nodes on a storage network of their own beside the fabric, reached "
        "through the servers' front-end ports (default 0: none)",
    )
    p.add_argument("--out", default=None, help="write the JSON to this file")
    p.set_defaults(func=run_template)


def run_template(args: argparse.Namespace) -> int:
    """Generate the template's scenario and print or write its JSON."""
    params: dict = {
        "gpus": args.gpus,
        "server": args.server or ("gb200-nvl72" if args.name == "nvl72" else "dgx-h100"),
        "switch": args.switch,
        "speed_gbps": args.speed,
        "catalog": default_catalog(),
        "storage_nodes": args.storage_nodes,
    }
    for option, key, allowed in (
        (args.oversubscription, "oversubscription", OVERSUBSCRIBED),
        (args.planes, "planes", PLANED),
        (args.ethernet_pod, "ethernet_pod", MIXED_PODS),
    ):
        if option is None:
            continue
        if args.name not in allowed:
            option_name = key.replace("_", "-")
            print(f"error: template {args.name} takes no --{option_name}", file=sys.stderr)
            return EXIT_INVALID
        params[key] = option
    try:
        scenario = generate(args.name, **params)
    except ScenarioError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return EXIT_INVALID
    text = to_json(scenario)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        print(f"wrote {args.out}: {scenario.metadata.description}")
    else:
        print(text)
    return EXIT_OK
