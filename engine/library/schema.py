"""The library file's schema: the tables of each version and the migrations between them.

The file's schema version is ``PRAGMA user_version``. Version 1 holds scenarios (name,
description, tags, times, body JSON, format version), every saved version with its note,
cached results keyed by content hash, engine version and kind, an autosave slot, and
full-text indexes over names, descriptions, tags and version notes. `MIGRATIONS` maps a
version to the step that brings a file from it to the next; the library runs them in order
when it opens an older file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

import sqlite_utils

SCHEMA_VERSION = 1


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


def _migrate_0_to_1(db: sqlite_utils.Database) -> None:
    """Version 0 (early development files): scenarios(name, body, saved) only."""
    old = list(db.query("select name, body, saved from scenarios"))
    db["scenarios"].drop()
    create_v1(db)
    for row in old:
        body = json.loads(row["body"])
        meta = body.get("metadata", {})
        sid = (
            db["scenarios"]
            .insert(
                {
                    "name": row["name"],
                    "description": meta.get("description", ""),
                    "tags": json.dumps(meta.get("tags", [])),
                    "created": row["saved"],
                    "modified": row["saved"],
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
                "created": row["saved"],
                "note": "migrated from format 0",
                "body": row["body"],
                "content_hash": hashlib.sha256(row["body"].encode()).hexdigest(),
            }
        )


MIGRATIONS: dict[int, Callable[[sqlite_utils.Database], None]] = {0: _migrate_0_to_1}
