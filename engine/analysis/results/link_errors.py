"""Link errors as the door returns them: post-FEC loss per link and what it costs a step.

`LinkErrorsResult` holds, for one scenario at one pre-FEC bit error ratio, the FEC code and
its latency per link, the packet loss per link the FEC leaves, the packets the training step
sends over the network and how many of them are expected to be lost, and the step time under
the fabric's own recovery, under link-level retry and under end-to-end go-back-N (one
`RecoveryCost` each), so that the two can be compared at the same BER.
"""

# Field names are the JSON keys; times in s, latencies in ns as named.

from __future__ import annotations

from dataclasses import dataclass

from engine.analysis.results.codec import JsonResult


@dataclass(frozen=True)
class RecoveryCost(JsonResult):
    """One way of recovering lost packets: the training step's time with it and the time
    the losses add over the step without link errors."""

    recovery: str
    step_s: float
    cost_s: float


@dataclass(frozen=True)
class LinkErrorsResult(JsonResult):
    """Link errors of one scenario: the FEC, the loss it leaves and what the loss costs.

    ``packet_loss_per_link`` is the post-FEC loss of one packet of ``packet_bytes`` on one
    link; ``expected_losses_per_step`` multiplies it out over the step's network packets
    (``network_packets_per_step``, an estimate from the step's collectives) crossing
    ``links_per_path`` links. `recovery` is the fabric's own (link retry where the
    technology has it); `costs` compares it with the others at the same BER.
    ``fec_path_latency_added_s`` and ``fec_latency_cost_s`` are what the FEC's latency on
    every link adds to the step's path latency and to the step, apart from any loss.
    """

    technology: str
    scenario: str
    fec: str
    pre_fec_ber: float
    pre_fec_ber_limit: float
    within_limit: bool
    codeword_loss: float
    packet_bytes: float
    packet_loss_per_link: float
    links_per_path: int
    fec_latency_ns: float
    fec_path_latency_ns: float
    fec_path_latency_added_s: float
    fec_latency_cost_s: float
    link_retry: bool
    network_packets_per_step: float
    expected_losses_per_step: float
    base_step_s: float
    recovery: str
    step_s: float
    cost_s: float
    costs: tuple[RecoveryCost, ...]
    notes: tuple[str, ...]
