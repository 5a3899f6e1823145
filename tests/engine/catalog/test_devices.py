"""The device catalog: every figure is sourced or a stated assumption, and entries are usable."""

from __future__ import annotations

import json

import pytest

from engine.catalog.devices import parse_catalog
from engine.catalog.errors import CatalogError
from engine.runtime.resources import resource_path

REQUIRED = {
    "gpu": {"bf16_dense_tflops", "hbm_gb", "tdp_w", "nvlink_bw_GBps", "price_usd"},
    "server": {
        "gpu",
        "gpus_per_server",
        "nic",
        "nics_per_server",
        "nic_port_gbps",
        "nvlink_bw_GBps",
        "nvlink_latency_ns",
        "power_w",
        "price_usd",
    },
    "switch": {"port_modes", "latency_ns", "power_w", "price_usd", "adaptive_routing"},
    "nic": {"port_gbps", "ports", "port_modes_gbps", "latency_ns", "power_w", "price_usd"},
    "cable": {"speed_gbps", "media", "max_length_m", "power_w"},
    "transceiver": {"speed_gbps", "media", "max_length_m", "power_w", "price_usd"},
}
ISSUE_MODELS = [
    "dgx-h100",
    "hgx-h100",
    "dgx-b200",
    "qm9700",
    "q3400",
    "sn5600",
    "th5-51t",
    "connectx-7",
    "connectx-8",
    "bluefield-3-b3140h",
    "dac-400g",
    "aoc-400g",
    "xcvr-400g-osfp-sr4",
    "xcvr-800g-osfp-2xdr4",
]


def test_models_the_engine_needs_are_present(catalog):
    for model in ISSUE_MODELS:
        catalog.get(model)


@pytest.mark.parametrize("kind", sorted(REQUIRED))
def test_every_device_has_the_fields_its_kind_needs(catalog, kind):
    devices = catalog.of_kind(kind)
    assert devices, f"no {kind} in the catalog"
    for device in devices:
        missing = REQUIRED[kind] - set(device.fields)
        assert not missing, f"{device.id} lacks {sorted(missing)}"


def test_every_figure_has_a_dated_source_or_an_assumption(catalog):
    for device in [*catalog.devices.values(), *catalog.technologies.values()]:
        for name, figure in device.fields.items():
            where = f"{device.id}.{name}"
            assert figure.source is not None or figure.assumption, where
            if figure.source is not None:
                assert figure.source.url and figure.source.published, where
                assert figure.source.grade in {"H", "M", "L", "D"}, where
                if figure.source.grade == "L":
                    assert figure.assumption, (
                        f"{where}: a low-confidence figure must say why it is used"
                    )


def test_servers_reference_their_gpu_and_nic(catalog):
    for server in catalog.of_kind("server"):
        catalog.get(server.value("gpu"), "gpu")
        nic = catalog.get(server.value("nic"), "nic")
        assert server.value("nic_port_gbps") in nic.value("port_modes_gbps")


def test_switch_port_modes_keep_the_same_switching_capacity(catalog):
    # Breakout modes split lanes: ports x speed is the same in every mode of one switch.
    for switch in catalog.of_kind("switch"):
        modes = catalog.switch_port_modes(switch.id)
        capacities = {speed * ports for speed, ports in modes.items() if speed >= 200}
        assert len(capacities) == 1, f"{switch.id}: {modes}"


def test_header_bytes_are_the_sum_of_the_protocol_headers(catalog):
    ib, roce = catalog.technology("infiniband"), catalog.technology("roce")
    # IB: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 bytes per packet.
    assert ib.value("header_bytes_per_packet") == 8 + 12 + 4 + 2
    # RoCEv2: Ethernet 14 + FCS 4 + preamble 8 + IFG 12 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 = 82.
    assert roce.value("header_bytes_per_packet") == 14 + 4 + 8 + 12 + 20 + 8 + 12 + 4


def _shipped():
    return json.loads(resource_path("catalog.json").read_text(encoding="utf-8"))


def test_a_figure_without_source_or_assumption_is_refused():
    data = _shipped()
    data["devices"][0]["fields"]["tdp_w"] = {"value": 1, "source": None}
    with pytest.raises(CatalogError, match="neither a source nor an assumption"):
        parse_catalog(data)


def test_an_unknown_source_key_is_refused():
    data = _shipped()
    field = next(iter(data["devices"][0]["fields"].values()))
    field["source"] = "no-such-source"
    with pytest.raises(CatalogError, match="unknown source key"):
        parse_catalog(data)
