"""Today's systems in the step model: a GB200 NVL72 rack is one 72-GPU NVLink domain."""

from __future__ import annotations

from engine.catalog.devices import default_catalog
from engine.model.scenario import TrainingJob
from engine.topology import generators as gen
from engine.topology.expand import expand
from engine.training.step import train_step


def _step(server: str, tp: int) -> dict:
    cat = default_catalog()
    fabric = expand(gen.single_switch(72, server, "sn5600", catalog=cat), cat)
    return train_step(fabric, TrainingJob(model="gpt3-175b", tp=tp, pp=1, dp=3), cat)


def test_tp_of_24_stays_on_nvlink_in_an_nvl72_rack_but_not_across_hgx_servers():
    rack = _step("gb200-nvl72", 24)
    hgx = _step("hgx-h200", 24)
    assert rack["gpu"] == "gb200" and not any("spans" in n for n in rack["notes"])
    assert any("spans 3 servers" in n for n in hgx["notes"])
    # the same all-reduces: NVLink 5 inside the rack; between HGX servers each ring hop
    # leaves through a 400G NIC and pays the network's latency per step. The rack's NVLS
    # runs 24 heads x 24 channels, loops of 9-37 MiB, whose chunk-pipeline fill its
    # mid-size all-reduces pay (engine.collectives.chunk_pipeline): about half the HGX's.
    assert rack["comm_s"]["tp"]["raw_s"] < 0.55 * hgx["comm_s"]["tp"]["raw_s"]


def test_800g_connectx8_servers_move_tp_across_servers_faster_than_400g():
    cat = default_catalog()

    def tp_comm(server: str) -> float:
        fabric = expand(gen.rail_optimized(64, server, "sn5600", catalog=cat), cat)
        job = TrainingJob(model="llama3-70b", tp=16, pp=1, cp=1)
        return train_step(fabric, job, cat)["comm_s"]["tp"]["raw_s"]

    assert tp_comm("hgx-b300") < 0.75 * tp_comm("dgx-b200")
