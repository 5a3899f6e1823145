"""How large each number in a scenario may be before the reader refuses it.

These are bounds of sense, not of taste: past them a value cannot describe a buildable
fabric or job (a group of more than 16.7 million devices, a cable of more than 1,000 km,
a message larger than an exbibyte), and the engine would overflow, run out of memory or
compute infinities. The reader (`engine.model.scenario`) refuses a value beyond its bound
before anything is built, naming the field and the bound; the domain checks of
`engine.model.validation` (at least 1, within (0, 1], ...) then judge what is left, so a
file with a zero count still opens and shows its problem on the canvas.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limit:
    """The largest magnitude a field takes, and what that means in words."""

    largest: float
    meaning: str


INT64_MAX = 2**63 - 1
MAX_TEXT_CHARS = 100_000  # a name or description longer than a short book is not one

# (dataclass name, field name) -> bound; a list, tuple or dict field bounds its elements.
LIMITS: dict[tuple[str, str], Limit] = {
    ("DeviceGroup", "count"): Limit(2**24, "devices in one group"),
    ("DeviceGroup", "position"): Limit(1e9, "canvas units from the origin"),
    ("DeviceGroup", "overrides"): Limit(1e15, "for a catalog figure"),
    ("LinkBundle", "links_per_pair"): Limit(4096, "cables between one pair of devices"),
    ("LinkBundle", "speed_gbps"): Limit(1e6, "Gb/s per cable"),
    ("LinkBundle", "blocks"): Limit(2**24, "blocks"),
    ("LinkBundle", "length_m"): Limit(1e6, "metres of cable (1,000 km)"),
    ("FabricSettings", "switch_latency_ns"): Limit(1e9, "ns per switch (one second)"),
    ("FabricSettings", "nic_latency_ns"): Limit(1e9, "ns per NIC (one second)"),
    ("FabricSettings", "header_efficiency"): Limit(1e3, "for a fraction, which lies in 0..1"),
    ("FabricSettings", "mtu_bytes"): Limit(2**20, "bytes per packet"),
    ("FabricSettings", "packet_loss_rate"): Limit(1e3, "for a fraction, which lies in 0..1"),
    ("TransportSettings", "pfc_xoff_bytes"): Limit(1e12, "bytes of buffer"),
    ("TransportSettings", "ecn_kmin_bytes"): Limit(1e12, "bytes of queue"),
    ("TransportSettings", "ecn_kmax_bytes"): Limit(1e12, "bytes of queue"),
    ("TransportSettings", "ecn_pmax"): Limit(1e3, "for a probability, which lies in 0..1"),
    ("TransportSettings", "port_buffer_bytes"): Limit(1e12, "bytes of buffer per port"),
    ("TransportSettings", "dcqcn_byte_unit_bytes"): Limit(2**20, "bytes per byte-counter unit"),
    ("Job", "gpus"): Limit(2**31, "GPUs in one job"),
    ("Job", "message_bytes"): Limit(1e15, "bytes per rank"),
    ("Job", "seed"): Limit(2**63, "for a seed"),
    ("RoutingPolicy", "seed"): Limit(2**64, "for a seed (validation asks 0 to 2^63 - 1)"),
    ("RoutingPolicy", "flows_per_connection"): Limit(4096, "flows (queue pairs) per connection"),
    ("TrainingJob", "tp"): Limit(2**24, "ranks"),
    ("TrainingJob", "pp"): Limit(2**24, "ranks"),
    ("TrainingJob", "dp"): Limit(2**24, "ranks"),
    ("TrainingJob", "ep"): Limit(2**24, "ranks"),
    ("TrainingJob", "cp"): Limit(2**24, "ranks"),
    ("TrainingJob", "micro_batch"): Limit(2**24, "sequences per micro-batch"),
    ("TrainingJob", "global_batch"): Limit(2**40, "sequences per step"),
    ("TrainingJob", "seq_len"): Limit(2**30, "tokens per sequence"),
    ("TrainingJob", "zero_stage"): Limit(2**10, "for a ZeRO stage, which is -1..3"),
    ("TrainingJob", "compute_efficiency"): Limit(1e3, "for a fraction, which lies in 0..1"),
    ("TrainingJob", "overrides"): Limit(1e18, "for a model or step figure"),
    ("Workload", "seed"): Limit(2**64, "for a seed (validation asks 0 to 2^63 - 1)"),
    ("Calibration", "version"): Limit(2**31, "fits saved under one name"),
    ("Calibration", "nic_efficiency"): Limit(1e3, "for a factor, which lies in 0.05..1.2"),
    ("Calibration", "latency_scale"): Limit(1e3, "for a factor, which lies in 0.05..20"),
    ("Calibration", "simple_efficiency"): Limit(1e3, "for a factor, which lies in 0.2..1.2"),
    ("Calibration", "fit_error"): Limit(1e6, "for a relative error"),
    ("Workload", "message_bytes"): Limit(2**60, "bytes per message (one exbibyte)"),
    ("Workload", "ranks"): Limit(2**31, "ranks"),
    ("Workload", "placement"): Limit(2**31, "for a GPU index"),
    ("TrafficFlow", "src"): Limit(2**31, "for a GPU index"),
    ("TrafficFlow", "dst"): Limit(2**31, "for a GPU index"),
    ("TrafficFlow", "bytes"): Limit(2**60, "bytes per flow (one exbibyte)"),
    ("TrafficFlow", "start_s"): Limit(1e6, "seconds of start time"),
    ("SwitchFailure", "index"): Limit(2**31, "for a switch index"),
    ("LinkFailure", "links_down"): Limit(2**40, "cables"),
}


def limit_of(owner: str, name: str) -> Limit | None:
    """The bound of field `name` of the dataclass named `owner`, if it has one."""
    return LIMITS.get((owner, name))


def beyond(value: float, limit: Limit | None) -> str | None:
    """Why `value` is refused under `limit` (None when it is within)."""
    largest = limit.largest if limit is not None else INT64_MAX
    if abs(value) <= largest:
        return None
    shown = f"{value:.6g}" if isinstance(value, float) else _digits(value)
    bound = f"{largest:,}" if isinstance(largest, int) else f"{largest:,.0f}"
    meaning = f" {limit.meaning}" if limit is not None else ""
    return f"{shown} is beyond what this field can hold (at most {bound}{meaning})"


def _digits(value: int) -> str:
    text = str(value)
    return text if len(text) <= 24 else f"a number of {len(text)} digits"
