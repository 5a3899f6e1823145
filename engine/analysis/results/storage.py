"""The storage network of a design, as `evaluate` reports it beside the compute fabric:
its parts, the bandwidth at each end and one checkpoint written over it."""

# Field names are the JSON keys, units spelled as the engine spells them (Bps).
# ruff: noqa: N815

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from engine.analysis.results.codec import OMIT_WHEN_NONE, JsonResult


@dataclass(frozen=True)
class StorageSummary(JsonResult):
    """A design's storage network (`engine.model.networks`) and a checkpoint over it.

    `nodes` storage nodes (per model in `node_models`), its switches per tier and cables;
    `frontend_ports` GPU-server front-end ports cabled to it with `frontend_Bps` of line
    rate (after header efficiency), the nodes' `node_ports_Bps` and what their drives write,
    `node_drives_Bps` (``None``: no drive figures). The checkpoint: `checkpoint_gpus` GPUs
    each writing `checkpoint_bytes_per_gpu`, taking `checkpoint_s` (transfer plus one path
    latency) at `checkpoint_Bps` in all, bound by `checkpoint_bound`; ``None`` with the
    reason in `checkpoint_error` when it could not run (every writer cut off).
    """

    nodes: int
    node_models: Mapping[str, int]
    switches: Mapping[str, int]
    cables_total: int
    cables_working: int
    frontend_ports: int
    frontend_Bps: float
    node_ports_Bps: float
    node_drives_Bps: float | None
    checkpoint_gpus: int
    checkpoint_bytes_per_gpu: float
    checkpoint_source: str
    checkpoint_s: float | None = field(default=None, metadata=OMIT_WHEN_NONE)
    checkpoint_Bps: float | None = field(default=None, metadata=OMIT_WHEN_NONE)
    checkpoint_bound: str | None = field(default=None, metadata=OMIT_WHEN_NONE)
    checkpoint_error: str | None = field(default=None, metadata=OMIT_WHEN_NONE)
