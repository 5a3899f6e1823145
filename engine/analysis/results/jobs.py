"""Shared clusters, as the door returns them: each job's servers, and its time alone and
with the other jobs (`engine.jobs.interference`)."""

# Field names are the JSON keys, units spelled as the engine spells them (Bps).
# ruff: noqa: N815

from __future__ import annotations

from dataclasses import dataclass

from engine.analysis.results.codec import JsonResult


@dataclass(frozen=True)
class JobResult(JsonResult):
    """One job: where it runs, its slowest flow's rate and its time alone and shared.

    ``slowdown = shared_s / alone_s`` (1 for a job with no network traffic). Rates are
    ``None`` for a job whose traffic stays inside one server.
    """

    name: str
    kind: str
    placement: str
    op: str
    gpus: int
    servers: tuple[int, ...]
    message_bytes: float
    flows: int
    alone_rate_Bps: float | None
    shared_rate_Bps: float | None
    alone_s: float
    shared_s: float
    slowdown: float


@dataclass(frozen=True)
class SharedResult(JsonResult):
    """Every job of a shared cluster, in the scenario's order, with the model's notes."""

    scenario: str
    jobs: tuple[JobResult, ...]
    storage_servers: int
    notes: tuple[str, ...]
