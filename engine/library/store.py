"""The scenario library: one SQLite file (sqlite-utils) of scenarios, versions and results.

A library holds scenarios (name, description, tags, times, body JSON, format version),
every saved version with its note, cached results keyed by the scenario's content hash and
the engine version, an autosave slot, a full-text index over names, descriptions, tags
and version notes, and measured runs (nccl-tests) with their points, kept beside the
scenarios they check (`engine.library.measurements`). It is shared as one file and works offline. The file's schema version is
``PRAGMA user_version``; older files are migrated when opened, newer ones open read-only.
WAL and a busy timeout (30 s, with margin over a slow save under load) let two running apps
share a library; every write is a transaction.

Opening never makes things worse: what is at the path is found first (`engine.library.files`:
a pipe or folder is refused without being opened), the file is then checked read-only
without leaving anything beside it (`engine.library.probe`), and only a file that passes is
opened for real. A new library is built aside and moved into place whole
(`engine.library.creation`), so the path holds nothing or a whole, seeded library.
``create=False`` (or ``read_only=True``) never creates one. Every failure, on opening or
later, is one `LibraryError` naming the file and the kind of trouble
(`engine.library.errors`); a refused file is left exactly as it was.
The tables and migrations live in `engine.library.schema`, scenario diffs in
`engine.library.scenario_diff`, the guard that turns ``sqlite3`` errors into
`LibraryError` on every method in `engine.library.guards`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import sqlite_utils

from engine import __version__ as engine_version
from engine.library import connection, creation, files, probe
from engine.library.connection import Transaction
from engine.library.errors import LibraryError, damaged, explain, no_library
from engine.library.guards import reads as _reads
from engine.library.guards import writes as _writes
from engine.library.measurements import MeasurementShelf
from engine.library.plain_json import json_safe
from engine.library.schema import SCHEMA_VERSION, create_latest
from engine.model.errors import ScenarioError
from engine.model.scenario import Scenario, from_json, scenario_to_dict, to_json

SQLITE_MAGIC = files.SQLITE_MAGIC
BUSY_TIMEOUT_S = 30.0
# The page size of a new library. A scenario's JSON is a few KB: on SQLite's default 4 KiB
# pages each body spills into overflow pages, and every scan of a table (the checks on
# opening, the list) reads page after page. On 10,000 scenarios (benchmarks/run.py) 64 KiB
# pages make the file 55 MB instead of 83 and those reads take 46 ms instead of 109
# (measured 2026-12-06). A library made before keeps its pages.
PAGE_BYTES = 65536


class Entry(NamedTuple):
    """A scenario's row in the library list. (A named tuple, not a frozen dataclass: a
    frozen dataclass sets each field through `object.__setattr__`, and 10,000 rows cost 11
    ms of the list instead of 5.)"""

    name: str
    description: str
    tags: list[str]
    created: str
    modified: str
    versions: int
    deleted: bool


def default_library_path() -> Path:
    """The user's default library: $XDG_DATA_HOME/fabriclab/library.fabriclab (or ~/.local/share)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "fabriclab" / "library.fabriclab"


def content_hash(scenario: Scenario) -> str:
    """A stable hash of a scenario's content (what cached results are keyed by)."""
    return hashlib.sha256(to_json(scenario, indent=None).encode()).hexdigest()


@functools.lru_cache(maxsize=4096)
def _tags(text: str | None) -> tuple[str, ...]:
    """Decoded tags column (tag sets repeat across scenarios, so decode each once)."""
    return tuple(probe.tags_of(text))


def listing_sql(sort: str, trash: bool) -> str:
    """The query behind `Library.list`: each listed scenario's row and its version count,
    in the asked order (``modified``, ``name`` or ``created``). A new library answers it
    from its listing index (`engine.library.schema`) without reading the table."""
    order = {"modified": "modified desc", "name": "name", "created": "created desc"}.get(sort)
    if order is None:
        raise LibraryError(f"cannot sort by {sort!r}; use modified, name or created")
    where = "deleted_at is not null" if trash else "deleted_at is null"
    return (
        "select s.name, s.description, s.tags, coalesce(s.created, ''), "
        "coalesce(s.modified, ''), s.deleted_at, "
        # counted per listed scenario on the versions' index: a quarter faster on 10,000
        # than counting every scenario's versions first and joining
        "(select count(*) from versions v where v.scenario_id = s.id) "
        f"from scenarios s where {where} order by {order}"
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Library(MeasurementShelf):
    """An open scenario library file.

    `seed` fills a library this call creates (never an existing one). With ``create=False``
    a missing or empty path is refused ("no library at PATH") instead of created; with
    ``read_only=True`` nothing is created or written, the file is opened read-only.
    `timeout` is how long to wait, in seconds, for another process writing the file.
    """

    def __init__(
        self,
        path: str | Path,
        seed: Callable[[Library], None] | None = None,
        *,
        create: bool = True,
        read_only: bool = False,
        timeout: float = BUSY_TIMEOUT_S,
    ):
        self.path = Path(path)
        self.timeout = float(timeout)
        self.read_only = read_only
        self.message = ""
        self._newer = ""
        self.db: sqlite_utils.Database | None = None
        found = files.look(self.path)
        if found.kind != files.FILE:
            if read_only or not create:
                raise no_library(
                    self.path, "the file is empty" if found.kind == files.EMPTY else ""
                )
            creation.create(self.path, functools.partial(self._build, seed=seed), self.timeout)
            found = files.look(self.path)
            if found.kind != files.FILE:
                raise LibraryError(f"cannot create a library at {self.path}: it vanished")
        opened = connection.open_checked(
            self.path, probe.inspect(self.path, found, self.timeout), read_only, self.timeout
        )
        self.db = sqlite_utils.Database(opened.conn)
        self.read_only, self.message, self._newer = opened.read_only, opened.message, opened.newer

    @classmethod
    def _on(cls, conn: sqlite3.Connection, path: Path, timeout: float) -> Library:
        """A `Library` on an open connection (the file being built for a new library)."""
        lib = cls.__new__(cls)
        lib.path, lib.timeout, lib.read_only, lib.message, lib._newer = path, timeout, False, "", ""
        lib.db = sqlite_utils.Database(conn)
        return lib

    def _build(self, temp: Path, seed: Callable[[Library], None] | None) -> None:
        """Write a whole new library into the empty file `temp`: tables, version, seed."""
        conn = connection.connect(files.uri(temp, mode="rw"), self.timeout)
        try:
            conn.execute("PRAGMA journal_mode = MEMORY")  # a temporary file: no journal file
            conn.execute("PRAGMA synchronous = OFF")  # creation flushes the file once, at the end
            conn.execute(f"PRAGMA page_size = {PAGE_BYTES}")  # before the first table
            builder = Library._on(conn, self.path, self.timeout)
            with builder._write():
                create_latest(builder.db)
                builder.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            if seed is not None:
                seed(builder)
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.Error as exc:
            raise explain(exc, self.path, doing="create", timeout=self.timeout) from None
        finally:
            conn.close()

    def _explain(self, exc: sqlite3.Error, doing: str) -> LibraryError:
        """The `LibraryError` for an ``sqlite3`` error met while `doing` (read or write)."""
        return explain(exc, self.path, doing=doing, timeout=self.timeout, newer=self._newer)

    def _write(self) -> Transaction:
        if self.read_only:
            raise LibraryError(self.message or f"{self.path} is open read-only")
        return Transaction(self.db.conn)

    def _parse(self, body: Any, what: str) -> Scenario:
        """A scenario from stored JSON, or a `LibraryError` saying which one is malformed."""
        try:
            return from_json(body)
        except (ScenarioError, TypeError) as exc:
            raise LibraryError(f"{what} in the library is malformed: {exc}") from None

    @_reads
    def close(self) -> None:
        """Close the file (again is harmless)."""
        if self.db is not None:
            self.db.conn.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ------------------------------------------------------------------------------
    @_reads
    def _row(self, name: str, include_deleted: bool = False) -> dict[str, Any]:
        rows = list(self.db.query("select * from scenarios where name = ?", [name]))
        if not rows or (rows[0]["deleted_at"] and not include_deleted):
            raise LibraryError(f"no scenario named {name!r} in {self.path.name}")
        return rows[0]

    @_reads
    def names(self) -> list[str]:
        """Names of the scenarios not in the trash."""
        return [
            r["name"]
            for r in self.db.query(
                "select name from scenarios where deleted_at is null order by name"
            )
        ]

    @_reads
    def list(self, sort: str = "modified", trash: bool = False) -> list[Entry]:
        """Scenarios (or the trash), newest first or by name."""
        rows = self.db.conn.execute(listing_sql(sort, trash)).fetchall()
        try:
            return [
                Entry(name, desc or "", list(_tags(tags)), created, modified, n, bool(deleted))
                for name, desc, tags, created, modified, deleted, n in rows
            ]
        except (TypeError, ValueError):  # tags damaged after the file was opened and checked
            bad = next(r[0] for r in rows if not probe.tags_ok(r[2]))
            raise damaged(
                self.path, f"the tags of scenario {bad!r} are not a JSON list of strings"
            ) from None

    @_reads
    def load(self, name: str, version: int | None = None) -> Scenario:
        """A scenario by name (its latest version, or version number `version` from 1)."""
        row = self._row(name, include_deleted=version is not None)
        body = row["body"]
        if version is not None:
            versions = self.versions(name)
            if not 1 <= version <= len(versions):
                raise LibraryError(f"{name!r} has versions 1..{len(versions)}, not {version}")
            body = versions[version - 1]["body"]
        return self._parse(body, f"scenario {name!r}")

    @_reads
    def versions(self, name: str) -> list[dict[str, Any]]:
        """Every saved version of a scenario, oldest first (number, time, note, body)."""
        row = self._row(name, include_deleted=True)
        rows = self.db.query(
            "select coalesce(created, '') as created, coalesce(note, '') as note, body, "
            "content_hash from versions where scenario_id = ? order by id",
            [row["id"]],
        )
        return [{"number": i + 1, **r} for i, r in enumerate(rows)]

    @_reads
    def search(self, query: str) -> list[str]:
        """Names of scenarios whose name, description, tags or version notes match `query`."""
        terms = " ".join(f'"{t}"*' for t in query.replace('"', " ").split())
        if not terms:
            return self.names()
        hits = [
            r["name"]
            for r in self.db.query(
                "select s.name from scenarios s join scenarios_fts f on f.rowid = s.rowid "
                "where scenarios_fts match ? and s.deleted_at is null",
                [terms],
            )
        ]
        hits += [
            r["name"]
            for r in self.db.query(
                "select distinct s.name from versions v join versions_fts f on f.rowid = v.rowid "
                "join scenarios s on s.id = v.scenario_id where versions_fts match ? and s.deleted_at is null",
                [terms],
            )
        ]
        return sorted(set(hits))

    # -- writing ------------------------------------------------------------------------------
    @_writes
    def save(self, scenario: Scenario, note: str = "", name: str | None = None) -> int:
        """Save `scenario` under its name (or `name`) as a new version; returns the version number."""
        with self._write():
            return self._save(scenario, note, name)

    @_writes
    def save_many(self, scenarios: list[Scenario], note: str = "") -> None:
        """Save several scenarios in one transaction (an import of many files)."""
        with self._write():
            for scenario in scenarios:
                self._save(scenario, note, None)

    def _save(self, scenario: Scenario, note: str, name: str | None) -> int:
        """The body of `save`, inside the caller's transaction."""
        name = name or scenario.metadata.name
        if not name.strip():
            raise LibraryError("a scenario needs a name to be saved")
        body = to_json(scenario)
        now = _now()
        rows = list(self.db.query("select id, deleted_at from scenarios where name = ?", [name]))
        fields = {
            "description": scenario.metadata.description,
            "tags": json.dumps(scenario.metadata.tags),
            "modified": now,
            "body": body,
            "format_version": scenario_to_dict(scenario)["version"],
        }
        if rows:
            sid = rows[0]["id"]
            self.db["scenarios"].update(sid, {**fields, "deleted_at": None})
        else:
            sid = (
                self.db["scenarios"]
                .insert({"name": name, "created": now, "deleted_at": None, **fields})
                .last_pk
            )
        self.db["versions"].insert(
            {
                "scenario_id": sid,
                "created": now,
                "note": note,
                "body": body,
                "content_hash": content_hash(scenario),
            }
        )
        self.db.execute("delete from autosave")
        count = self.db.execute(
            "select count(*) from versions where scenario_id = ?", [sid]
        ).fetchone()[0]
        return int(count)

    @_writes
    def rename(self, name: str, new_name: str) -> None:
        """Give a scenario another name (refused when the new one is taken)."""
        row = self._row(name)
        if new_name in self.names():
            raise LibraryError(f"a scenario named {new_name!r} exists already")
        with self._write():
            scenario = self._parse(row["body"], f"scenario {name!r}")
            scenario.metadata.name = new_name
            self.db["scenarios"].update(
                row["id"], {"name": new_name, "body": to_json(scenario), "modified": _now()}
            )

    @_writes
    def duplicate(self, name: str, new_name: str) -> None:
        """A copy of a scenario under a new name, with a history of its own."""
        if new_name in self.names():
            raise LibraryError(f"a scenario named {new_name!r} exists already")
        scenario = self.load(name)
        scenario.metadata.name = new_name
        self.save(scenario, note=f"duplicated from {name}")

    @_writes
    def delete(self, name: str) -> None:
        """Move a scenario to the trash (restore brings it back)."""
        row = self._row(name)
        with self._write():
            self.db["scenarios"].update(row["id"], {"deleted_at": _now()})

    @_writes
    def restore(self, name: str) -> None:
        """Take a scenario out of the trash."""
        row = self._row(name, include_deleted=True)
        with self._write():
            self.db["scenarios"].update(row["id"], {"deleted_at": None})

    @_writes
    def tag(self, name: str, tags: list[str]) -> None:
        """Set a scenario's tags (saved as a new version)."""
        scenario = self.load(name)
        scenario.metadata.tags = sorted(set(tags))
        self.save(scenario, note="tags: " + ", ".join(scenario.metadata.tags))

    # -- files and other libraries --------------------------------------------------------------
    @_writes
    def import_json(self, path: str | Path, note: str = "imported") -> str:
        """Add a scenario JSON file; returns its name in the library."""
        try:
            scenario = from_json(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise LibraryError(f"cannot read {path}: {exc}") from None
        self.save(scenario, note=note)
        return scenario.metadata.name

    @_writes
    def export_json(self, name: str, path: str | Path) -> None:
        """Write a scenario's latest version as a JSON file."""
        text = to_json(self.load(name)) + "\n"
        try:
            Path(path).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise LibraryError(f"cannot write {path}: {exc.strerror or exc}") from None

    @_writes
    def copy_to(self, other: Library, name: str) -> None:
        """Copy a scenario (latest version) into another library."""
        other.save(self.load(name), note=f"copied from {self.path.name}")

    # -- cached results and autosave ------------------------------------------------------------
    @_writes
    def cache_result(self, scenario: Scenario, kind: str, result: dict[str, Any]) -> None:
        """Keep a result for this scenario content and engine version."""
        if self.read_only:
            return
        with self._write():
            self.db["results"].upsert(
                {
                    "content_hash": content_hash(scenario),
                    "engine_version": engine_version,
                    "kind": kind,
                    "created": _now(),
                    "body": json.dumps(json_safe(result)),
                },
                pk=("content_hash", "engine_version", "kind"),
            )

    @_reads
    def cached_result(self, scenario: Scenario, kind: str) -> dict[str, Any] | None:
        """The kept result for exactly this content and engine version, if any."""
        rows = list(
            self.db.query(
                "select body from results where content_hash = ? and engine_version = ? and "
                "kind = ?",
                [content_hash(scenario), engine_version, kind],
            )
        )
        try:
            return json.loads(rows[0]["body"]) if rows else None
        except (TypeError, ValueError):
            return None  # a damaged cache entry is a miss: the result is computed again

    @_writes
    def autosave(self, scenario: Scenario) -> None:
        """Keep the unsaved scenario being edited, to offer it back after a crash."""
        if self.read_only:
            return
        with self._write():
            self.db["autosave"].upsert(
                {"slot": 1, "saved_at": _now(), "body": to_json(scenario)}, pk="slot"
            )

    @_reads
    def recover(self) -> Scenario | None:
        """The autosaved scenario, if the app did not save or close cleanly."""
        rows = list(self.db.query("select body from autosave where slot = 1"))
        return self._parse(rows[0]["body"], "the autosaved scenario") if rows else None

    @_reads
    def autosaved_at(self) -> str | None:
        """When the autosaved scenario was written (ISO time, UTC), or ``None`` without one."""
        rows = list(self.db.query("select saved_at from autosave where slot = 1"))
        return rows[0]["saved_at"] if rows else None

    @_writes
    def clear_autosave(self) -> None:
        """Forget the autosaved scenario (the app closed cleanly or the user discarded it)."""
        if self.read_only:
            return
        with self._write():
            self.db.execute("delete from autosave")
