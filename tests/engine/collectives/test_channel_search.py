"""NCCL's channel count across servers: the search's per-channel speed and its doubling."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.collectives.nccl_model import channel_count, nccl_model, search_channels

GBPS = 1e9 / 8  # bytes/s per Gb/s


@pytest.mark.parametrize(
    ("arch", "port_gbps", "ports", "channels"),
    [
        ("sm90", 400, 8, 8),  # 48 GB/s per channel, under 50 with 8 > 4 channels: kept
        ("sm100", 400, 8, 8),
        ("sm100", 800, 8, 16),  # 96 GB/s per channel: doubled
        ("sm90", 400, 4, 8),  # 4 channels are not more than 4: doubled
        ("sm90", 400, 1, 2),
        ("sm90", 200, 8, 8),  # 24 GB/s per channel, under 25: never doubled
        ("sm80", 400, 8, 16),  # the exception is for GPUs above sm80 only
    ],
)
def test_search_channels_follow_ncclTopoDupChannels(catalog, arch, port_gbps, ports, channels):  # noqa: N802
    model = nccl_model(catalog, arch)
    assert search_channels(model, port_gbps * GBPS, ports) == channels


def test_one_server_keeps_the_catalog_figure_per_gpu(catalog):
    model = replace(nccl_model(catalog, "sm90"), net_port_rate=400 * GBPS, net_ports_per_gpu=1)
    assert channel_count(model, 1, 8) == model.channels_per_nic * 8
    assert channel_count(model, 16, 8) == 8
    assert channel_count(model, 16, 1) == 2  # one rank per server: one NIC's channels
