"""The shipped preset scenarios, built by the topology templates from catalog models."""

from __future__ import annotations

from collections.abc import Callable

from engine.model.scenario import Scenario
from engine.topology import generators as gen
from engine.topology.hybrid import hybrid
from engine.topology.nvl72 import nvl72
from engine.topology.planes import multi_plane
from engine.topology.storage import add_storage

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


def _b300_xdr_1152() -> Scenario:
    scenario = gen.rail_optimized(1152, "hgx-b300", "q3400")
    for bundle in scenario.bundles:  # the cable picker has no 800G single-port OSFP match
        bundle.cable = "xcvr-800g-osfp-dr8"
    return _named(
        scenario,
        "b300-ib-xdr-1152",
        "144 HGX B300 (1,152 GPUs) with ConnectX-8 at 800G on Quantum-X800 Q3400 (XDR), "
        "rail-optimized non-blocking: 2 scalable units of 72 nodes, 16 leaves and 8 spines as "
        "in NVIDIA's DGX SuperPOD B300 XDR reference architecture; DR8 optics chosen for "
        "every cable; adaptive routing.",
        ["infiniband", "xdr", "800g", "rail-optimized", "1152"],
        "adaptive",
    )


def _b300_spectrumx_planes_1k() -> Scenario:
    return _named(
        multi_plane(1024, "hgx-b300", "sn5600", planes=2),
        "b300-spectrumx-2plane-1k",
        "128 HGX B300 (1,024 GPUs), each ConnectX-8's 800G port as 2 x 400GbE on two "
        "independent rail-optimized Spectrum-4 SN5600 planes (Spectrum-X multi-plane), "
        "adaptive routing with a connection's two flows spread over the planes.",
        ["roce", "spectrum-x", "multi-plane", "800g", "1k"],
        "adaptive",
    )


def _gb200_nvl72_576() -> Scenario:
    return _named(
        nvl72(576, "gb200-nvl72", "qm9700"),
        "gb200-nvl72-ib-576",
        "8 GB200 NVL72 racks (576 GPUs in 72-GPU NVLink domains), one scalable unit of "
        "NVIDIA's DGX GB200 SuperPOD, on a Quantum-2 NDR InfiniBand fabric with each rack's "
        "72 ConnectX-7 rails folded onto 18 leaves (4 NICs of every rack per leaf), 16 "
        "spines, adaptive routing.",
        ["infiniband", "ndr", "nvl72", "576"],
        "adaptive",
    )


def _gb200_nvl72_4608() -> Scenario:
    return _named(
        nvl72(4608, "gb200-nvl72", "qm9700"),
        "gb200-nvl72-ib-4608",
        "64 GB200 NVL72 racks (4,608 GPUs in 72-GPU NVLink domains): 8 scalable units of 8 "
        "racks, as NVIDIA's DGX GB200 SuperPOD reference architecture builds them (it scales "
        "to 128 racks and beyond), each a pod of its own on a 3-tier Quantum-2 NDR InfiniBand "
        "fabric: the racks' 72 ConnectX-7 rails folded onto 24 leaves a pod (3 NICs of every "
        "rack per leaf), 24 spines a pod, 72 core switches joining the pods' spines, "
        "non-blocking at every tier. The switch counts are derived from the ports (the "
        "reference architecture publishes no multi-SU table for GB200). Adaptive routing.",
        ["infiniband", "ndr", "nvl72", "superpod", "3-tier", "4608"],
        "adaptive",
    )


def _ib_pods_ethernet_core_256() -> Scenario:
    return _named(
        hybrid(256, "dgx-h100", "qm9700"),
        "h100-ib-pods-eth-core-256",
        "Two InfiniBand pods of 16 DGX H100 (128 GPUs each, rail-optimized Quantum-2 NDR, "
        "non-blocking inside the pod) joined by an Ethernet core of two Spectrum-4 SN5600 "
        "through two Skyway GA100 InfiniBand-to-Ethernet gateways per pod: InfiniBand inside "
        "each pod, Ethernet between them, the gateways' 100 Gb/s per port the bottleneck "
        "between the pods. Adaptive routing.",
        ["hybrid", "infiniband", "ethernet", "gateway", "256"],
        "adaptive",
    )


def _ib_and_roce_pods_256() -> Scenario:
    return _named(
        hybrid(256, "dgx-h100", "qm9700", ethernet_pod="sn5600"),
        "h100-ib-roce-pods-256",
        "An InfiniBand pod of 16 DGX H100 (rail-optimized Quantum-2 NDR) and a RoCE pod of 16 "
        "DGX H100 (rail-optimized Spectrum-4 SN5600), each non-blocking inside, joined by an "
        "Ethernet core of two SN5600: the RoCE pod's spines reach the core directly, the "
        "InfiniBand pod's through two Skyway GA100 gateways, whose 100 Gb/s per port bound "
        "the traffic between the pods. Adaptive routing.",
        ["hybrid", "infiniband", "roce", "ethernet", "gateway", "256"],
        "adaptive",
    )


def _ib_pods_storage_256() -> Scenario:
    return _named(
        add_storage(hybrid(256, "dgx-h100", "qm9700"), 8),
        "h100-ib-pods-storage-256",
        "h100-ib-pods-eth-core-256 with its storage network: each DGX H100's two front-end "
        "ConnectX-7 ports (bonded for storage, as in NVIDIA's BasePOD) on two Spectrum-4 "
        "SN5600 storage leaves with 8 storage nodes of 2 x 400GbE, apart from the compute "
        "fabric; checkpoint jobs write there (shared), and the storage network is priced on "
        "its own lines of the bill of materials. Adaptive routing.",
        ["hybrid", "infiniband", "ethernet", "gateway", "storage", "256"],
        "adaptive",
    )


PRESETS: dict[str, Callable[[], Scenario]] = {
    "dgx-h100-ib-ndr-1k": _ib_1k,
    "dgx-h100-roce-spectrumx-1k": _spectrumx_1k,
    "hgx-h100-roce-ecmp-1k": _ecmp_1k,
    "rail-only-h100-1k": _rail_only_1k,
    "h100-ib-ndr-16k": _ib_16k,
    "h100-roce-128k": _roce_128k,
    "b300-ib-xdr-1152": _b300_xdr_1152,
    "b300-spectrumx-2plane-1k": _b300_spectrumx_planes_1k,
    "gb200-nvl72-ib-576": _gb200_nvl72_576,
    "gb200-nvl72-ib-4608": _gb200_nvl72_4608,
    "h100-ib-pods-eth-core-256": _ib_pods_ethernet_core_256,
    "h100-ib-roce-pods-256": _ib_and_roce_pods_256,
    "h100-ib-pods-storage-256": _ib_pods_storage_256,
}


def preset_names() -> list[str]:
    """Names of the shipped presets, default first."""
    return list(PRESETS)


def load_preset(name: str) -> Scenario:
    """A fresh copy of the named preset (KeyError when unknown)."""
    return PRESETS[name]()
