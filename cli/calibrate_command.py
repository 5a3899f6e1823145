"""``calibrate SCENARIO --measured FILE...``: fit the collective model to a cluster's own runs.

Prints each fitted factor beside its default and the error of every measured point before
and after the fit; ``--out FILE`` writes the scenario with its calibration as JSON, and a
``library:NAME`` scenario gets the calibration saved as a new version in the library (the
version note names the calibration and its version), so the what-ifs that follow are of
the calibrated cluster.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

from cli.commands import EXIT_OK
from cli.inputs import load_scenario
from engine.analysis import CALIBRATION_FACTORS, CalibrationFit, calibrate, open_library
from engine.analysis.measurements import read_nccl_tests
from engine.library.store import LibraryError
from engine.model.errors import Problem, ScenarioError
from engine.model.scenario import Scenario, to_json


def add_calibrate_options(p: argparse.ArgumentParser) -> None:
    """The options ``calibrate`` adds to the shared SCENARIO, ``--set`` and ``--json``."""
    p.add_argument(
        "--measured",
        nargs="+",
        required=True,
        metavar="FILE",
        help="nccl-tests output files (all_reduce_perf... standard output), one run each",
    )
    p.add_argument("--op", help="the collective of files that do not name it")
    p.add_argument("--name", help="the calibration's name (default: the scenario's)")
    p.add_argument("--out", metavar="FILE", help="write the calibrated scenario as JSON")


def _format(fit: CalibrationFit) -> str:
    c = fit.calibration
    lines = [f"calibration {c.name!r} version {c.version}, fitted on {len(c.measured)} run(s)"]
    lines.append(f"{'factor':<20} {'default':>8} {'fitted':>8}  meaning")
    for name, meaning in CALIBRATION_FACTORS.items():
        lines.append(f"{name:<20} {1.0:>8.3f} {getattr(c, name):>8.3f}  {meaning}")
    lines.append("")
    lines.append(
        f"{'run':<28} {'op':<14} {'ranks':>5} {'bytes':>12} {'measured us':>12} "
        f"{'default':>8} {'fitted':>8}"
    )
    for p in fit.points:
        lines.append(
            f"{p.run[:28]:<28} {p.op:<14} {p.ranks:>5} {p.size_bytes:>12.0f} "
            f"{p.measured_s * 1e6:>12.2f} {p.default_error:>+8.1%} {p.fitted_error:>+8.1%}"
        )
    lines.append(
        f"median absolute error: {fit.default_median_error:.1%} with the defaults, "
        f"{fit.fitted_median_error:.1%} calibrated ({fit.evaluations} model evaluations)"
    )
    return "\n".join(lines)


def _save_to_library(ref: str, scenario: Scenario) -> str:
    """Save the calibrated scenario as a new version of library scenario `ref`."""
    name = ref.removeprefix("library:")
    c = scenario.calibration
    try:
        lib = open_library(os.environ.get("FABRICLAB_LIBRARY"), create=False)
        try:
            version = lib.save(scenario, note=f"calibration {c.name} v{c.version}", name=name)
            return f"saved {name} version {version} in {lib.path}"
        finally:
            lib.close()
    except LibraryError as exc:
        raise ScenarioError(Problem("library", f"cannot save the calibration: {exc}")) from None


def run_calibrate(args: argparse.Namespace) -> int:
    """Fit the calibration of a scenario to measured files and report (and save) it."""
    scenario = load_scenario(args.scenario, args.set)
    runs = [read_nccl_tests(path, args.op) for path in args.measured]
    fit = calibrate(scenario, runs, name=args.name or "")
    calibrated = replace(scenario, calibration=fit.calibration)
    saved = []
    if args.out:
        try:
            Path(args.out).write_text(to_json(calibrated) + "\n", encoding="utf-8")
        except OSError as exc:
            raise ScenarioError(Problem("--out", f"cannot write {args.out}: {exc}")) from None
        saved.append(f"wrote {args.out}")
    if args.scenario.startswith("library:"):
        saved.append(_save_to_library(args.scenario, calibrated))
    if args.json:
        print(json.dumps({**fit.to_dict(), "saved": saved}, indent=2))
    else:
        print(_format(fit))
        for line in saved:
            print(line, file=sys.stderr)
    return EXIT_OK
