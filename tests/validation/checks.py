"""The validation checks: a model figure against a published measurement, tolerance up front.

Each check names the published figure (tests/validation/published.json, with its source),
computes the model's value on a shipped preset with the engine's defaults (never tuned to
the figure), and states its tolerance before the comparison. `known_gap` records a check
the model fails, with why; the test suite expects it to fail until the model changes.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.catalog.devices import default_catalog
from engine.collectives.placement import placement
from engine.collectives.timing import CollectiveEngine
from engine.presets.scenarios import load_preset
from engine.topology.expand import expand

PUBLISHED = Path(__file__).with_name("published.json")
GIB = 2.0**30


@dataclass(frozen=True)
class Check:
    """One comparison of the model with a published figure."""

    figure: str
    what: str
    model: Callable[[], float]
    tolerance: float
    unit: str
    explanation: str
    known_gap: str = ""


@functools.cache
def published() -> dict[str, dict]:
    """Published figures by id."""
    return {f["id"]: f for f in json.loads(PUBLISHED.read_text(encoding="utf-8"))["figures"]}


@functools.cache
def _engine(preset: str) -> tuple:
    catalog = default_catalog()
    fabric = expand(load_preset(preset), catalog)
    return fabric, CollectiveEngine(fabric, catalog)


def busbw(preset: str, op: str, ranks: int, size: float, algorithm: str = "auto") -> float:
    """Model bus bandwidth (GB/s) of `op` over the first `ranks` GPUs of a preset."""
    fabric, engine = _engine(preset)
    return engine.run(op, placement(fabric, ranks), np.array([size]), algorithm).rows[0][
        "busbw_GBps"
    ]


def alltoall_per_nic(preset: str, servers: int) -> float:
    """Model per-GPU network rate (GB/s) of a 1 GiB all-to-all over the GPUs of `servers`
    servers: its busbw x (N - 1) / N, N the servers (nccl-tests #130)."""
    ranks = 8 * servers
    return busbw(preset, "all-to-all", ranks, GIB) * (servers - 1) / servers


def nic_goodput(preset: str) -> float:
    """Model send/recv bandwidth (GB/s) between GPU 0 of two servers: one NIC's goodput."""
    fabric, engine = _engine(preset)
    ranks = fabric.server_first_gpu[:2].astype(np.int64)
    return engine.run("send-recv", ranks, np.array([GIB]), "ring").rows[0]["busbw_GBps"]


def megatron_96_mfu() -> float:
    """Model MFU of GPT-3 175B on 96 DGX H100 (TP 8, PP 12), global batch 1152."""
    from engine.model.scenario import TrainingJob
    from engine.topology import generators as gen
    from engine.training.step import train_step

    catalog = default_catalog()
    fabric = expand(gen.rail_optimized(96, "dgx-h100", "qm9700", catalog=catalog), catalog)
    return train_step(fabric, TrainingJob(model="gpt3-175b", global_batch=1152), catalog)["mfu"]


def retune_gain_pct(preset: str) -> float:
    """Model gain (%) of an all-reduce's average busbw over 8 B .. 8 GiB (powers of two, as
    nccl-tests sweeps) on all GPUs of a RoCE preset when its NICs run the catalog's
    ``dcqcn-barre-retune`` profile instead of their own (NVIDIA's defaults)."""
    from engine.model.overrides import apply_override

    catalog = default_catalog()
    sizes = 8.0 * 2.0 ** np.arange(31)
    averages = []
    for profile in (None, "dcqcn-barre-retune"):
        scenario = load_preset(preset)
        if profile is not None:
            scenario = apply_override(scenario, "transport.dcqcn_profile", profile)
        fabric = expand(scenario, catalog)
        rows = CollectiveEngine(fabric, catalog).run("all-reduce", np.arange(fabric.n_gpus), sizes)
        averages.append(np.mean([r["busbw_GBps"] for r in rows.rows]))
    return 100.0 * (averages[1] / averages[0] - 1.0)


def meta_training_parity() -> float:
    """Model step time of the 1k presets' training job on the Spectrum-X preset without DCQCN
    (PFC alone, as Meta runs RoCE) over the same on the InfiniBand preset."""
    from engine.model.overrides import apply_override
    from engine.training.step import train_step

    catalog = default_catalog()
    steps = []
    for scenario in (
        apply_override(load_preset(SPECTRUM_X), "transport.dcqcn", "false"),
        load_preset(IB),
    ):
        fabric = expand(scenario, catalog)
        steps.append(train_step(fabric, scenario.workload.training, catalog)["step_s"])
    return steps[0] / steps[1]


def ring_rs_per_nic_gbps(preset: str) -> float:
    """Model per-NIC rate (Gb/s) of a ring reduce-scatter of 1 GiB over 64 GPUs (8 servers)
    of a RoCE preset: the busbw (GB/s) over the server's 8 NICs, in bits."""
    return 8.0 * busbw(preset, "reduce-scatter", 64, GIB, "ring") / 8


def alltoall_dcqcn_over_ib() -> float:
    """Model all-to-all busbw of 256 GPUs, RoCE (DCQCN at the defaults) over InfiniBand on
    the same rail-optimized fabric, averaged over 128 MiB .. 16 GiB in powers of two."""
    from engine.analysis import convert_technology
    from engine.topology import generators as gen

    catalog = default_catalog()
    ib = gen.rail_optimized(256, "dgx-h100", "qm9700", catalog=catalog)
    sizes = 2.0 ** np.arange(27, 35)
    means = []
    for scenario in (convert_technology(ib, "roce", catalog), ib):
        fabric = expand(scenario, catalog)
        rows = CollectiveEngine(fabric, catalog).run("all-to-all", np.arange(256), sizes).rows
        means.append(np.mean([r["busbw_GBps"] for r in rows]))
    return means[0] / means[1]


IB = "dgx-h100-ib-ndr-1k"
ROCE = "hgx-h100-roce-ecmp-1k"
SPECTRUM_X = "dgx-h100-roce-spectrumx-1k"

CHECKS = [
    Check(
        "meta-roce-ib-training-parity",
        "training step, RoCE with PFC and no DCQCN over InfiniBand, 1,024 H100s",
        meta_training_parity,
        0.05,
        "",
        "The job's traffic is rings (DP over rails, TP inside the servers, PP point to point) "
        "that a 1:1 rail-optimized fabric does not congest, so PFC alone runs them at the NICs' "
        "rate on either technology. The tolerance (5%: 'equivalent') was written first.",
    ),
    Check(
        "barre-64-ring-per-nic",
        "ring reduce-scatter per NIC, 64 GPUs, RoCE 400G, DCQCN at the defaults, 1 GiB",
        lambda: ring_rs_per_nic_gbps(SPECTRUM_X),
        0.05,
        "Gb/s",
        "Each ring crosses servers on its own rail: no two flows share a link, DCQCN sees no "
        "mark, and NCCL's channels drive each NIC at 48 of its 50 GB/s (search.cc). The "
        "tolerance was written first.",
        known_gap="the model reads 345 Gb/s at 1 GiB (11.6% low): the transport runs the "
        "rings at their ideal (efficiency 1.00, no mark), but the ring's 63 steps of NCCL "
        "latency and path take 0.31 ms of the 3.06 ms; at 8 GiB the model reads 378.7 (3% "
        "low). The measurement's average does not say over which sizes; the size of the "
        "check (1 GiB) was chosen before the first run and is kept.",
    ),
    Check(
        "barre-256-alltoall-dcqcn-vs-ib",
        "all-to-all busbw, 256 GPUs, RoCE with DCQCN at the defaults over InfiniBand",
        alltoall_dcqcn_over_ib,
        0.10,
        "",
        "All-to-all loads every spine link; RoCE's DCQCN and PFC against IB's credits on the "
        "same fabric. The tolerance (10%, for a ratio derived from two statements) was "
        "written first.",
        known_gap="the model reads 1.00: both technologies move the all-to-all at the "
        "NICs' rate on this non-blocking fabric with adaptive routing, and DCQCN costs it "
        "nothing, where Barre measured DCQCN fluctuating at 128 MB-1 GB and 15% below. "
        "The receivers' many-to-one DCQCN state is what the model may lack here.",
    ),
    Check(
        "barre-1k-allreduce-retune-gain",
        "all-reduce average busbw gain from DCQCN's retune, 1,024 GPUs, RoCE 400G",
        lambda: retune_gain_pct(SPECTRUM_X),
        0.15,
        "%",
        "DCQCN's reaction point per flow class: at NVIDIA's defaults the trees' synchronised "
        "2:1 receivers dip for milliseconds (fast recovery rides the queue up, the drain marks "
        "every packet, the 300 us timer lifts the floor); the retune's small cuts and 50 us "
        "timer keep the link full. The tolerance is this file's; the model's figure (20.3%) "
        "was first computed the day the check was written, with nothing tuned to it.",
        known_gap="with NCCL's own pick, blind to congestion, the trees and NVLS-trees "
        "DCQCN hurts run at every large size, and the model reads 41.7%. The firmware readings no document "
        "settles span the figure: G = 1019 as the gain of alpha's average (mstflint's "
        "equation) 0.3%, as its retention (the default: Mellanox community DOC-2790 v19, "
        "Google Isekai) 41.7%, the byte counter in 64-byte units (Isekai) 153%, none (the "
        "HPCC artifact) 123%, CNPs paced per port (mstflint's 'from the port', "
        "transport.dcqcn_cnp_pacing) 0.3%. The measurement lies between the two readings of "
        "alpha and between the two of CNP pacing; the cut at the decrease period's tick is "
        "a reading not yet modelled.",
    ),
    Check(
        "intra8-ring-maintainer",
        "all-reduce busbw, ring, 8 x H100 in one server, 8 GiB",
        lambda: busbw(IB, "all-reduce", 8, 8 * GIB, "ring"),
        0.15,
        "GB/s",
        "NVLink at NCCL's own per-link figure (20.6 of 25 GB/s, topo.h) with 8 ring channels; the "
        "match follows from that constant, the test shows the ring and latency model keep it.",
    ),
    Check(
        "intra8-nvls-azure-8GiB",
        "all-reduce busbw, NVLS, 8 x H100 in one server, 8 GiB",
        lambda: busbw(IB, "all-reduce", 8, 8 * GIB, "nvls"),
        0.15,
        "GB/s",
        "Each GPU's NVLink carries S + S/8 each way at NCCL's NVLink figure times its Hopper "
        "NVLS efficiency (0.85).",
    ),
    Check(
        "inter2-ring-tuned-8GiB",
        "all-reduce busbw, ring, 2 servers (16 GPUs), 8 x 400G NDR, 8 GiB",
        lambda: busbw(IB, "all-reduce", 16, 8 * GIB, "ring"),
        0.15,
        "GB/s",
        "8 rings, each crossing servers on its own rail: bound by 8 NICs at 400G x IB header "
        "efficiency.",
    ),
    Check(
        "inter4-default-16GiB",
        "all-reduce busbw, NCCL's choice, 4 servers (32 GPUs), 16 GiB",
        lambda: busbw(IB, "all-reduce", 32, 16 * GIB),
        0.15,
        "GB/s",
        "auto picks the fastest of ring, tree, hierarchical and SHARP per size, as NCCL's tuner.",
    ),
    Check(
        "inter8-tuned-8GiB",
        "all-reduce busbw, 8 servers (64 GPUs), 8 GiB",
        lambda: busbw(IB, "all-reduce", 64, 8 * GIB),
        0.15,
        "GB/s",
        "The same cluster's untuned default measured 320.7 GB/s: NCCL's CTA and QP settings, "
        "which the model does not represent, are worth 20% here.",
    ),
    Check(
        "per-nic-ndr-effective",
        "one 400G NDR NIC's goodput (send/recv between two servers, 1 GiB)",
        lambda: nic_goodput(IB),
        0.10,
        "GB/s",
        "400 Gb/s x 4096/4122 header efficiency = 49.7 GB/s; measured NCCL goodput is 46-48.",
    ),
    Check(
        "alltoall-per-nic-maintainer",
        "all-to-all per-GPU network rate, 6 servers (48 GPUs), RoCE 400G, 1 GiB",
        lambda: alltoall_per_nic(ROCE, 6),
        0.15,
        "GB/s",
        "All-to-all cannot aggregate NICs: each GPU's traffic leaves through its own NIC, which "
        "NCCL's channels drive at 48 of its 50 GB/s (search.cc), the rest of a GPU's data "
        "riding NVLink beside it. The maintainers' figure is per NIC, so the model's per-GPU "
        "network rate is compared, busbw x (N - 1) / N for N servers (sjeaugey, nccl-tests "
        "#130: busbw -> N/(N-1) x per-GPU network BW, as the figure's note says).",
    ),
    Check(
        "megatron-h100-gpt3-96gpu-mfu",
        "GPT-3 175B MFU on 96 H100 (TP 8, PP 12, batch 1152)",
        megatron_96_mfu,
        0.15,
        "",
        "Kernel by kernel: matmuls at the H100's measured ceiling with tile and wave "
        "quantization, fused attention, norms and element-wise kernels at HBM speed, the "
        "optimizer step; 1F1B with the slowest stage (the output layer's) setting the pace, "
        "TP all-reduces exposed, DP hidden behind the last backward.",
    ),
]
