"""A measured collective: one nccl-tests run as the door returns it.

`NcclTestsRun` is what `engine.analysis.nccl_tests.parse_nccl_tests` reads from the standard
output of NVIDIA/nccl-tests (all_reduce_perf and its siblings): the collective under
FabricLab's name for it, how many ranks ran it on which GPU, the NCCL version when the
output says it, the data type, and one `NcclTestsPoint` per message size with the
out-of-place and in-place `NcclTestsTiming` (time, algbw, busbw, wrong results). Measured
points sit beside the engine's own curves, so the units are the engine's: seconds and GB/s
(1e9 bytes per second, as nccl-tests prints them).
"""

# Field names are the JSON keys, units spelled as the engine spells them (GBps).
# ruff: noqa: N802, N815

from __future__ import annotations

import json
from dataclasses import dataclass

from engine.analysis.results.codec import JsonResult, ResultFormatError
from engine.model.errors import Problem, ScenarioError


@dataclass(frozen=True)
class NcclTestsTiming(JsonResult):
    """One timing of one message size: seconds per call, algbw and busbw in GB/s, and how
    many values nccl-tests found wrong (``None`` when it did not check, ``N/A``)."""

    time_s: float
    algbw_GBps: float
    busbw_GBps: float
    wrong: int | None = None


@dataclass(frozen=True)
class NcclTestsPoint(JsonResult):
    """One row of the nccl-tests table: the message size in bytes, its element count, and
    the out-of-place and in-place timings (``in_place`` is ``None`` when the version printed
    only out-of-place columns)."""

    size_bytes: int
    count: int
    out_of_place: NcclTestsTiming
    in_place: NcclTestsTiming | None = None


@dataclass(frozen=True)
class NcclTestsRun(JsonResult):
    """One nccl-tests run: `op` (FabricLab's name, e.g. ``all-reduce``) over `ranks` ranks
    on `gpu`, with NCCL `nccl_version` (``None`` when the output does not say), data type
    `dtype`, and its `points` in the order printed. `source` names where it was read from."""

    op: str
    ranks: int
    gpu: str
    nccl_version: str | None
    dtype: str
    points: tuple[NcclTestsPoint, ...]
    source: str = ""

    @property
    def peak_point(self) -> NcclTestsPoint | None:
        """The point of the highest out-of-place busbw (the first such; ``None`` without
        points): the headline figure nccl-tests users quote for a fabric, and its size."""
        return max(self.points, key=lambda p: p.out_of_place.busbw_GBps, default=None)

    @property
    def peak_busbw_GBps(self) -> float:
        """The highest out-of-place busbw of the run (0 without points)."""
        peak = self.peak_point
        return 0.0 if peak is None else peak.out_of_place.busbw_GBps

    @property
    def wrong_rows(self) -> int:
        """How many rows report wrong values (out-of-place or in-place): a run with any is a
        broken run, not a measurement of the fabric."""
        return sum(
            1
            for p in self.points
            if (p.out_of_place.wrong or 0) > 0
            or (p.in_place is not None and (p.in_place.wrong or 0) > 0)
        )

    @classmethod
    def from_json(cls, text: str) -> NcclTestsRun:
        """The run a `to_json` text describes; `ScenarioError` naming the first field that
        does not fit when the text is not such a run (never a traceback)."""
        try:
            data = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise ScenarioError(
                Problem("nccl-tests run", f"the text is not JSON ({exc})")
            ) from None
        return cls.from_plain(data)

    @classmethod
    def from_plain(cls, data: object) -> NcclTestsRun:
        """The run a `to_dict` answer describes, checked field by field; `ScenarioError`
        naming the path of the first field that does not fit."""
        try:
            return cls.from_dict(data)
        except (ResultFormatError, TypeError) as exc:
            raise ScenarioError(Problem("nccl-tests run", str(exc))) from None
