"""The technology knobs in force for a fabric: catalog defaults with the scenario's overrides.

Collective timing reads them once per fabric: NVLink and NVLink SHARP (NVLS) efficiency of
the servers' GPU architecture, packet loss and its recovery (link-level retransmission,
go-back-N, selective repeat), the MTU, NCCL's tuner constants for that architecture and host
(`engine.collectives.nccl_model`), and whether every switch tier reduces in the network
(InfiniBand SHARP) and NCCL may use it (CollNet is off unless enabled, as in NCCL).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from engine.catalog.devices import Catalog
from engine.collectives.nccl_model import PROTOCOLS, NcclModel, nccl_model
from engine.topology.expand import NODE_GPU, NVLINK_BUNDLE, Fabric

__all__ = ["PROTOCOLS", "Technology", "gpu_architecture", "technology"]

ARCH_ORDER = ("sm80", "sm90", "sm100")


@dataclass
class Technology:
    """The technology knobs in force for a fabric (catalog defaults, scenario overrides)."""

    nvlink_efficiency: float
    nvls_efficiency: float
    packet_loss_rate: float
    loss_recovery: str
    mtu_bytes: int
    nccl: NcclModel
    sharp: bool  # every switch tier reduces in the network (InfiniBand SHARP)
    collnet: bool  # and NCCL's choice may use it


def gpu_architecture(fabric: Fabric, catalog: Catalog) -> tuple[str, str | None, object]:
    """The lowest GPU architecture among the fabric's servers (NCCL tunes for ccMin),
    the host CPU vendor of that server model, and its GPU catalog entry."""
    best: tuple[int, str, str | None, object] | None = None
    for g in fabric.scenario.groups:
        if g.kind != "server":
            continue
        server = catalog.get(g.model, "server")
        gpu = catalog.get(server.value("gpu"), "gpu")
        arch = str(gpu.value("compute_capability")) if gpu.has("compute_capability") else "sm90"
        rank = ARCH_ORDER.index(arch) if arch in ARCH_ORDER else len(ARCH_ORDER)
        cpu = str(server.value("cpu_vendor")) if server.has("cpu_vendor") else None
        if best is None or rank < best[0]:
            best = (rank, arch, cpu, gpu)
    if best is None:
        return "sm90", None, None
    return best[1], best[2], best[3]


def network_ports(fabric: Fabric) -> tuple[float, int, int]:
    """The slowest GPU network port (bytes/s, nominal), and the ports and GPUs of the
    server with the most GPUs: what NCCL's channel search sees of a server (0s: no port)."""
    edge = (fabric.link_bundle != NVLINK_BUNDLE) & (fabric.node_kind[fabric.link_src] == NODE_GPU)
    if not np.any(edge) or fabric.n_gpus == 0:
        return 0.0, 0, 0
    bundles = fabric.scenario.bundles
    rate = min(
        float(bundles[int(b)].speed_gbps) * 1e9 / 8 for b in np.unique(fabric.link_bundle[edge])
    )
    gpu_servers = fabric.gpu_server  # GPU i is node i
    gpus = np.bincount(gpu_servers)
    server = int(np.argmax(gpus))
    ports = int(np.count_nonzero(gpu_servers[fabric.link_src[edge]] == server))
    return rate, ports, int(gpus[server])


def technology(fabric: Fabric, catalog: Catalog) -> Technology:
    """The effective technology parameters of a fabric's scenario."""
    f = fabric.scenario.fabric
    tech = catalog.technology(f.technology)
    nccl_entry = catalog.technology("nccl")
    arch, cpu, gpu = gpu_architecture(fabric, catalog)
    model = nccl_model(catalog, arch, cpu)
    rate, ports, gpus = network_ports(fabric)
    if ports > 0:
        model = replace(model, net_port_rate=rate, net_ports_per_gpu=ports / gpus)
    nvlink_eff = float(nccl_entry.value("nvlink_bw_efficiency"))
    if gpu is not None and gpu.has("nvlink_links") and gpu.has("nvlink_bw_GBps"):
        # NCCL's figure per NVLink times the links, over the GPU's NVLink rate.
        nvlink_eff = min(
            1.0,
            model.nvlink_link_bw
            * float(gpu.value("nvlink_links"))
            / (float(gpu.value("nvlink_bw_GBps")) * 1e9),
        )
    switches = [
        catalog.get(g.model, "switch") for g in fabric.scenario.groups if g.kind == "switch"
    ]
    sharp = (
        f.technology == "infiniband"
        and bool(switches)
        and all(
            sw.has("in_network_reduction") and sw.value("in_network_reduction") for sw in switches
        )
    )
    collnet_setting = getattr(f, "collnet", None)
    collnet = sharp and (
        model.collnet_default if collnet_setting is None else bool(collnet_setting)
    )
    return Technology(
        nvlink_efficiency=nvlink_eff,
        nvls_efficiency=model.nvls_efficiency,
        packet_loss_rate=float(
            f.packet_loss_rate if f.packet_loss_rate is not None else tech.value("packet_loss_rate")
        ),
        loss_recovery=f.loss_recovery or str(tech.value("loss_recovery")),
        mtu_bytes=int(f.mtu_bytes or tech.value("mtu_bytes")),
        nccl=model,
        sharp=sharp,
        collnet=collnet,
    )
