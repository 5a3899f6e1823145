"""What every reader shares: refusals that name the file and line, and the numbers and
units the simulators' text formats write (``400Gbps``, ``0.0005ms``).

A reader never raises a bare exception at a user: anything it cannot read is a
`ScenarioError` whose problem is located ``FILE:LINE``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from engine.model.errors import Problem, ScenarioError

_RATE = re.compile(r"^([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)([KMGT]?)bps$", re.IGNORECASE)
_RATE_SCALE = {"": 1e-9, "k": 1e-6, "m": 1e-3, "g": 1.0, "t": 1e3}
_TIME = re.compile(r"^([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)(s|ms|us|ns|ps)$")
_TIME_NS = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0, "ps": 1e-3}


def refuse(source: str, line: int | None, message: str) -> ScenarioError:
    """The error for what is wrong at `line` (1-based; ``None``: the whole file) of `source`."""
    where = source if line is None else f"{source}:{line}"
    return ScenarioError(Problem(where, message))


def content_lines(text: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, whitespace-separated fields) of each line that is not blank or a
    ``#`` comment."""
    for number, raw in enumerate(text.splitlines(), start=1):
        fields = raw.split()
        if fields and not fields[0].startswith("#"):
            yield number, fields


def whole(text: str, source: str, line: int, what: str, minimum: int = 0) -> int:
    """`text` as a whole number of at least `minimum`, else a refusal naming `what`."""
    try:
        value = int(text)
    except ValueError:
        raise refuse(source, line, f"{what} must be a whole number, not {text!r}") from None
    if value < minimum:
        raise refuse(source, line, f"{what} must be at least {minimum}, not {value}")
    return value


def real(text: str, source: str, line: int, what: str) -> float:
    """`text` as a finite number of at least 0, else a refusal naming `what`."""
    try:
        value = float(text)
    except ValueError:
        raise refuse(source, line, f"{what} must be a number, not {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise refuse(source, line, f"{what} must be a finite number >= 0, not {text!r}")
    return value


def parse_rate_gbps(text: str, source: str, line: int) -> float:
    """A rate written as ``400Gbps`` (or Mbps, Kbps, bps) in Gb/s."""
    match = _RATE.match(text)
    if match is None:
        raise refuse(source, line, f"cannot read the rate {text!r} (e.g. 400Gbps)")
    value = float(match.group(1)) * _RATE_SCALE[match.group(2).lower()]
    if value <= 0:
        raise refuse(source, line, f"the rate {text!r} must be positive")
    return value


def parse_delay_ns(text: str, source: str, line: int) -> float:
    """A delay written as ``0.0005ms`` (or s, us, ns, ps) in nanoseconds."""
    match = _TIME.match(text)
    if match is None:
        raise refuse(source, line, f"cannot read the delay {text!r} (e.g. 0.0005ms)")
    return float(match.group(1)) * _TIME_NS[match.group(2)]


def format_rate(rate_gbps: float) -> str:
    """A rate in Gb/s as the ns-3 text formats write it: ``400Gbps``."""
    return f"{_fixed(rate_gbps, 6)}Gbps"


def format_delay(latency_ns: float) -> str:
    """A delay in nanoseconds as these files write it: milliseconds, ``0.0005ms`` (to
    1e-15 ms, a femtosecond)."""
    return f"{_fixed(latency_ns / 1e6, 15)}ms"


def _fixed(value: float, places: int) -> str:
    """`value` in plain decimal (no exponent, as the published files write it), trailing
    zeros dropped: ``0.0005``, ``400``."""
    text = f"{value:.{places}f}".rstrip("0").rstrip(".")
    return text or "0"
