"""The library file's schema: the tables of each version and the migrations between them.

The file's schema version is ``PRAGMA user_version``. Version 1 holds scenarios (name,
description, tags, times, body JSON, format version), every saved version with its note,
cached results keyed by content hash, engine version and kind, an autosave slot, and
full-text indexes over names, descriptions, tags and version notes. Version 2 adds the
measurements: runs of nccl-tests imported by the user (name, collective, ranks, GPU, NCCL
version, data type, source file, import time, the scenario they belong to if any, and the
points as JSON), kept beside the scenarios they check. `MIGRATIONS` maps a
version to the step that brings a file from it to the next; the library runs them in order
when it opens an older file. `SHAPES` holds the tables and columns each version must have,
so a file is checked against the version it claims before it is trusted: a damaged
``user_version`` must never run an old migration over a newer file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

import sqlite_utils

SCHEMA_VERSION = 2

#: The tables of each schema version and the columns of each that this code reads or writes.
SHAPES: dict[int, dict[str, frozenset[str]]] = {
    0: {"scenarios": frozenset({"name", "body", "saved"})},
    1: {
        "scenarios": frozenset(
            {
                "id",
                "name",
                "description",
                "tags",
                "created",
                "modified",
                "body",
                "format_version",
                "deleted_at",
            }
        ),
        "versions": frozenset({"id", "scenario_id", "created", "note", "body", "content_hash"}),
        "results": frozenset({"content_hash", "engine_version", "kind", "created", "body"}),
        "autosave": frozenset({"slot", "saved_at", "body"}),
        "scenarios_fts": frozenset({"name", "description", "tags"}),
        "versions_fts": frozenset({"note"}),
    },
}
SHAPES[2] = {
    **SHAPES[1],
    "measurements": frozenset(
        {
            "id",
            "name",
            "op",
            "ranks",
            "gpu",
            "nccl_version",
            "dtype",
            "source",
            "imported",
            "scenario",
            "points",
        }
    ),
}


def shape_problems(version: int, tables: Mapping[str, set[str]]) -> list[str]:
    """What a file with these tables (name -> columns) lacks to be of schema `version`.

    Empty when it has every table and column of that version. A file also must not have a
    table only later versions have (a version 0 file no ``versions``, a version 1 file no
    ``measurements``), so a newer file is never taken for an older one and migrated again.
    """
    problems = []
    for table, columns in SHAPES[version].items():
        if table not in tables:
            problems.append(f"it has no {table} table")
            continue
        problems += [f"table {table} has no column {c}" for c in sorted(columns - tables[table])]
    later = {t for v, shape in SHAPES.items() if v > version for t in shape} - set(SHAPES[version])
    problems += [
        f"it has a {table} table, which schema {version} files never had"
        for table in sorted(later & set(tables))
    ]
    return problems


def create_v1(db: sqlite_utils.Database) -> None:
    """Create the tables, indexes and full-text indexes of schema version 1 in an empty file."""
    db["scenarios"].create(
        {
            "id": int,
            "name": str,
            "description": str,
            "tags": str,
            "created": str,
            "modified": str,
            "body": str,
            "format_version": int,
            "deleted_at": str,
        },
        pk="id",
        not_null={"name", "body"},
    )
    db["scenarios"].create_index(["name"], unique=True)
    # What the library list reads, in its order, so that listing reads this index and not
    # the table with every scenario's body (`engine.library.store.Library.list`).
    db["scenarios"].create_index(
        ["deleted_at", "modified", "name", "description", "tags", "created"],
        index_name="idx_scenarios_listing",
    )
    db["versions"].create(
        {
            "id": int,
            "scenario_id": int,
            "created": str,
            "note": str,
            "body": str,
            "content_hash": str,
        },
        pk="id",
        foreign_keys=[("scenario_id", "scenarios", "id")],
    )
    db["versions"].create_index(["scenario_id"])
    db["results"].create(
        {"content_hash": str, "engine_version": str, "kind": str, "created": str, "body": str},
        pk=("content_hash", "engine_version", "kind"),
    )
    db["autosave"].create({"slot": int, "saved_at": str, "body": str}, pk="slot")
    db["scenarios"].enable_fts(["name", "description", "tags"], create_triggers=True)
    db["versions"].enable_fts(["note"], create_triggers=True)


def create_measurements(db: sqlite_utils.Database) -> None:
    """Create the measurements table of schema version 2 (names unique, looked up by scenario)."""
    db["measurements"].create(
        {
            "id": int,
            "name": str,
            "op": str,
            "ranks": int,
            "gpu": str,
            "nccl_version": str,
            "dtype": str,
            "source": str,
            "imported": str,
            "scenario": str,
            "points": str,
        },
        pk="id",
        not_null={"name", "op", "ranks", "imported", "points"},
    )
    db["measurements"].create_index(["name"], unique=True)
    db["measurements"].create_index(["scenario"])


def create_latest(db: sqlite_utils.Database) -> None:
    """Create every table of the current schema version (`SCHEMA_VERSION`) in an empty file."""
    create_v1(db)
    create_measurements(db)


def _migrate_0_to_1(db: sqlite_utils.Database) -> None:
    """Version 0 (early development files): scenarios(name, body, saved) only.

    The library checked every body is a JSON object before it calls this; a missing save
    time becomes the time of the migration, so no scenario ends up without one.
    """
    old = list(db.query("select name, body, saved from scenarios"))
    db["scenarios"].drop()
    create_v1(db)
    now = datetime.now(UTC).isoformat(timespec="milliseconds")
    for row in old:
        body = json.loads(row["body"])
        meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
        tags = meta.get("tags", [])
        saved = row["saved"] if isinstance(row["saved"], str) else now
        sid = (
            db["scenarios"]
            .insert(
                {
                    "name": row["name"],
                    "description": meta.get("description", ""),
                    "tags": json.dumps(
                        [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []
                    ),
                    "created": saved,
                    "modified": saved,
                    "body": row["body"],
                    "format_version": body.get("version", 1),
                    "deleted_at": None,
                }
            )
            .last_pk
        )
        db["versions"].insert(
            {
                "scenario_id": sid,
                "created": saved,
                "note": "migrated from format 0",
                "body": row["body"],
                "content_hash": hashlib.sha256(row["body"].encode()).hexdigest(),
            }
        )


def _migrate_1_to_2(db: sqlite_utils.Database) -> None:
    """Version 1 had no measurements: add their table, empty; nothing else changes."""
    create_measurements(db)


MIGRATIONS: dict[int, Callable[[sqlite_utils.Database], None]] = {
    0: _migrate_0_to_1,
    1: _migrate_1_to_2,
}
