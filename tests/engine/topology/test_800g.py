"""The 800G generation: HGX B300 (ConnectX-8) on Quantum-X800 Q3400 (XDR) and on Spectrum-4
SN5600 at 800G expands with 800G links and evaluates; the XDR preset has the leaf and spine
counts of NVIDIA's DGX SuperPOD B300 XDR table (2 SUs: 16 leaves, 8 spines)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.analysis import evaluate, load_preset
from engine.topology.expand import expand
from engine.topology.templates import generate

PARTS = ("permutation", "collective", "training", "cost")


@pytest.mark.parametrize(
    ("switch", "gpus", "tiers"),
    [("q3400", 1152, {"server": 144, "leaf": 16, "spine": 8}), ("sn5600", 1024, None)],
)
def test_b300_at_800g_expands_and_evaluates(switch, gpus, tiers, catalog):
    s = generate(
        "rail-optimized",
        gpus=gpus,
        server="hgx-b300",
        switch=switch,
        speed_gbps=800.0,
        catalog=catalog,
    )
    if tiers:
        assert {g.tier: g.count for g in s.groups} == tiers
    for b in s.bundles:
        b.cable = "xcvr-800g-osfp-dr8"  # the cable picker has no 800G single-port match
    fabric = expand(s, catalog)
    cable = fabric.network_link_mask()
    assert set(np.unique([b.speed_gbps for b in s.bundles])) == {800.0}
    assert fabric.link_capacity[cable].max() > 95e9  # 800 Gb/s less headers, in bytes/s
    result = evaluate(s, catalog, parts=PARTS)
    assert result.permutation.throughput_fraction.mean > 0.95
    assert result.training.step_s > 0 and result.cost.capex_usd > 0


# With NCCL's own pick (its tuner, blind to congestion) the two-plane RoCE preset runs
# NVLS-tree at 1 GiB, and DCQCN at NVIDIA's defaults, as the model reads them, costs its
# per-rail trees most of their rate (149 GB/s busbw; the fastest pair, forced, 242): the
# known gap of tests/validation/checks.py `barre-1k-allreduce-retune-gain` (issue 43).
# Strict, so that closing that gap makes this fail until the mark is taken off.
DCQCN_GAP = pytest.mark.xfail(
    strict=True, reason="DCQCN at the defaults costs NCCL's trees too much (issue 43)"
)


@pytest.mark.parametrize(
    "name", ["b300-ib-xdr-1152", pytest.param("b300-spectrumx-2plane-1k", marks=DCQCN_GAP)]
)
def test_the_800g_presets_evaluate_and_beat_400g_per_gpu(name, catalog):
    h100 = evaluate(load_preset("dgx-h100-ib-ndr-1k"), catalog, parts=("collective",))
    result = evaluate(load_preset(name), catalog, parts=PARTS)
    assert result.permutation.throughput_fraction.mean > 0.99
    assert result.cost.capex_usd > 0 and result.training.step_s > 0
    assert result.collective.rows[-1].busbw_GBps > h100.collective.rows[-1].busbw_GBps
