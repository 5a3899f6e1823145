"""Message sizes as people write them (``8``, ``64K``, ``8G``) and size ranges (``8:8G``).

The command line's ``--sizes`` and the scenario's ``workload.sizes`` (the sizes the
collective curve covers in the app) read the same text: binary units as nccl-tests prints
them, a range ``MIN:MAX`` in steps of a factor, optionally ``MIN:MAX:FACTOR``.
"""

from __future__ import annotations

import re

import numpy as np

from engine.model.errors import Problem, ScenarioError
from engine.model.scenario import Workload

_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
MAX_POINTS = 64  # a curve of more points costs more than it shows


def parse_size(text: str, where: str = "--sizes") -> float:
    """Bytes from text like ``8``, ``64K``, ``8G``, ``8GiB`` (binary units, as nccl-tests)."""
    match = re.fullmatch(
        r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper()
    )
    if match is None:
        raise ScenarioError(Problem(where, f"cannot read {text!r} as a size (e.g. 8, 64K, 8G)"))
    value = float(match.group(1)) * _UNITS[match.group(2)]
    if value <= 0:
        raise ScenarioError(Problem(where, f"sizes must be positive, not {text!r}"))
    return value


def parse_sizes(spec: str, factor: float = 2.0, where: str = "--sizes") -> np.ndarray:
    """Sizes from ``MIN:MAX`` in steps of `factor` (``8G:8G`` is one size); a third part
    ``MIN:MAX:FACTOR`` gives the factor in the text."""
    parts = spec.split(":")
    if len(parts) > 3:
        raise ScenarioError(Problem(where, f"{spec!r}: write MIN:MAX or MIN:MAX:FACTOR"))
    lo_text, hi_text = parts[0], parts[1] if len(parts) > 1 else ""
    if len(parts) == 3:
        try:
            factor = float(parts[2])
        except ValueError:
            raise ScenarioError(
                Problem(where, f"cannot read the step factor {parts[2]!r} as a number")
            ) from None
    lo = parse_size(lo_text, where)
    hi = parse_size(hi_text, where) if hi_text else lo
    if hi < lo:
        raise ScenarioError(
            Problem(where, f"the largest size ({hi_text}) is below the smallest ({lo_text})")
        )
    if not factor > 1:
        raise ScenarioError(Problem(where, f"the step factor must exceed 1, not {factor:g}"))
    count = int(np.floor(np.log(hi / lo) / np.log(factor) + 1e-9)) + 1
    return lo * factor ** np.arange(count)


def curve_sizes(spec: str, default: np.ndarray) -> np.ndarray:
    """The sizes of the app's collective curve: `default` for an empty `spec`, else the
    range it writes in steps of 4 (or its own factor)."""
    if not spec.strip():
        return default
    sizes = parse_sizes(spec, 4.0, "workload.sizes")
    if sizes.shape[0] > MAX_POINTS:
        raise ScenarioError(
            Problem(
                "workload.sizes",
                f"{spec!r} makes {sizes.shape[0]} sizes; at most {MAX_POINTS} (use a larger "
                "step factor, MIN:MAX:FACTOR)",
            )
        )
    return sizes


def check_sizes(workload: Workload) -> list[Problem]:
    """What is wrong with a workload's sizes: its message size and its curve's range."""
    problems = []
    if not workload.message_bytes >= 1:
        problems.append(
            Problem(
                "workload",
                f"message_bytes must be at least one byte, not {workload.message_bytes:g}",
                "message_bytes",
            )
        )
    try:
        curve_sizes(workload.sizes, np.zeros(0))
    except ScenarioError as exc:
        problems += [Problem("workload", f"sizes: {p.message}", "sizes") for p in exc.problems]
    return problems
