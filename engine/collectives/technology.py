"""The technology knobs in force for a fabric: catalog defaults with the scenario's overrides.

Collective timing reads them once per fabric: NVLink and NVLink SHARP (NVLS) efficiency,
packet loss and its recovery (link-level retransmission, go-back-N, selective repeat), the
MTU, NCCL's per-protocol bandwidth factors and base and per-step latencies (LL, LL128,
Simple), and whether every switch tier reduces in the network (InfiniBand SHARP).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.catalog.devices import Catalog
from engine.topology.expand import Fabric

PROTOCOLS = ("ll", "ll128", "simple")


@dataclass
class Technology:
    """The technology knobs in force for a fabric (catalog defaults, scenario overrides)."""

    nvlink_efficiency: float
    nvls_efficiency: float
    packet_loss_rate: float
    loss_recovery: str
    mtu_bytes: int
    bw_factor: dict[str, float]
    base_latency_s: dict[str, dict[str, float]]
    step_net_s: dict[str, dict[str, float]]
    step_nvlink_s: dict[str, dict[str, float]]
    sharp: bool


def technology(fabric: Fabric, catalog: Catalog) -> Technology:
    """The effective technology parameters of a fabric's scenario."""
    f = fabric.scenario.fabric
    tech = catalog.technology(f.technology)
    nccl = catalog.technology("nccl")

    def us(table: dict) -> dict[str, dict[str, float]]:
        return {algo: {p: v * 1e-6 for p, v in row.items()} for algo, row in table.items()}

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
    return Technology(
        nvlink_efficiency=float(nccl.value("nvlink_bw_efficiency")),
        nvls_efficiency=float(nccl.value("nvls_efficiency")),
        packet_loss_rate=float(
            f.packet_loss_rate if f.packet_loss_rate is not None else tech.value("packet_loss_rate")
        ),
        loss_recovery=f.loss_recovery or str(tech.value("loss_recovery")),
        mtu_bytes=int(f.mtu_bytes or tech.value("mtu_bytes")),
        bw_factor={p: float(nccl.value(f"protocol_bw_factor_{p}")) for p in PROTOCOLS},
        base_latency_s=us(nccl.value("base_latency_us")),
        step_net_s=us(nccl.value("step_latency_net_us")),
        step_nvlink_s=us(nccl.value("step_latency_nvlink_us")),
        sharp=sharp,
    )
