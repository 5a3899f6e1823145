"""The NIC's congestion control reaches the transport model and moves its result."""

from __future__ import annotations

from engine.analysis import transport_study
from engine.analysis.results import TransportWorkload
from engine.catalog.devices import default_catalog
from engine.topology.generators import single_switch
from engine.transport.from_scenario import nic_dcqcn_profile


def test_the_servers_nic_chooses_the_dcqcn_profile():
    cat = default_catalog()
    assert nic_dcqcn_profile(single_switch(128, "hgx-h100", "th5-51t"), cat) == "dcqcn-nvidia"
    thor2 = single_switch(128, "hgx-h100-thor2", "th5-51t")
    assert nic_dcqcn_profile(thor2, cat) == cat.get("thor2-400g").value("cc_profile")


def test_a_nic_whose_cc_reacts_later_leaves_more_of_an_incast_to_pfc():
    # ConnectX-7 runs NVIDIA's DCQCN (a CNP every 4 us); the Thor2 stand-in runs the DCQCN
    # paper's parameters (a CNP every 50 us): its senders slow down later, so the switch
    # queue reaches XOFF and pauses the uplinks, and the bystander flow sharing the first
    # sender's uplink is held back.
    workload = TransportWorkload(kind="incast", senders=15, bytes_per_flow=8 * 2**20, victim=True)
    fast = transport_study(single_switch(128, "hgx-h100", "th5-51t"), workload)
    slow = transport_study(single_switch(128, "hgx-h100-thor2", "th5-51t"), workload)
    assert "dcqcn" in fast.mechanisms and "dcqcn" in slow.mechanisms
    pause = lambda r: max(p.pause_fraction for p in r.hottest)  # noqa: E731
    assert pause(slow) > pause(fast)
    assert slow.victim_slowdown > fast.victim_slowdown
