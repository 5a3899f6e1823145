"""The engine half of ``--self-test``: can this installation compute and store on its own?

Each check runs one piece an installed app depends on (the shipped resources, the numba
kernels on the default preset, the SQLite library) and comes back as a `CheckResult` with
its wall time and a one-line detail, never as an exception, so the self-test can report
every failure at once. The Qt half (window, rendering) lives in ``ui/self_test.py``.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.analysis.evaluation import evaluate
from engine.catalog.devices import Catalog, default_catalog
from engine.library.store import Library
from engine.model.scenario import Scenario, to_json
from engine.runtime.jit_cache import kernels_cached
from engine.runtime.resources import resource_dir, resource_path

REQUIRED_RESOURCES = (("catalog.json",), ("icons", "fabriclab.svg"), ("icons", "fabriclab.png"))
EVALUATED_PARTS = ("permutation", "collective", "training", "cost")


class SelfCheckError(Exception):
    """A self-test check found a wrong result; the message says which and what was seen."""


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check: passed or not, how long it took, and what it saw."""

    name: str
    ok: bool
    seconds: float
    detail: str

    def line(self) -> str:
        """One printable line: status, name, wall time, detail."""
        status = "PASS" if self.ok else "FAIL"
        return f"{status}  {self.name:<24} {self.seconds:7.2f} s  {self.detail}"


def run_check(name: str, check: Callable[[], str]) -> CheckResult:
    """Run `check` and time it; whatever it raises becomes a failed result with the message."""
    t0 = time.perf_counter()
    try:
        detail, ok = check(), True
    except Exception as exc:  # a self-test reports every failure instead of stopping at one
        detail, ok = f"{type(exc).__name__}: {exc}", False
    return CheckResult(name, ok, time.perf_counter() - t0, detail)


def check_resources() -> str:
    """The shipped files are where `resource_path` says, and the catalog loads."""
    missing = [str(resource_path(*parts)) for parts in REQUIRED_RESOURCES]
    missing = [p for p in missing if not Path(p).is_file()]
    if missing:
        raise SelfCheckError(f"missing resource file(s): {', '.join(missing)}")
    catalog = default_catalog()
    if not catalog.devices:
        raise SelfCheckError("the catalog has no devices")
    return f"{len(catalog.devices)} catalog devices, {len(catalog.sources)} sources, in {resource_dir()}"


def _positive(where: str, value: Any) -> float:
    if not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise SelfCheckError(f"{where} is {value!r}, expected a positive number")
    return float(value)


def check_evaluation(scenario: Scenario, catalog: Catalog | None = None) -> str:
    """Evaluate `scenario` fully (the numba kernels run) and sanity-check every part."""
    report = evaluate(scenario, catalog or default_catalog(), parts=EVALUATED_PARTS)
    gpus = _positive("topology.gpus", report.topology.gpus)
    if report.permutation is None or report.collective is None:
        raise SelfCheckError("the evaluation left out the permutation test or the collective")
    throughput = report.permutation.throughput_fraction.mean
    if not 0.0 < throughput <= 1.0 + 1e-9:
        raise SelfCheckError(f"permutation throughput fraction {throughput!r} is not in (0, 1]")
    rows = report.collective.rows
    if not rows:
        raise SelfCheckError("the collective produced no rows")
    busbw = _positive("collective busbw", rows[-1].busbw_GBps)
    if report.training is None or report.cost is None:
        raise SelfCheckError("the evaluation left out the training step or the cost report")
    utilization = report.training.gpu_utilization
    if not 0.0 < utilization <= 1.0:
        raise SelfCheckError(f"training GPU utilization {utilization!r} is not in (0, 1]")
    _positive("cost.capex_usd", report.cost.capex_usd)
    return (
        f"{scenario.metadata.name}: {gpus:,.0f} GPUs, permutation {throughput:.1%}, "
        f"busbw {busbw:,.0f} GB/s, GPU utilization {utilization:.1%}"
    )


def check_library(folder: Path, scenario: Scenario) -> tuple[str, Scenario]:
    """Write `scenario` and a cached result to a new library in `folder`, reopen, read back.

    Returns the detail line and the scenario as read back (the window is built on that).
    """
    path = Path(folder) / "self-test.fabriclab"
    if path.exists():
        path.unlink()
    library = Library(path)
    try:
        library.save(scenario, note="self-test")
        library.cache_result(scenario, "self-test", {"ok": True})
    finally:
        library.close()
    library = Library(path)
    try:
        loaded = library.load(scenario.metadata.name)
        cached = library.cached_result(scenario, "self-test")
        versions = len(library.versions(scenario.metadata.name))
    finally:
        library.close()
    if to_json(loaded) != to_json(scenario):
        raise SelfCheckError("the scenario read back from the library differs from the one saved")
    if cached != {"ok": True}:
        raise SelfCheckError(f"the cached result read back is {cached!r}")
    detail = (
        f"{path.name}: saved, reopened, read back ({versions} version, {path.stat().st_size:,} B)"
    )
    return detail, loaded


def check_numba_cache(frozen: bool, environ: Mapping[str, str]) -> str:
    """After the kernels ran: a bundled app must have written them to its NUMBA_CACHE_DIR.

    Without that every start of an installed app would compile again. From a checkout numba
    keeps its default (``__pycache__`` beside each module) and there is nothing to check.
    """
    cache = environ.get("NUMBA_CACHE_DIR", "")
    if not frozen:
        return f"checkout: numba's default cache{f' ({cache})' if cache else ' (__pycache__)'}"
    if not cache:
        raise SelfCheckError("bundled app without NUMBA_CACHE_DIR: every start would compile")
    indexes = list(Path(cache).rglob("*.nbi"))
    if not indexes:
        raise SelfCheckError(f"no compiled kernels were cached in {cache}")
    return f"{len(indexes)} kernels cached in {cache}"


def kernels_ready() -> bool:
    """Whether the engine's numba kernels are compiled on disk, so a run starts at once
    (False on a first start, which compiles them once)."""
    import engine

    return kernels_cached(Path(engine.__file__).parent, os.environ.get("NUMBA_CACHE_DIR"))
