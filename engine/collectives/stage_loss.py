"""What packet loss costs one routed stage: the bytes resent and the wait for recovery.

A lossy fabric (a RoCE fabric without PFC, or a link with a bit-error rate) loses packets on
every hop with the technology's loss rate. End-to-end recovery resends them: selective repeat
the lost packet alone, go-back-N every packet in flight behind it (a round trip at line rate),
so a flow carries more bytes than it delivers; and a step waits for its slowest flow, one
round trip more when any of its packets was lost. Link-level retransmission (InfiniBand)
resends on the link instead, which the link capacities already carry.
"""

from __future__ import annotations

import numpy as np

from engine.collectives.technology import Technology
from engine.routing.router import RoutedFlows
from engine.topology.expand import NVLINK_BUNDLE, Fabric


def stage_loss(
    fabric: Fabric, tech: Technology, routed: RoutedFlows, network_flow: np.ndarray
) -> tuple[np.ndarray, float, float]:
    """The bytes each routed flow sends at one byte of message (its own bytes, more under
    loss), the log of the chance that no network packet of the step is lost (per byte of
    message), and the round trip a step that lost one waits for."""
    sizes = routed.flow_bytes  # read-only, shared: the lossy branches make new arrays
    p = tech.packet_loss_rate
    if p <= 0 or not np.any(network_flow):
        return sizes, 0.0, 0.0
    network_entry = fabric.link_bundle[routed.entry_link] != NVLINK_BUNDLE
    hops = np.add.reduceat(network_entry * routed.entry_weight, routed.flow_ptr[:-1])
    flow_loss = 1 - (1 - p) ** hops  # per packet, end to end
    rtt = 2 * routed.latency
    if tech.loss_recovery == "go-back-n":
        window = np.maximum(1.0, fabric.gpu_line_rate[routed.src_gpu] * rtt / tech.mtu_bytes)
        sizes = sizes * (1 + flow_loss * window)  # every loss resends the window in flight
    elif tech.loss_recovery == "selective-repeat":
        sizes = sizes * (1 + flow_loss)
    if tech.loss_recovery == "link-retransmit":
        return sizes, 0.0, 0.0
    # A step waits for its slowest flow: one round trip more when any flow lost a packet.
    packets_per_byte = routed.flow_bytes[network_flow] / tech.mtu_bytes
    loss_log = float(np.sum(packets_per_byte * np.log1p(-flow_loss[network_flow])))
    return sizes, loss_log, float(rtt[network_flow].max())
