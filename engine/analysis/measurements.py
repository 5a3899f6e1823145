"""Measured runs in: an nccl-tests output file read, stored in the library, read back.

Both front ends import a run the same way: `import_nccl_tests` reads the file
(`read_nccl_tests`, through `engine.analysis.nccl_tests.parse_nccl_tests`) and stores it in
the open library (`store_run`) under a name of its own, beside the scenario it belongs to
if one is given. The library keeps a run as a `Measurement` (plain fields and JSON points,
`engine.library.measurements`); `measurement_run` makes the typed `NcclTestsRun` of one
again, and `measured_series` gives the sizes and busbw a plot overlays on the engine's
curves. Bad input is a `ScenarioError` naming the file and line; trouble with the library a
`LibraryError`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.analysis.nccl_tests import parse_nccl_tests
from engine.analysis.results.measured import NcclTestsRun
from engine.library.errors import LibraryError
from engine.library.measurements import Measurement
from engine.library.store import Library
from engine.model.errors import Problem, ScenarioError

#: nccl-tests output is a few kB; a file past this is not one (and would stall the app).
MAX_FILE_BYTES = 64 * 2**20


def read_nccl_tests(path: str | Path, op: str | None = None) -> NcclTestsRun:
    """The run in the nccl-tests output file at `path` (its name is the run's source).

    `op` names the collective when the output does not. Raises `ScenarioError` naming the
    file (and the line, for what is wrong inside it); text that is not UTF-8 is read with
    replacement characters, so a stray byte in a log does not stop the import.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ScenarioError(
                Problem(
                    str(path),
                    f"the file is {size / 2**20:,.0f} MiB; an nccl-tests output is a few kB, "
                    "so this is not one",
                )
            )
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ScenarioError(
            Problem(str(path), f"cannot read the file: {exc.strerror or exc}")
        ) from None
    return parse_nccl_tests(text, source=path.name, op=op)


def measurement_of(run: NcclTestsRun, name: str, scenario: str | None = None) -> Measurement:
    """The `Measurement` the library keeps for `run` under `name` (not stored yet)."""
    data = run.to_dict()
    return Measurement(
        name=name,
        op=run.op,
        ranks=run.ranks,
        gpu=run.gpu,
        nccl_version=run.nccl_version,
        dtype=run.dtype,
        source=run.source,
        points=tuple(data["points"]),
        scenario=scenario,
    )


def free_name(library: Library, base: str) -> str:
    """`base`, or ``base (2)``, ``base (3)``... : the first name no measurement has yet."""
    taken = set(library.measurement_names())
    base = base.strip() or "measurement"
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base} ({n})"
    return name


def store_run(
    library: Library, run: NcclTestsRun, name: str | None = None, scenario: str | None = None
) -> Measurement:
    """Store `run` in `library`; returns the stored `Measurement` (id and import time set).

    Without `name` the run is named after its source file (``all_reduce_8n`` for
    ``all_reduce_8n.txt``, made unique); a given `name` that is taken is refused, as is a
    `scenario` the library does not hold (`LibraryError`, nothing stored).
    """
    if name is None:
        default = Path(run.source).stem if run.source else f"{run.op} x{run.ranks}"
        name = free_name(library, default)
    return library.add_measurement(measurement_of(run, name, scenario))


def import_nccl_tests(
    library: Library,
    path: str | Path,
    op: str | None = None,
    name: str | None = None,
    scenario: str | None = None,
) -> tuple[NcclTestsRun, Measurement]:
    """Read the nccl-tests output at `path` and store it in `library` (see `store_run`).

    Returns the run and its stored measurement. A file that cannot be read as a run raises
    `ScenarioError` and stores nothing; a library refusal raises `LibraryError`.
    """
    run = read_nccl_tests(path, op)
    return run, store_run(library, run, name, scenario)


def measurement_run(measurement: Measurement) -> NcclTestsRun:
    """The typed run a stored `measurement` holds; `LibraryError` when its points are not
    those of a run (a file damaged or written by other code)."""
    data = {
        "op": measurement.op,
        "ranks": measurement.ranks,
        "gpu": measurement.gpu,
        "nccl_version": measurement.nccl_version,
        "dtype": measurement.dtype,
        "points": list(measurement.points),
        "source": measurement.source,
    }
    try:
        return NcclTestsRun.from_plain(data)
    except ScenarioError as exc:
        raise LibraryError(
            f"measurement {measurement.name!r} in the library is malformed: {exc.brief()}"
        ) from None


def measured_series(run: NcclTestsRun, in_place: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The run's message sizes (bytes) and busbw (GB/s), out-of-place or `in_place`, in the
    order printed: the points a plot of busbw versus size overlays on the engine's curve.

    Rows without in-place figures are left out of the in-place series.
    """
    timings = [
        (p.size_bytes, p.in_place if in_place else p.out_of_place)
        for p in run.points
        if not in_place or p.in_place is not None
    ]
    sizes = np.array([s for s, _ in timings], dtype=float)
    busbw = np.array([t.busbw_GBps for _, t in timings], dtype=float)
    return sizes, busbw
