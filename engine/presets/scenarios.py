"""The shipped preset scenarios, built by the topology templates from catalog models."""

from __future__ import annotations

from collections.abc import Callable

from engine.model.scenario import Scenario
from engine.topology import generators as gen

DEFAULT_PRESET = "dgx-h100-ib-ndr-1k"


def _named(scenario: Scenario, name: str, description: str, tags: list[str], mode: str) -> Scenario:
    scenario.metadata.name = name
    scenario.metadata.description = description
    scenario.metadata.tags = tags
    scenario.routing.mode = mode
    return scenario


def _ib_1k() -> Scenario:
    return _named(
        gen.rail_optimized(1024, "dgx-h100", "qm9700"),
        "dgx-h100-ib-ndr-1k",
        "128 DGX H100 (1,024 GPUs), rail-optimized non-blocking Quantum-2 NDR fabric, 4 scalable "
        "units as in NVIDIA's DGX SuperPOD reference architecture, adaptive routing.",
        ["infiniband", "ndr", "rail-optimized", "1k"],
        "adaptive",
    )


def _spectrumx_1k() -> Scenario:
    return _named(
        gen.rail_optimized(1024, "hgx-h100-bf3", "sn5600", speed_gbps=400),
        "dgx-h100-roce-spectrumx-1k",
        "128 H100 servers with BlueField-3 SuperNICs on Spectrum-4 SN5600 (400G ports), "
        "rail-optimized non-blocking RoCEv2 with adaptive routing (Spectrum-X).",
        ["roce", "spectrum-x", "rail-optimized", "1k"],
        "adaptive",
    )


def _ecmp_1k() -> Scenario:
    return _named(
        gen.rail_optimized(1024, "hgx-h100", "th5-51t", speed_gbps=400),
        "hgx-h100-roce-ecmp-1k",
        "128 HGX H100 on a generic 51.2T Tomahawk 5 class switch (400G ports), rail-optimized "
        "non-blocking RoCEv2 with static ECMP.",
        ["roce", "ecmp", "rail-optimized", "1k"],
        "ecmp",
    )


def _rail_only_1k() -> Scenario:
    return _named(
        gen.rail_only(1024, "hgx-h100", "th5-51t", speed_gbps=400),
        "rail-only-h100-1k",
        "128 HGX H100, one 51.2T switch per rail and no spine (Wang et al., rail-only); "
        "cross-rail traffic is forwarded over NVLink inside the server.",
        ["roce", "rail-only", "1k"],
        "ecmp",
    )


def _ib_16k() -> Scenario:
    return _named(
        gen.rail_optimized(16384, "dgx-h100", "qm9700"),
        "h100-ib-ndr-16k",
        "2,048 DGX H100 (16,384 GPUs), 3-tier rail-optimized Quantum-2 NDR fat-tree "
        "(64 scalable units, leaf/spine/core as in NVIDIA's SuperPOD table), adaptive routing.",
        ["infiniband", "ndr", "3-tier", "16k"],
        "adaptive",
    )


def _roce_128k() -> Scenario:
    return _named(
        gen.rail_optimized(131072, "hgx-h100", "th5-51t", speed_gbps=400),
        "h100-roce-128k",
        "16,384 HGX H100 (131,072 GPUs), 3-tier rail-optimized RoCEv2 fat-tree of 51.2T switches "
        "in 128 x 400G mode, static ECMP.",
        ["roce", "ecmp", "3-tier", "128k"],
        "ecmp",
    )


PRESETS: dict[str, Callable[[], Scenario]] = {
    "dgx-h100-ib-ndr-1k": _ib_1k,
    "dgx-h100-roce-spectrumx-1k": _spectrumx_1k,
    "hgx-h100-roce-ecmp-1k": _ecmp_1k,
    "rail-only-h100-1k": _rail_only_1k,
    "h100-ib-ndr-16k": _ib_16k,
    "h100-roce-128k": _roce_128k,
}


def preset_names() -> list[str]:
    """Names of the shipped presets, default first."""
    return list(PRESETS)


def load_preset(name: str) -> Scenario:
    """A fresh copy of the named preset (KeyError when unknown)."""
    return PRESETS[name]()
