"""Where the front ends get scenarios: the shipped presets and the user's library.

A new library starts seeded with the presets; the library itself knows nothing of presets
(it stores scenarios), so the seeding is wired here, in the door both front ends use.
"""

from __future__ import annotations

from pathlib import Path

from engine.library.store import BUSY_TIMEOUT_S, Library, LibraryError, default_library_path
from engine.model.errors import Problem, ScenarioError
from engine.model.scenario import Scenario
from engine.presets.scenarios import PRESETS


def seed_with_presets(library: Library) -> None:
    """Fill a new library with the shipped presets (the default one first)."""
    for factory in PRESETS.values():
        library.save(factory(), note="preset shipped with FabricLab")


def open_library(
    path: str | Path | None = None,
    *,
    create: bool = True,
    read_only: bool = False,
    timeout_s: float = BUSY_TIMEOUT_S,
) -> Library:
    """Open a library (the user's default one when no path); a new one is created and
    seeded with the presets only when `create` is true (a read-only verb passes False and
    hears "no library at PATH" instead). `timeout_s` bounds the wait for another writer."""
    return Library(
        path or default_library_path(),
        seed=seed_with_presets,
        create=create,
        read_only=read_only,
        timeout=timeout_s,
    )


def load_from_library(ref: str, path: str | Path | None = None) -> Scenario:
    """A scenario from a ``library:NAME`` reference."""
    name = ref.removeprefix("library:")
    try:
        lib = open_library(path, create=False, read_only=True)
        try:
            return lib.load(name)
        finally:
            lib.close()
    except LibraryError as exc:
        raise ScenarioError(Problem("scenario", str(exc))) from None


def library_scenarios(
    path: str | Path | None = None, query: str | None = None
) -> tuple[list[Scenario], list[str]]:
    """The scenarios of a library (the user's default one when no path) and their names,
    by name; with `query`, only those the library's search matches (name, description, tags,
    version notes). Raises `ScenarioError` for a missing or damaged library."""
    try:
        lib = open_library(path, create=False, read_only=True)
        try:
            names = lib.search(query) if query else lib.names()
            return [lib.load(name) for name in names], list(names)
        finally:
            lib.close()
    except LibraryError as exc:
        raise ScenarioError(Problem("--library", str(exc))) from None
