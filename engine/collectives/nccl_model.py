"""NCCL's own cost model, as its tuner has it: protocols, latencies, caps and size corrections.

NCCL (src/graph/tuning.cc, search.cc, topo.h) times every algorithm and protocol with
``latency + bytes / bandwidth`` and runs the fastest. FabricLab takes the bandwidth of each
stage from the fabric itself (routed flows, the transport mechanisms) and from NCCL what the
fabric cannot say: how much of it each protocol keeps (LL moves half payload, LL128 15/16),
the per-step latencies of each algorithm composed as NCCL composes them (a ring's steps
inside a server against those that cross the network, a tree's depth, the ring "plateau"
factor), the caps on the bus bandwidth of LL and LL128 and the tree's size correction, and
the rate NCCL's channels reach through one NIC (48 of a 400G NIC's 50 GB/s). Every constant
is in the catalog's ``nccl`` entry with the NCCL release it comes from; this module only
reads and composes them, so a calibrated scenario can replace any of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.catalog.devices import Catalog
from engine.collectives.chunk_pipeline import ChunkRules

PROTOCOLS = ("ll", "ll128", "simple")
# NCCL's algorithm families (its tuner's rows); MPI-style schedules borrow the ring's.
NCCL_CLASSES = ("ring", "tree", "collnet", "nvls", "nvlstree")
SIMPLE_ONLY = frozenset({"collnet", "nvls", "nvlstree"})
# treeCorrectionFactor covers 64 B .. 512 MiB: index k = floor(log2(bytes / 64)).
TREE_CORRECTION_ENTRIES = 23


@dataclass(frozen=True)
class NcclModel:
    """NCCL's tuner constants for one GPU architecture and host CPU, in SI units."""

    arch: str
    cpu_vendor: str
    bw_factor: dict[str, dict[str, float]]
    tree_single_node_ll128: float
    base_s: dict[str, dict[str, float]]
    step_net_s: dict[str, dict[str, float]]
    step_nvlink_s: dict[str, dict[str, float]]
    net_overhead_s: float
    ring_plateau: float
    collnet_intra_step_s: float
    tree_correction: dict[str, np.ndarray]
    ll_max_multi_node: dict[str, float]  # bytes/s for "2" and "3+" servers
    ll_max_single_node: float  # bytes/s
    ring_ll128_per_channel: float  # bytes/s
    tree_per_channel: dict[str, float]  # bytes/s for "1", "2", "3+" servers
    tree_ll128_per_channel: dict[str, float]
    nvlink_link_bw: float  # bytes/s NCCL counts per NVLink
    nvls_efficiency: float
    collnet_direct_efficiency: float  # CollNetDirect all-reduce bandwidth share the tuner keeps
    nvls_channels: dict[str, int]  # "1": on one server, "2+": across servers
    net_channel_speeds: tuple[float, ...]  # bytes/s per channel the search tries
    channels_per_nic: int  # search channels per GPU on one server
    collnet_default: bool
    version: str
    chunk_rules: ChunkRules | None = None  # NVLS / NVLS-tree chunking (chunk_pipeline)
    net_port_rate: float = 0.0  # bytes/s of the slowest GPU NIC port (0: no network)
    net_ports_per_gpu: float = 0.0  # NIC ports per GPU (channel_count)
    connection_buffer_bytes: float = 0.0  # Simple buffer of a connection (0: flows unpaced)


def _seconds(table: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    return {algo: {p: float(v) * 1e-6 for p, v in row.items()} for algo, row in table.items()}


def _rates(table: dict[str, float]) -> dict[str, float]:
    return {k: float(v) * 1e9 for k, v in table.items()}


def nccl_model(catalog: Catalog, arch: str, cpu_vendor: str | None = None) -> NcclModel:
    """NCCL's constants for GPUs of compute capability `arch` (``sm90``...) on `cpu_vendor`.

    An architecture the catalog has no row for gets the sm90 (Hopper) row, NCCL's default
    branch for anything at or above sm90; a CPU vendor other than Intel or AMD gets the
    catalog's default vendor.
    """
    nccl = catalog.technology("nccl")
    arches: dict[str, Any] = nccl.value("arch")
    row = arches.get(arch) or arches["sm90"]
    cpu = cpu_vendor if cpu_vendor in ("intel", "amd") else str(nccl.value("cpu_vendor_default"))
    factors = nccl.value("protocol_bw_factor")
    corr = nccl.value("tree_correction")
    return NcclModel(
        arch=arch if arch in arches else "sm90",
        cpu_vendor=cpu,
        bw_factor={cls: {p: float(v) for p, v in factors[cls].items()} for cls in NCCL_CLASSES},
        tree_single_node_ll128=float(factors["tree_single_node_ll128"]),
        base_s=_seconds(nccl.value("base_latency_us")),
        step_net_s=_seconds(nccl.value("step_latency_net_us")),
        step_nvlink_s=_seconds(nccl.value("step_latency_nvlink_us")),
        net_overhead_s=float(nccl.value("net_overhead_us")[cpu]) * 1e-6,
        ring_plateau=float(nccl.value("ring_plateau_latency_factor")),
        collnet_intra_step_s=float(nccl.value("collnet_intra_step_us")) * 1e-6,
        tree_correction={p: np.asarray(corr[p], dtype=np.float64) for p in PROTOCOLS},
        ll_max_multi_node=_rates(nccl.value("ll_max_bw_multi_node_GBps")[cpu]),
        ll_max_single_node=float(row["ll_max_bw_single_node_GBps"]) * 1e9,
        ring_ll128_per_channel=float(row["ring_ll128_per_channel_GBps"]) * 1e9,
        tree_per_channel=_rates(row["tree_per_channel_GBps"]),
        tree_ll128_per_channel=_rates(row["tree_ll128_per_channel_GBps"]),
        nvlink_link_bw=float(row["nvlink_link_GBps"]) * 1e9,
        nvls_efficiency=float(row["nvls_efficiency"]),
        collnet_direct_efficiency=float(row["collnet_direct_efficiency"]),
        nvls_channels={k: int(v) for k, v in row["nvls_channels"].items()},
        net_channel_speeds=tuple(float(s) * 1e9 for s in row["net_channel_speeds_GBps"]),
        channels_per_nic=int(nccl.value("channels_per_nic")),
        collnet_default=bool(nccl.value("collnet_default")),
        version=str(nccl.value("nccl_version")),
        chunk_rules=_chunk_rules(nccl),
        connection_buffer_bytes=float(nccl.value("simple_buffer_bytes")),
    )


def _ladder(value: Any) -> tuple[tuple[int, int], ...]:
    return tuple((int(loops), int(cap)) for loops, cap in value)


def _chunk_rules(nccl: Any) -> ChunkRules:
    """NCCL's chunking constants of the catalog's ``nccl`` entry (calcCollChunking)."""
    return ChunkRules(
        nvls_chunk_bytes=int(nccl.value("nvls_chunk_bytes")),
        nvls_ladder=_ladder(nccl.value("nvls_chunk_ladder")),
        nvlstree_ladder=_ladder(nccl.value("nvlstree_chunk_ladder")),
        nvlstree_max_chunk_bytes_many_nodes=int(nccl.value("nvlstree_max_chunk_bytes_many_nodes")),
        nvlstree_many_nodes=int(nccl.value("nvlstree_many_nodes")),
        nvls_pipeline_stages=int(nccl.value("nvls_pipeline_stages")),
        simple_step_bytes=int(nccl.value("simple_buffer_bytes")) // int(nccl.value("nccl_steps")),
        chain_chunk_steps=int(nccl.value("chain_chunk_steps")),
    )


def channel_rate_fraction(rate: float, speeds: tuple[float, ...]) -> float:
    """The share of a NIC's rate that NCCL's channels through it reach.

    The topology search tries per-channel speeds from its list, fastest first, and puts as
    many channels of one speed through a NIC as fit: the NIC carries the largest multiple
    ``k * s <= rate`` over the list (a 400G NIC, 50 GB/s: 48; an HDR NIC, 25 GB/s: 24).
    Rates in bytes/s.
    """
    if rate <= 0:
        return 1.0
    best = max((math.floor(rate / s + 1e-9) * s for s in speeds if s > 0), default=0.0)
    return min(1.0, best / rate) if best > 0 else 1.0


def search_channels(model: NcclModel, port_rate: float, ports: int) -> int:
    """NCCL's search channels across servers for a server's `ports` NIC ports of
    `port_rate` bytes/s each (those its ranks use).

    The search (search.cc) tries its per-channel speeds fastest first and keeps the first
    that fits a port, with as many channels of it through each port as fit; then
    `ncclTopoDupChannels` doubles the channels when that speed is 25 GB/s or more, except on
    GPUs above sm80 when it is under 50 GB/s and there are more than 4 channels. So eight
    400G NICs of an H100 or B200 server carry 8 channels of 48 GB/s (not doubled), eight
    800G NICs 16 (96 GB/s halved), one 400G NIC 2.
    """
    fits = [s for s in model.net_channel_speeds if 0 < s <= port_rate * (1 + 1e-9)]
    if not fits or ports <= 0:
        return max(1, model.channels_per_nic * ports)
    speed = fits[0]
    channels = max(1, math.floor(port_rate / speed + 1e-9)) * ports
    cc = int(model.arch[2:]) if model.arch[2:].isdigit() else 90
    kept = speed < 25e9 or (cc > 80 and speed < 50e9 and channels > 4)
    return channels if kept else 2 * channels


def channel_count(model: NcclModel, n_nodes: int, gpus_per_server: int) -> int:
    """The channels NCCL's tuner multiplies its per-channel caps by for a collective over
    `n_nodes` servers of `gpus_per_server` ranks: the catalog's figure per GPU on one
    server, NCCL's search rule (`search_channels`) on the ranks' NIC ports across servers."""
    gpus = max(1, gpus_per_server)
    if n_nodes <= 1 or model.net_port_rate <= 0 or model.net_ports_per_gpu <= 0:
        return max(1, model.channels_per_nic * gpus)
    ports = max(1, round(model.net_ports_per_gpu * gpus))
    return search_channels(model, model.net_port_rate, ports)


def tree_correction(model: NcclModel, protocol: str, sizes: np.ndarray) -> np.ndarray:
    """NCCL's tree all-reduce bandwidth correction at each size (1 from 512 MiB up)."""
    table = model.tree_correction[protocol]
    k = np.floor(np.log2(np.maximum(np.asarray(sizes, dtype=np.float64), 64.0) / 64.0))
    k = k.astype(np.int64)
    out = np.ones(k.shape[0])
    inside = k < min(TREE_CORRECTION_ENTRIES, table.shape[0])
    out[inside] = table[k[inside]]
    return out


def nvls_channel_share(model: NcclModel, n_nodes: int) -> float:
    """The share of the NVLink SHARP rate NCCL's model keeps: (channels - 1) / channels."""
    channels = model.nvls_channels["1" if n_nodes <= 1 else "2+"]
    return (channels - 1) / channels if channels > 1 else 0.0


def _nodes_key(n_nodes: int) -> str:
    return "1" if n_nodes <= 1 else "2" if n_nodes == 2 else "3+"


def _intra_lat(model: NcclModel, cls: str, protocol: str, n_nodes: int) -> float:
    lat = model.step_nvlink_s[cls][protocol]
    if cls == "ring" and n_nodes > 1:
        # A ring that leaves the server pays the proxy's network overhead on every step.
        overhead = model.net_overhead_s * (3 if protocol == "simple" else 1)
        lat = max(lat, overhead)
    return lat


def _inter_lat(model: NcclModel, cls: str, protocol: str, ppn: int) -> float:
    # With one GPU per server NCCL uses the tree's network latency for every algorithm.
    return model.step_net_s["tree" if ppn == 1 else cls][protocol]


def latency_s(
    model: NcclModel,
    cls: str,
    op: str,
    protocol: str,
    n: int,
    n_nodes: int,
    sizes: np.ndarray,
) -> np.ndarray | None:
    """NCCL's modelled latency of one collective at each size, or None where it has none.

    Ring all-reduce, all-gather and reduce-scatter: base + the steps inside a server at the
    NVLink latency (at least the network overhead once the ring leaves the server) + the
    steps that cross servers at the network latency, x 1.4 for a multi-server Simple
    all-reduce; tree: base + 2 ((ppn - 1) NVLink + floor(log2 N) network); CollNet direct,
    NVLS and NVLS-tree by their own formulas (tuning.cc, 2.23 and later).
    """
    sizes = np.asarray(sizes, dtype=np.float64)
    ppn = max(1, n // max(1, n_nodes))
    base = model.base_s[cls][protocol]
    intra = _intra_lat(model, cls, protocol, n_nodes)
    inter = _inter_lat(model, cls, protocol, ppn)
    log_n = math.floor(math.log2(n_nodes)) if n_nodes > 1 else 0
    if cls == "ring" and op in ("all-reduce", "all-gather", "reduce-scatter"):
        steps = 2 * (n - 1) if op == "all-reduce" else n - 1
        inter_steps = (
            (2 * (n_nodes - 1) if op == "all-reduce" else n_nodes - 1) if n_nodes > 1 else 0
        )
        lat = base + (steps - inter_steps) * intra + inter_steps * inter
        out = np.full(sizes.shape[0], lat)
        if op == "all-reduce" and protocol == "simple" and n_nodes > 1:
            channels = channel_count(model, n_nodes, ppn)
            plateau = sizes / (channels * n) >= 64
            out[plateau] *= model.ring_plateau
        return out
    if cls == "tree" and op == "all-reduce":
        lat = base + 2 * ((ppn - 1) * intra + log_n * inter)
        return np.full(sizes.shape[0], lat)
    if cls == "collnet" and op == "all-reduce":
        local = 2 * (min(1, ppn - 1) * intra + model.collnet_intra_step_s * (ppn - 1))
        return np.full(sizes.shape[0], base + local + inter)
    if cls == "nvls" and op == "all-reduce":
        return np.full(sizes.shape[0], base + intra + (inter if n_nodes > 1 else 0.0))
    if cls == "nvlstree" and op == "all-reduce":
        return np.full(sizes.shape[0], base + intra + 2 * log_n * inter)
    return None


def bandwidth_factor(model: NcclModel, cls: str, protocol: str, n_nodes: int) -> float:
    """The share of the bus bandwidth a protocol keeps under an algorithm family.

    CollNet (an all-reduce in FabricLab) keeps the architecture's CollNetDirect share too.
    """
    if cls == "tree" and protocol == "ll128" and n_nodes <= 1:
        return model.tree_single_node_ll128
    if cls == "collnet":
        return model.bw_factor[cls][protocol] * model.collnet_direct_efficiency
    return model.bw_factor[cls][protocol]


def bus_bandwidth_cap(
    model: NcclModel, cls: str, protocol: str, n_nodes: int, n_channels: int
) -> float:
    """NCCL's cap on the bus bandwidth (bytes/s) of a family and protocol; inf for none.

    Ring LL: llMaxBws (one figure for the whole collective: the GPU's on one server, the
    host CPU's across servers); ring LL128: per channel; tree all-reduce: per channel, and
    for LL also llMaxBws.
    """
    ll_max = (
        model.ll_max_single_node
        if n_nodes <= 1
        else model.ll_max_multi_node["2" if n_nodes == 2 else "3+"]
    )
    key = _nodes_key(n_nodes)
    if cls == "ring":
        if protocol == "ll":
            return ll_max
        if protocol == "ll128":
            return n_channels * model.ring_ll128_per_channel
        return math.inf
    if cls == "tree":
        # The per-channel cap binds the 0.92 share; LL and LL128 then scale what is left.
        cap = n_channels * model.tree_per_channel[key]
        simple = model.bw_factor["tree"]["simple"]
        if protocol == "ll":
            return min(cap * model.bw_factor["tree"]["ll"] / simple, ll_max)
        if protocol == "ll128":
            scale = bandwidth_factor(model, "tree", "ll128", n_nodes) / simple
            return min(cap * scale, n_channels * model.tree_ll128_per_channel[key])
        return cap
    return math.inf


def algbw_per_busbw(cls: str, op: str, n: int) -> float:
    """How NCCL turns its bus bandwidth into algorithm bandwidth (ring: n / steps; tree: 1/2)."""
    if cls in ("tree", "collnet") and op == "all-reduce":
        return 0.5
    if op == "all-reduce":
        return n / (2 * (n - 1))
    if op in ("all-gather", "reduce-scatter"):
        return n / (n - 1)
    return 1.0
