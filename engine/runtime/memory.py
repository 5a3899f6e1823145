"""How much memory one run may take: the machine's available memory unless a front end says
otherwise (``--max-memory``, ``FABRICLAB_MAX_MEMORY``).

Checked against a scenario's size estimate (`engine.topology.size`) before anything is
built, so a fabric that cannot fit is refused in well under a second instead of swapping the
machine or being killed by it.

`plain_pages_for_numpy` keeps numpy from asking for transparent huge pages where that makes
every fresh array wait for the kernel to compact memory (see there).
"""

from __future__ import annotations

import os
import re

ENV_VAR = "FABRICLAB_MAX_MEMORY"
THP = "/sys/kernel/mm/transparent_hugepage"
# Defragmentation modes in which a huge page asked for by madvise is compacted on the spot.
STALLING_DEFRAG = frozenset({"always", "madvise", "defer+madvise"})
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_limit_override: int | None = None


def parse_bytes(text: str) -> int:
    """Bytes from text like ``8G``, ``512M``, ``16GiB`` or ``1e9``; ValueError if unreadable."""
    match = re.fullmatch(
        r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper()
    )
    if match is None:
        raise ValueError(f"cannot read {text!r} as an amount of memory (e.g. 8G, 512M)")
    value = float(match.group(1)) * _UNITS[match.group(2)]
    if not 0 < value < 2**63:
        raise ValueError(f"an amount of memory must be positive, not {text!r}")
    return int(value)


def available_bytes() -> int | None:
    """Memory the system can give this process now (Linux MemAvailable), None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def set_memory_limit(limit_bytes: int | None) -> None:
    """Set the limit for runs in this process (None: back to the default)."""
    global _limit_override
    _limit_override = limit_bytes


def memory_limit() -> tuple[int | None, str]:
    """The limit in bytes (None: no limit known) and where it comes from, for messages."""
    if _limit_override is not None:
        return _limit_override, "--max-memory"
    text = os.environ.get(ENV_VAR, "")
    if text:
        try:
            return parse_bytes(text), ENV_VAR
        except ValueError:
            pass  # a bad variable must not stop a run; the machine's memory still bounds it
    return available_bytes(), "the memory this machine has available"


def _selected(path: str) -> str:
    """The bracketed choice of a kernel setting like ``always [madvise] never`` ("" if none)."""
    try:
        with open(path, encoding="ascii") as setting:
            match = re.search(r"\[([^\]]+)\]", setting.read())
    except OSError:
        return ""
    return match.group(1) if match else ""


def plain_pages_for_numpy() -> bool:
    """Stop numpy advising huge pages for its large arrays where the advice stalls; True if
    it did.

    numpy asks the kernel for transparent huge pages (``madvise``) on every array of 4 MB or
    more. Where the kernel grants them only on that advice and compacts memory on the spot to
    do so (``enabled`` and ``defrag`` both ``madvise``, Ubuntu's default), each fresh array
    of an evaluation waits for the compaction: a cold 131,072-GPU evaluation spent 0.7-1.2 s
    of system time in page faults with the advice and 0.3-0.4 s without, its own work the
    same. Left alone elsewhere, and when ``NUMPY_MADVISE_HUGEPAGE`` says what the user wants.
    """
    if "NUMPY_MADVISE_HUGEPAGE" in os.environ:
        return False
    if (
        _selected(f"{THP}/enabled") != "madvise"
        or _selected(f"{THP}/defrag") not in STALLING_DEFRAG
    ):
        return False
    try:
        from numpy._core.multiarray import _set_madvise_hugepage
    except ImportError:  # numpy < 2
        try:
            from numpy.core.multiarray import _set_madvise_hugepage
        except ImportError:
            return False
    _set_madvise_hugepage(False)
    return True
