"""Checks of a scenario's calibration: factors a fit could have produced, nothing else.

A calibration scales sourced defaults for one real cluster; a factor of zero, a negative one
or one far outside what a cluster can differ from NCCL's model is a typo or a damaged file,
and is refused with the range it must lie in.
"""

from __future__ import annotations

from engine.model.errors import Problem
from engine.model.scenario import Scenario

#: The calibrated factors, each with the range a fit may return (``engine.analysis.calibrate``).
CALIBRATION_RANGES: dict[str, tuple[float, float]] = {
    "nic_efficiency": (0.05, 1.2),
    "latency_scale": (0.05, 20.0),
    "simple_efficiency": (0.2, 1.2),
}


def check_calibration(scenario: Scenario) -> list[Problem]:
    """Problems of the scenario's calibration section."""
    c = scenario.calibration
    problems = []
    for name, (lo, hi) in CALIBRATION_RANGES.items():
        value = getattr(c, name)
        if not lo <= value <= hi:
            problems.append(
                Problem("calibration", f"{name} must be in [{lo:g}, {hi:g}], not {value:g}", name)
            )
    if c.version < 0:
        problems.append(
            Problem("calibration", f"version must not be negative ({c.version})", "version")
        )
    if c.fit_error is not None and not c.fit_error >= 0:
        problems.append(
            Problem("calibration", f"fit_error must not be negative ({c.fit_error:g})", "fit_error")
        )
    return problems
