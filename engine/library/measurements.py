"""Measured runs in the library: nccl-tests results kept beside the scenarios they check.

A `Measurement` is one imported run as the library stores it (schema version 2, table
``measurements``): a unique name, the collective, ranks, GPU, NCCL version, data type, the
source file's name, when it was imported (ISO time, UTC), the scenario it belongs to if
any, and its points as JSON. The library keeps the points as the JSON-ready data it is
given and hands them back unchanged; what a point holds is the door's business
(`engine.analysis.measurements` turns a parsed `NcclTestsRun` into a `Measurement` and
back), so the library stays below the analysis layer and knows nothing of nccl-tests.

`MeasurementShelf` is mixed into `engine.library.store.Library` and uses its connection,
its write transaction and its error guard; every failure is a `LibraryError`.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from engine.library.errors import LibraryError, damaged
from engine.library.guards import reads, writes

_COLUMNS = "id, name, op, ranks, gpu, nccl_version, dtype, source, imported, scenario, points"


@dataclass(frozen=True)
class Measurement:
    """One measured run as the library keeps it (see the module docstring).

    `id` and `imported` are set by the library when it stores the run (``None`` and "" on
    a measurement not stored yet); `points` is the JSON-ready list of the run's points.
    """

    name: str
    op: str
    ranks: int
    gpu: str
    nccl_version: str | None
    dtype: str
    source: str
    points: tuple[Any, ...]
    scenario: str | None = None
    imported: str = ""
    id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The measurement as JSON-ready data (what ``measurements --json`` prints)."""
        return {
            "id": self.id,
            "name": self.name,
            "op": self.op,
            "ranks": self.ranks,
            "gpu": self.gpu,
            "nccl_version": self.nccl_version,
            "dtype": self.dtype,
            "source": self.source,
            "imported": self.imported,
            "scenario": self.scenario,
            "points": list(self.points),
        }


class MeasurementShelf:
    """The measurement methods of `engine.library.store.Library` (a mixin).

    The library provides ``db``, ``path``, ``_write`` (its one write transaction),
    ``_explain`` (for the guard) and ``names`` (the scenarios not in the trash).
    """

    @writes
    def add_measurement(self, measurement: Measurement) -> Measurement:
        """Store `measurement` under its name; returns it with its id and import time.

        Refused (`LibraryError`, nothing stored) when the name is empty or taken, or when
        it names a scenario the library does not hold.
        """
        name = measurement.name.strip()
        if not name:
            raise LibraryError("a measurement needs a name to be saved")
        scenario = measurement.scenario
        if scenario is not None and scenario not in self.names():
            raise LibraryError(
                f"no scenario named {scenario!r} in {self.path.name}; save it first or import "
                "the measurement without a scenario"
            )
        try:
            points = json.dumps(list(measurement.points), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise LibraryError(f"the points of measurement {name!r} are not JSON: {exc}") from None
        now = datetime.now(UTC).isoformat(timespec="milliseconds")
        with self._write():
            if self.db.execute("select 1 from measurements where name = ?", [name]).fetchone():
                raise LibraryError(f"a measurement named {name!r} exists already")
            row_id = (
                self.db["measurements"]
                .insert(
                    {
                        "name": name,
                        "op": measurement.op,
                        "ranks": int(measurement.ranks),
                        "gpu": measurement.gpu,
                        "nccl_version": measurement.nccl_version,
                        "dtype": measurement.dtype,
                        "source": measurement.source,
                        "imported": now,
                        "scenario": scenario,
                        "points": points,
                    }
                )
                .last_pk
            )
        return dataclasses.replace(measurement, name=name, imported=now, id=int(row_id))

    @reads
    def measurement_names(self) -> list[str]:
        """The names of the stored measurements, in order of import."""
        return [r[0] for r in self.db.execute("select name from measurements order by id")]

    @reads
    def measurements(self, scenario: str | None = None) -> list[Measurement]:
        """The stored measurements in order of import (only those of `scenario` if given)."""
        if scenario is None:
            rows = self.db.execute(f"select {_COLUMNS} from measurements order by id")
        else:
            rows = self.db.execute(
                f"select {_COLUMNS} from measurements where scenario = ? order by id", [scenario]
            )
        return [self._measurement(row) for row in rows.fetchall()]

    @reads
    def measurement(self, name: str) -> Measurement:
        """The measurement named `name`; `LibraryError` when there is none."""
        row = self.db.execute(
            f"select {_COLUMNS} from measurements where name = ?", [name]
        ).fetchone()
        if row is None:
            raise LibraryError(f"no measurement named {name!r} in {self.path.name}")
        return self._measurement(row)

    @writes
    def delete_measurement(self, name: str) -> None:
        """Remove the measurement named `name` for good (measurements have no trash)."""
        with self._write():
            gone = self.db.execute("delete from measurements where name = ?", [name]).rowcount
            if not gone:
                raise LibraryError(f"no measurement named {name!r} in {self.path.name}")

    def _measurement(self, row: tuple[Any, ...]) -> Measurement:
        """A `Measurement` from its row; a row the library could not have written is damage."""
        row_id, name, op, ranks, gpu, version, dtype, source, imported, scenario, points = row
        who = f"measurement {name!r}" if isinstance(name, str) else "a measurement"
        try:
            decoded = json.loads(points)
        except (TypeError, ValueError, RecursionError):  # RecursionError: nested past reason
            decoded = None
        if not isinstance(decoded, list):
            raise damaged(self.path, f"the points of {who} are not a JSON list")
        texts = (name, op, imported)
        if not all(isinstance(t, str) for t in texts) or not isinstance(ranks, int):
            raise damaged(self.path, f"{who} lacks its name, collective, ranks or import time")
        return Measurement(
            name=name,
            op=op,
            ranks=ranks,
            gpu=gpu or "",
            nccl_version=version,
            dtype=dtype or "",
            source=source or "",
            points=tuple(decoded),
            scenario=scenario,
            imported=imported,
            id=row_id,
        )
