"""Every transport knob moves the result the way its physics says.

Each case turns one knob of a shipped scenario through the door (`engine.analysis`) and
checks the direction of the figure the knob acts on; the directions were written before the
first run, from the mechanism, not from the model's output:

- PFC makes a RoCE incast lossless; without it, a small buffer drops.
- A larger port buffer drops less when the fabric is lossy.
- A higher PFC XOFF threshold lets the congested queue grow higher before it pauses.
- A lower ECN Kmin holds a shorter queue. (Not "marks more": at DCQCN's rest point the mark
  probability is what the rate law needs to hold the senders at their share, whatever Kmin
  is; Kmin moves the queue at which that probability is reached.) Where DCQCN has no rest
  point, in a collapse under PFC, this does not hold, per packet either: the case runs a
  4:1 incast.
- DCQCN (rate control on ECN marks) pauses less than PFC alone and frees the victim.
- InfiniBand CC frees the victim of a congestion tree that credits alone spread, where its
  marks can raise the senders' CCT index faster than the timer lowers it, and never makes
  the victim worse.
- A long cable with a small buffer caps an InfiniBand link at buffer over round trip.
- A larger MTU carries more payload per bit of line rate.
- More queue pairs per connection spread a permutation over more ECMP paths: no loss.
- The readings of NVIDIA's DCQCN registers (engine.transport.readings): DCE_TCP_G read as
  the gain of alpha's average forgets a congestion within one alpha period, so cuts that
  come a decrease period apart are small and an incast finishes no later than under the
  retention reading; a byte counter in 64-byte units (or none) raises the rate less often
  after the cuts, so the incast finishes no sooner than with one in bytes.
"""

from __future__ import annotations

import pytest

from engine.analysis import TransportWorkload, evaluate, transport_study
from engine.model.overrides import apply_override
from engine.presets.scenarios import load_preset

ROCE = "hgx-h100-roce-ecmp-1k"
IB = "dgx-h100-ib-ndr-1k"
INCAST = TransportWorkload(kind="incast", senders=16, bytes_per_flow=8 * 2**20, victim=True)
FOUR_TO_ONE = TransportWorkload(kind="incast", senders=4, bytes_per_flow=8 * 2**20, victim=False)


def study(preset: str, workload: TransportWorkload = INCAST, **settings: str):
    """The study of `workload` on `preset` with `settings` (``transport__pfc`` for the
    dotted ``transport.pfc``; ``_`` in a bundle id stands for ``-``)."""
    scenario = load_preset(preset)
    for path, text in settings.items():
        parts = path.split("__")
        if parts[0] == "bundles":
            parts[1] = parts[1].replace("_", "-")
        scenario = apply_override(scenario, ".".join(parts), text)
    return transport_study(scenario, workload)


def hottest(result):
    return result.hottest[0]


def test_pfc_makes_an_incast_lossless_and_without_it_a_small_buffer_drops() -> None:
    small = {"transport__port_buffer_bytes": "262144"}
    lossless = study(ROCE, transport__pfc="true", transport__pfc_xoff_bytes="131072", **small)
    lossy = study(ROCE, transport__pfc="false", **small)
    assert lossless.dropped_bytes == 0.0
    assert lossy.dropped_bytes > 0.0


def test_a_larger_buffer_drops_less_when_the_fabric_is_lossy() -> None:
    small = study(ROCE, transport__pfc="false", transport__port_buffer_bytes="262144")
    large = study(ROCE, transport__pfc="false", transport__port_buffer_bytes="4194304")
    assert large.dropped_bytes < small.dropped_bytes


def test_a_higher_xoff_lets_the_hot_queue_grow_higher_before_it_pauses() -> None:
    low = study(ROCE, transport__dcqcn="false", transport__pfc_xoff_bytes="65536")
    high = study(ROCE, transport__dcqcn="false", transport__pfc_xoff_bytes="524288")
    assert hottest(high).max_queue_bytes > hottest(low).max_queue_bytes


def test_a_lower_kmin_keeps_a_shorter_queue() -> None:
    # At a 4:1 incast, where DCQCN holds the queue by its marks. (Until 2026-12-06 this ran
    # the 16:1 incast with its victim; there the senders collapse and recover under PFC and
    # there is no rest point: per packet a lower Kmin holds a *longer* mean queue there,
    # 2.42 against 1.89 MB over 8 seeds, and the fluid reads both alike.) Per packet at
    # 4:1: 107 against 151 KB over 8 seeds.
    def run(kmin: int):
        return study(
            ROCE,
            FOUR_TO_ONE,
            transport__ecn_kmin_bytes=str(kmin),
            transport__ecn_kmax_bytes="1048576",
        )

    low, high = run(20_000), run(400_000)
    assert hottest(low).mean_queue_bytes < hottest(high).mean_queue_bytes


def test_dcqcn_pauses_less_than_pfc_alone_and_frees_the_victim() -> None:
    alone = study(ROCE, transport__dcqcn="false")
    with_cc = study(ROCE, transport__dcqcn="true")
    # Pauses hold the senders' uplinks (the ports feeding the full queue), not the queue's own.
    assert max(with_cc.bundle_pause_fraction.values()) < max(alone.bundle_pause_fraction.values())
    assert with_cc.victim_slowdown < alone.victim_slowdown


@pytest.mark.parametrize("senders", [4, 16])
def test_ib_cc_frees_the_victim_of_a_congestion_tree(senders: int) -> None:
    """At 4:1 the marks (one packet in 16 at the root) come faster than the 10 us timer
    lowers the index, and the victim is freed. At 16:1 credits hold each sender at 1/16 of
    the line, so a sender sees about 48,000 BECNs a second against 100,000 timer expiries:
    the index cannot climb and CC changes nothing; it must never make things worse."""
    incast = TransportWorkload(
        kind="incast", senders=senders, bytes_per_flow=8 * 2**20, victim=True
    )
    credits_only = study(IB, incast, transport__ib_cc="false")
    with_cc = study(IB, incast, transport__ib_cc="true")
    if senders == 4:
        assert with_cc.victim_slowdown < 0.9 * credits_only.victim_slowdown
    assert with_cc.victim_slowdown <= credits_only.victim_slowdown


def test_a_long_cable_with_a_small_buffer_caps_an_infiniband_link() -> None:
    pair = TransportWorkload(kind="incast", senders=1, bytes_per_flow=64 * 2**20)
    settings = {"transport__port_buffer_bytes": "131072"}
    short = study(IB, pair, **settings)
    long = study(IB, pair, bundles__servers_leaf__length_m="2000", **settings)
    assert long.throughput_Bps.mean < 0.5 * short.throughput_Bps.mean


@pytest.mark.parametrize("preset", [IB, ROCE])
def test_a_larger_mtu_carries_more_payload_per_bit(preset: str) -> None:
    def nic_goodput(mtu: int) -> float:
        scenario = apply_override(load_preset(preset), "fabric.mtu_bytes", str(mtu))
        return evaluate(scenario, parts=()).topology.endpoint_bandwidth_Bps

    assert nic_goodput(1024) < nic_goodput(2048) < nic_goodput(4096)


def test_more_queue_pairs_spread_a_permutation_without_a_penalty() -> None:
    def mean_fraction(qps: int) -> float:
        scenario = apply_override(load_preset(ROCE), "routing.flows_per_connection", str(qps))
        result = evaluate(scenario, parts=("permutation",))
        return result.permutation.transport.throughput_fraction.mean

    assert mean_fraction(4) >= mean_fraction(1)


def test_the_gain_reading_of_dce_tcp_g_cuts_less_than_the_retention_reading() -> None:
    retention = study(ROCE, FOUR_TO_ONE, transport__dcqcn_g_reading="retention")
    gain = study(ROCE, FOUR_TO_ONE, transport__dcqcn_g_reading="gain")
    assert gain.finished and retention.finished
    assert gain.makespan_s <= retention.makespan_s


@pytest.mark.parametrize(
    "setting",
    [{"transport__dcqcn_byte_unit_bytes": "64"}, {"transport__dcqcn_byte_counter": "false"}],
)
def test_a_slower_byte_counter_recovers_no_sooner(setting) -> None:
    in_bytes = study(ROCE, FOUR_TO_ONE)
    slower = study(ROCE, FOUR_TO_ONE, **setting)
    assert slower.finished and in_bytes.finished
    assert slower.makespan_s >= in_bytes.makespan_s
