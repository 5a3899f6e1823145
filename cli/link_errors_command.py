"""``evaluate --link-errors [BER]``: the link-errors section of an evaluation.

One call into `engine.analysis.link_errors`: the post-FEC packet loss per link at a pre-FEC
bit error ratio (default: the catalog's operating BER), the FEC's latency per link and per
path, the packets lost per training step and the time they cost under link-level retry,
go-back-N and selective repeat. Text as a few lines after the evaluation; with ``--json``
the result goes under the key ``link_errors`` of the evaluation's JSON.
"""

from __future__ import annotations

import argparse
import json

from engine.analysis import LinkErrorsResult, link_errors
from engine.catalog.devices import default_catalog
from engine.model.scenario import Scenario


def add_link_errors_option(p: argparse.ArgumentParser) -> None:
    """Add ``--link-errors [BER]`` to the ``evaluate`` parser."""
    p.add_argument(
        "--link-errors",
        nargs="?",
        type=float,
        const=-1.0,
        default=None,
        metavar="BER",
        help="add link errors at this pre-FEC bit error ratio (default: the catalog's "
        "operating BER): post-FEC loss, losses per step, their cost per recovery",
    )


def link_errors_of(args: argparse.Namespace, scenario: Scenario) -> LinkErrorsResult | None:
    """The link-errors result `args` asks for, or None without ``--link-errors``."""
    ber = getattr(args, "link_errors", None)
    if ber is None:
        return None
    return link_errors(scenario, default_catalog(), None if ber < 0 else ber)


def with_link_errors_json(report_json: str, result: LinkErrorsResult) -> str:
    """The evaluation's JSON with the link-errors result under ``link_errors``."""
    data = json.loads(report_json)
    data["link_errors"] = json.loads(result.to_json())
    return json.dumps(data, indent=2, allow_nan=False)


def format_link_errors(r: LinkErrorsResult) -> str:
    """The link-errors section as text lines."""
    limit = "within" if r.within_limit else "ABOVE"
    own = {c.recovery: c for c in r.costs}
    costs = ", ".join(
        f"{c.recovery} +{c.cost_s:.6g} s" + (" (this fabric's)" if c.recovery == r.recovery else "")
        for c in own.values()
    )
    lines = [
        f"link errors: {r.fec} FEC, pre-FEC BER {r.pre_fec_ber:.3g} ({limit} the "
        f"{r.pre_fec_ber_limit:.3g} limit)",
        f"  post-FEC loss {r.packet_loss_per_link:.3g} per {r.packet_bytes:.0f}-byte packet "
        f"per link (codeword {r.codeword_loss:.3g})",
        f"  FEC latency {r.fec_latency_ns:.0f} ns per link, {r.fec_path_latency_ns:.0f} ns over "
        f"the {r.links_per_path} links of the longest path; on every link it adds "
        f"{r.fec_path_latency_added_s * 1e9:.0f} ns to the step's path and "
        f"{r.fec_latency_cost_s:.6g} s to the step (not in the figures above)",
        f"  {r.network_packets_per_step:.3g} network packets per step, "
        f"{r.expected_losses_per_step:.3g} expected losses per step",
        f"  step {r.base_step_s:.6g} s without link errors; cost: {costs}",
        *(f"  note: {n}" for n in r.notes),
    ]
    return "\n".join(lines)
