"""Older scenario formats read as the current one, each change said in a note.

A file written by an older FabricLab still opens: each format step below turns its document
into the next one's, and says what it changed (a field that no longer exists, say) so the
user learns why a figure moved instead of the file being refused.
"""

from __future__ import annotations

from typing import Any


def printable(text: str) -> str:
    """`text` safe to print anywhere: unpaired surrogates escaped, long text cut."""
    safe = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return safe if len(safe) <= 80 else safe[:77] + "..."


def from_version_1(body: dict[str, Any], notes: list[str] | None) -> dict[str, Any]:
    """Format 1 had `fabric.incast_efficiency`, one assumed share of a contended link's
    capacity; the transport model replaced it, so it is dropped with a note."""
    fabric = body.get("fabric")
    if isinstance(fabric, dict) and "incast_efficiency" in fabric:
        fabric = dict(fabric)
        value = fabric.pop("incast_efficiency")
        body = {**body, "fabric": fabric}
        if notes is not None and value is not None:
            notes.append(
                f"fabric.incast_efficiency ({printable(repr(value))}) is no longer used: "
                "congestion now comes from the transport mechanisms (transport section); "
                "the value was dropped"
            )
    return body
