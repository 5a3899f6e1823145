"""Looking inside a library file before trusting it, changing nothing and leaving nothing beside it.

`inspect` opens the file read-only: as an immutable file when no other process has it open
(SQLite then takes no lock and creates no ``-wal``/``-shm`` file beside it), else with
SQLite's usual locking, so a writer is waited for and reported as busy, not as damage. It
runs SQLite's quick integrity check, reads the schema version, checks the tables and columns
against the version the file claims (`engine.library.schema.SHAPES`: a damaged
``user_version`` must not run an old migration over a newer file) and the rows the library
would trip over (NULL times or bodies, tags that are not a JSON list of strings, a schema 0
body that cannot be migrated). Any failure is one `LibraryError` naming the file and the
kind of trouble; only a file that passes is opened for real by `engine.library.store`.

A file left half-written by a program that stopped (a hot rollback journal) cannot be read
read-only; SQLite puts it right on the first read-write open, as any SQLite program would,
so that is done, when you may write the file, and the file is looked at again.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from engine.library import files
from engine.library.errors import (
    UNTOUCHED,
    LibraryError,
    damaged,
    explain,
    newer_head,
    not_a_library,
    not_utf8,
    unreadable_newer,
)
from engine.library.schema import SCHEMA_VERSION, SHAPES, shape_problems

RECOVERABLE = {"SQLITE_READONLY_ROLLBACK", "SQLITE_READONLY_RECOVERY"}
KNOWN_TABLES = {table for shape in SHAPES.values() for table in shape}
LABELS = {"name": "name", "body": "body", "created": "creation time", "modified": "change time"}


def inspect(path: Path, found: files.Found, timeout: float) -> int:
    """The schema version of the library at `path`, once the file passed every check.

    `found` is what `files.look` saw there (a non-empty regular file); `timeout` is how long
    to wait for another process's lock. Raises `LibraryError` (not a library, damaged,
    locked, newer and unreadable); the file is left as it was.
    """
    files.check_header(path, found, files.live(path))
    try:
        return _look_inside(path, timeout)
    except UnicodeDecodeError:
        raise not_utf8(path) from None
    except sqlite3.Error as exc:
        if getattr(exc, "sqlite_errorname", "") not in RECOVERABLE:
            raise explain(exc, path, doing="open", timeout=timeout) from None
    if files.write_refusal(path):
        raise LibraryError(
            f"{path} was left half-written by a program that stopped, and it is read-only for "
            f"you, so it cannot be put right; {UNTOUCHED}. Make it writable and open it again"
        )
    try:
        _recover(path, timeout)
        return _look_inside(path, timeout)
    except UnicodeDecodeError:
        raise not_utf8(path) from None
    except sqlite3.Error as exc:
        raise explain(exc, path, doing="open", timeout=timeout) from None


def _recover(path: Path, timeout: float) -> None:
    """Let SQLite roll back what a stopped writer left half-done (a read-write first read)."""
    conn = sqlite3.connect(files.uri(path, mode="rw"), uri=True, timeout=timeout)
    try:
        conn.execute("select count(*) from sqlite_master").fetchall()
    finally:
        conn.close()


def _look_inside(path: Path, timeout: float) -> int:
    """Open `path` read-only (immutable unless another process has it open) and check it."""
    params = {"mode": "ro"} if files.live(path) else {"mode": "ro", "immutable": "1"}
    conn = sqlite3.connect(
        files.uri(path, **params), uri=True, timeout=timeout, isolation_level=None
    )
    try:
        return _check(conn, path)
    finally:
        conn.close()


def _check(conn: sqlite3.Connection, path: Path) -> int:
    """The schema version of the open file, after the integrity, shape and row checks."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    names = {r[0] for r in conn.execute("select name from sqlite_master where type = 'table'")}
    problem = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
    if problem != "ok":
        raise damaged(path, f"SQLite finds: {problem}")
    if not names:
        raise not_a_library(path, "an SQLite database with no tables")
    if "scenarios" not in names:
        raise not_a_library(path, "an SQLite file with no scenarios table")
    tables = {
        name: {row[1] for row in conn.execute(f'PRAGMA table_info("{name}")')}
        for name in sorted(names & KNOWN_TABLES)
    }
    if version < 0:
        raise damaged(path, f"its schema version {version} is not valid")
    if version > SCHEMA_VERSION:
        problems = shape_problems(SCHEMA_VERSION, tables)
        if problems:
            raise unreadable_newer(newer_head(path, version, SCHEMA_VERSION), problems[0])
        return version
    problems = shape_problems(version, tables)
    if problems:
        others = [v for v in SHAPES if v != version and not shape_problems(v, tables)]
        if others:
            raise damaged(
                path,
                f"its schema version says {version} but its tables are those of version "
                f"{others[0]}",
            )
        if version == 0:
            raise not_a_library(path, f"its scenarios table is not FabricLab's: {problems[0]}")
        raise damaged(path, "; ".join(problems[:3]))
    if version == 0:
        _check_v0_rows(conn, path)
    else:
        _check_rows(conn, path)
    return version


def tags_of(text: object) -> list[str]:
    """The tags in a scenarios.tags value (JSON list of strings, or NULL for none).

    Raises ValueError when the value is anything else, which the library calls damage.
    """
    if text is None:
        return []
    if not isinstance(text, str):
        raise ValueError("not text")
    tags = json.loads(text)
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ValueError("not a JSON list of strings")
    return tags


def tags_ok(text: object) -> bool:
    """Whether a scenarios.tags value is what `tags_of` reads (NULL or a JSON list of strings)."""
    try:
        tags_of(text)
    except ValueError:
        return False
    return True


def _check_rows(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a file whose scenarios or versions lack what the library reads from every row."""
    texts = " or ".join(f"typeof({column}) <> 'text'" for column in LABELS)
    flags = ", ".join(f"typeof({column}) = 'text'" for column in LABELS)
    bad = conn.execute(f"select name, {flags} from scenarios where {texts} limit 1").fetchone()
    if bad is not None:
        name, *ok = bad
        column = next(c for c, fine in zip(LABELS, ok, strict=True) if not fine)
        who = f"scenario {name!r}" if column != "name" else "a scenario"
        raise damaged(path, f"{who} has no {LABELS[column]}")
    # every value the list shows, read (and so decoded from UTF-8) once; each tag set checked once
    listed = conn.execute("select name, description, created, modified, tags from scenarios")
    for tags, name in {row[4]: row[0] for row in listed}.items():
        if not tags_ok(tags):
            raise damaged(path, f"the tags of scenario {name!r} are not a JSON list of strings")
    bad = conn.execute(
        "select s.name from versions v left join scenarios s on s.id = v.scenario_id "
        "where typeof(v.created) <> 'text' or typeof(v.body) <> 'text' limit 1"
    ).fetchone()
    if bad is not None:
        raise damaged(path, f"a saved version of scenario {bad[0]!r} has no time or no body")


def _check_v0_rows(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a schema 0 file whose rows the migration could not carry over."""
    for name, body in conn.execute("select name, body from scenarios"):
        if not isinstance(name, str):
            raise damaged(path, "a scenario has no name")
        try:
            ok = isinstance(body, str) and isinstance(json.loads(body), dict)
        except ValueError:
            ok = False
        if not ok:
            raise damaged(path, f"scenario {name!r} is not a JSON object, so it cannot be migrated")
