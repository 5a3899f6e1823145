"""The scenario library: one SQLite file (sqlite-utils) of scenarios, versions and results.

A library holds scenarios (name, description, tags, times, body JSON, format version),
every saved version with its note, cached results keyed by the scenario's content hash and
the engine version, an autosave slot, and a full-text index over names, descriptions, tags
and version notes. It is shared as one file and works offline. The file's schema version is
``PRAGMA user_version``; older files are migrated when opened, newer ones open read-only.
WAL and a busy timeout let two running apps share a library; every write is a transaction.
A file that is not a FabricLab library is refused with a clear error and left untouched.
The tables and migrations live in `engine.library.schema`; `diff` (engine.library.scenario_diff)
and `json_safe` (engine.library.plain_json) stay importable from here, where callers found them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from engine import __version__ as engine_version
from engine.library.plain_json import json_safe
from engine.library.scenario_diff import diff
from engine.library.schema import MIGRATIONS, SCHEMA_VERSION, create_v1
from engine.model.errors import ScenarioError
from engine.model.scenario import Scenario, from_json, scenario_to_dict, to_json

__all__ = [
    "Entry",
    "Library",
    "LibraryError",
    "content_hash",
    "default_library_path",
    "diff",
    "json_safe",
]

SQLITE_MAGIC = b"SQLite format 3\x00"


class LibraryError(Exception):
    """The library file cannot be used as asked; the message says why and what to do."""


@dataclass(frozen=True)
class Entry:
    """A scenario's row in the library list."""

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
    return tuple(json.loads(text or "[]"))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Library:
    """An open scenario library file."""

    def __init__(self, path: str | Path, seed: Callable[[Library], None] | None = None):
        self.path = Path(path)
        self.read_only = False
        self.message = ""
        fresh = not self.path.exists()
        if not fresh:
            self._check_file()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(str(self.path), timeout=10.0, isolation_level=None)
            conn.execute("PRAGMA busy_timeout = 10000")
        except sqlite3.Error as exc:
            raise LibraryError(f"cannot open library {self.path}: {exc}") from None
        self.db = sqlite_utils.Database(conn)
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if fresh:
            with self._write():
                create_v1(self.db)
                self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self.db.enable_wal()
            if seed is not None:
                seed(self)
        elif version > SCHEMA_VERSION:
            self.read_only = True
            self.message = (
                f"{self.path.name} was written by a newer FabricLab (library schema {version}, this "
                f"one knows {SCHEMA_VERSION}); it is open read-only: upgrade to edit it"
            )
        elif version < SCHEMA_VERSION:
            self._migrate(version)

    def _check_file(self) -> None:
        try:
            with open(self.path, "rb") as handle:
                head = handle.read(16)
        except OSError as exc:
            raise LibraryError(f"cannot read library {self.path}: {exc.strerror}") from None
        if head != SQLITE_MAGIC:
            raise LibraryError(
                f"{self.path} is not a FabricLab library (not an SQLite file); it was left "
                "untouched. Open another file or choose a new name"
            )
        try:
            probe = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
            tables = {
                r[0] for r in probe.execute("select name from sqlite_master where type='table'")
            }
            probe.close()
        except sqlite3.DatabaseError as exc:
            raise LibraryError(
                f"{self.path} is damaged ({exc}); it was left untouched. Restore a copy or "
                "open another library"
            ) from None
        if tables and "scenarios" not in tables:
            raise LibraryError(
                f"{self.path} is an SQLite file but not a FabricLab library (no scenarios "
                "table); it was left untouched"
            )

    def _migrate(self, version: int) -> None:
        with self._write():
            while version < SCHEMA_VERSION:
                MIGRATIONS[version](self.db)
                version += 1
            self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        self.db.enable_wal()
        self.message = f"library migrated to schema {SCHEMA_VERSION}"

    def _write(self):
        if self.read_only:
            raise LibraryError(self.message)
        return _Transaction(self.db.conn)

    def close(self) -> None:
        """Close the file."""
        self.db.conn.close()

    # -- reading ------------------------------------------------------------------------------
    def _row(self, name: str, include_deleted: bool = False) -> dict[str, Any]:
        rows = list(self.db.query("select * from scenarios where name = ?", [name]))
        if not rows or (rows[0]["deleted_at"] and not include_deleted):
            raise LibraryError(f"no scenario named {name!r} in {self.path.name}")
        return rows[0]

    def names(self) -> list[str]:
        """Names of the scenarios not in the trash."""
        return [
            r["name"]
            for r in self.db.query(
                "select name from scenarios where deleted_at is null order by name"
            )
        ]

    def list(self, sort: str = "modified", trash: bool = False) -> list[Entry]:
        """Scenarios (or the trash), newest first or by name."""
        order = {"modified": "modified desc", "name": "name", "created": "created desc"}.get(sort)
        if order is None:
            raise LibraryError(f"cannot sort by {sort!r}; use modified, name or created")
        where = "deleted_at is not null" if trash else "deleted_at is null"
        sql = (
            "select s.name, s.description, s.tags, s.created, s.modified, s.deleted_at, "
            "coalesce(v.n, 0) as n from scenarios s left join "
            "(select scenario_id, count(*) as n from versions group by scenario_id) v on v.scenario_id = s.id "
            f"where {where} order by {order}"
        )
        rows = self.db.conn.execute(sql).fetchall()
        return [
            Entry(name, desc or "", list(_tags(tags)), created, modified, n, bool(deleted))
            for name, desc, tags, created, modified, deleted, n in rows
        ]

    def load(self, name: str, version: int | None = None) -> Scenario:
        """A scenario by name (its latest version, or version number `version` from 1)."""
        row = self._row(name, include_deleted=version is not None)
        body = row["body"]
        if version is not None:
            versions = self.versions(name)
            if not 1 <= version <= len(versions):
                raise LibraryError(f"{name!r} has versions 1..{len(versions)}, not {version}")
            body = versions[version - 1]["body"]
        try:
            return from_json(body)
        except ScenarioError as exc:
            raise LibraryError(f"scenario {name!r} in the library is malformed: {exc}") from None

    def versions(self, name: str) -> list[dict[str, Any]]:
        """Every saved version of a scenario, oldest first (number, time, note, body)."""
        row = self._row(name, include_deleted=True)
        rows = self.db.query(
            "select created, note, body, content_hash from versions where scenario_id = ? "
            "order by id",
            [row["id"]],
        )
        return [{"number": i + 1, **r} for i, r in enumerate(rows)]

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
    def save(self, scenario: Scenario, note: str = "", name: str | None = None) -> int:
        """Save `scenario` under its name (or `name`) as a new version; returns the version number."""
        with self._write():
            return self._save(scenario, note, name)

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

    def rename(self, name: str, new_name: str) -> None:
        """Give a scenario another name (refused when the new one is taken)."""
        row = self._row(name)
        if new_name in self.names():
            raise LibraryError(f"a scenario named {new_name!r} exists already")
        with self._write():
            scenario = from_json(row["body"])
            scenario.metadata.name = new_name
            self.db["scenarios"].update(
                row["id"], {"name": new_name, "body": to_json(scenario), "modified": _now()}
            )

    def duplicate(self, name: str, new_name: str) -> None:
        """A copy of a scenario under a new name, with a history of its own."""
        if new_name in self.names():
            raise LibraryError(f"a scenario named {new_name!r} exists already")
        scenario = self.load(name)
        scenario.metadata.name = new_name
        self.save(scenario, note=f"duplicated from {name}")

    def delete(self, name: str) -> None:
        """Move a scenario to the trash (restore brings it back)."""
        row = self._row(name)
        with self._write():
            self.db["scenarios"].update(row["id"], {"deleted_at": _now()})

    def restore(self, name: str) -> None:
        """Take a scenario out of the trash."""
        row = self._row(name, include_deleted=True)
        with self._write():
            self.db["scenarios"].update(row["id"], {"deleted_at": None})

    def tag(self, name: str, tags: list[str]) -> None:
        """Set a scenario's tags (saved as a new version)."""
        scenario = self.load(name)
        scenario.metadata.tags = sorted(set(tags))
        self.save(scenario, note="tags: " + ", ".join(scenario.metadata.tags))

    # -- files and other libraries --------------------------------------------------------------
    def import_json(self, path: str | Path, note: str = "imported") -> str:
        """Add a scenario JSON file; returns its name in the library."""
        try:
            scenario = from_json(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise LibraryError(f"cannot read {path}: {exc}") from None
        self.save(scenario, note=note)
        return scenario.metadata.name

    def export_json(self, name: str, path: str | Path) -> None:
        """Write a scenario's latest version as a JSON file."""
        Path(path).write_text(to_json(self.load(name)) + "\n", encoding="utf-8")

    def copy_to(self, other: Library, name: str) -> None:
        """Copy a scenario (latest version) into another library."""
        other.save(self.load(name), note=f"copied from {self.path.name}")

    # -- cached results and autosave ------------------------------------------------------------
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

    def cached_result(self, scenario: Scenario, kind: str) -> dict[str, Any] | None:
        """The kept result for exactly this content and engine version, if any."""
        rows = list(
            self.db.query(
                "select body from results where content_hash = ? and engine_version = ? and "
                "kind = ?",
                [content_hash(scenario), engine_version, kind],
            )
        )
        return json.loads(rows[0]["body"]) if rows else None

    def autosave(self, scenario: Scenario) -> None:
        """Keep the unsaved scenario being edited, to offer it back after a crash."""
        if self.read_only:
            return
        with self._write():
            self.db["autosave"].upsert(
                {"slot": 1, "saved_at": _now(), "body": to_json(scenario)}, pk="slot"
            )

    def recover(self) -> Scenario | None:
        """The autosaved scenario, if the app did not save or close cleanly."""
        rows = list(self.db.query("select body from autosave where slot = 1"))
        return from_json(rows[0]["body"]) if rows else None

    def autosaved_at(self) -> str | None:
        """When the autosaved scenario was written (ISO time, UTC), or ``None`` without one."""
        rows = list(self.db.query("select saved_at from autosave where slot = 1"))
        return rows[0]["saved_at"] if rows else None

    def clear_autosave(self) -> None:
        """Forget the autosaved scenario (the app closed cleanly or the user discarded it)."""
        if self.read_only:
            return
        with self._write():
            self.db.execute("delete from autosave")


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT (or ROLLBACK on error) on an autocommit connection."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self):
        self.conn.execute("BEGIN IMMEDIATE")
        return self

    def __exit__(self, exc_type, exc, tb):
        self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")
        return False
