"""The training step: presets, step arithmetic and the latency claim.

Published shapes are checked against their sources (GPT-3: Brown et al. 2020 Table 2.1 and
mlcommons/training run_gpt3.sh; Llama 3: arXiv 2407.21783 Table 3; Mixtral: arXiv
2401.04088 Table 1).
"""

from __future__ import annotations

import dataclasses

import pytest

from engine.catalog.model_presets import MODEL_PRESETS, SOURCES, check_provenance, get_model
from engine.model.scenario import TrainingJob
from engine.training.step import latency_claim, latency_sweep, train_step

LATENCIES_NS = [1000.0, 5000.0, 10000.0, 20000.0]


@pytest.fixture(scope="module")
def gpt3_1k(fabric_1k):
    """GPT-3 175B with its default layout on the 1k preset."""
    return train_step(fabric_1k)


# --- presets ---------------------------------------------------------------------------------


def test_presets_have_the_published_shapes():
    g = get_model("gpt3-175b")
    assert (g.layers, g.d_model, g.ffn, g.heads, g.seq_len, g.vocab) == (
        96,
        12288,
        4 * 12288,
        96,
        2048,
        51200,
    )
    l70 = get_model("llama3-70b")
    assert (l70.layers, l70.d_model, l70.ffn, l70.heads, l70.kv_heads, l70.vocab) == (
        80,
        8192,
        28672,
        64,
        8,
        128256,
    )
    assert l70.seq_len == 8192
    l405 = get_model("llama3-405b")
    assert (l405.layers, l405.d_model, l405.ffn, l405.heads, l405.kv_heads, l405.vocab) == (
        126,
        16384,
        53248,
        128,
        8,
        128256,
    )
    assert l405.seq_len == 8192
    mx = get_model("mixtral-8x7b")
    assert (mx.layers, mx.d_model, mx.ffn, mx.heads, mx.kv_heads, mx.vocab) == (
        32,
        4096,
        14336,
        32,
        8,
        32000,
    )
    assert (mx.experts, mx.top_k) == (8, 2)


def test_published_default_layouts():
    g = get_model("gpt3-175b")  # Megatron SC'21 Table 2
    assert (g.tp, g.pp, g.micro_batch, g.global_batch) == (8, 12, 1, 1536)
    l405 = get_model("llama3-405b")  # Llama 3 Table 4, 16K GPUs
    assert (l405.tp, l405.cp, l405.pp, l405.reference_gpus) == (8, 1, 16, 16384)
    assert l405.global_batch == 16 * 128
    assert get_model("mixtral-8x7b").ep == 8


@pytest.mark.parametrize("model_id", list(MODEL_PRESETS))
def test_every_preset_figure_has_a_source_or_assumption(model_id):
    preset = MODEL_PRESETS[model_id]
    assert check_provenance(preset) == []
    for prov in preset.provenance.values():
        assert prov.source is None or prov.source in SOURCES


# --- the step --------------------------------------------------------------------------------


def test_step_is_compute_plus_exposed_comm_plus_bubble_plus_optimizer(gpt3_1k):
    r = gpt3_1k
    assert r["step_s"] == pytest.approx(
        r["compute_s"] + r["exposed_comm_s"] + r["bubble_s"] + r["optimizer_s"], abs=1e-9
    )
    assert r["optimizer_s"] > 0
    assert r["compute_s"] == pytest.approx(sum(r["compute_parts_s"].values()), rel=1e-9)
    assert r["exposed_comm_s"] == pytest.approx(
        sum(c["exposed_s"] for c in r["comm_s"].values()), abs=1e-12
    )
    for c in r["comm_s"].values():
        assert 0.0 <= c["exposed_s"] <= c["raw_s"] + 1e-12
    assert set(r["comm_s"]) == {"tp", "pp", "dp", "ep", "cp"}
    assert set(r["layout"]) >= {"tp", "pp", "dp", "ep", "cp", "micro_batches"}
    assert isinstance(r["notes"], list)


def test_utilization_and_mfu_are_bounded(gpt3_1k):
    r = gpt3_1k
    assert 0.0 < r["gpu_utilization"] <= 1.0
    assert 0.0 < r["mfu"] <= r["compute_efficiency"]
    assert r["mfu"] == pytest.approx(r["gpu_utilization"] * r["compute_efficiency"], rel=1e-9)


def test_tokens_per_s_is_batch_times_seq_over_step(gpt3_1k):
    lay = gpt3_1k["layout"]
    expected = lay["global_batch"] * lay["seq_len"] / gpt3_1k["step_s"]
    assert gpt3_1k["tokens_per_s"] == pytest.approx(expected, rel=1e-12)


def test_mfu_counts_model_flops_over_used_gpus(gpt3_1k):
    r = gpt3_1k
    expected = r["model_flops_per_step"] / (r["step_s"] * r["gpus"] * r["peak_flops"])
    assert r["mfu"] == pytest.approx(expected, rel=1e-12)
    assert r["peak_flops"] == pytest.approx(989e12)  # H100 SXM dense BF16 from the catalog


def test_bubble_follows_1f1b(fabric_1k, gpt3_1k):
    lay = gpt3_1k["layout"]
    m, pp = lay["micro_batches"], lay["pp"]
    # The bubble is (pp - 1) slots, each at least one micro-batch of compute.
    assert gpt3_1k["bubble_s"] >= (pp - 1) / m * gpt3_1k["compute_s"] * (1 - 1e-12)
    interleaved = train_step(fabric_1k, TrainingJob(overrides={"virtual_stages": 2}))
    assert interleaved["bubble_s"] < 0.55 * gpt3_1k["bubble_s"]
    no_pp = train_step(fabric_1k, TrainingJob(pp=1, tp=8, dp=8, overrides={"layers": 8}))
    assert no_pp["bubble_s"] == 0.0 and no_pp["comm_s"]["pp"]["raw_s"] == 0.0


def test_every_model_preset_runs_on_the_1k_preset(fabric_1k):
    for model_id in MODEL_PRESETS:
        r = train_step(fabric_1k, TrainingJob(model=model_id))
        assert 0.0 < r["gpu_utilization"] <= 1.0, model_id
        assert r["step_s"] == pytest.approx(
            r["compute_s"] + r["exposed_comm_s"] + r["bubble_s"] + r["optimizer_s"], abs=1e-9
        )
    moe = train_step(fabric_1k, TrainingJob(model="mixtral-8x7b"))
    assert moe["layout"]["ep"] == 8 and moe["comm_s"]["ep"]["raw_s"] > 0
    cp = train_step(fabric_1k, TrainingJob(model="llama3-70b"))
    assert cp["layout"]["cp"] == 2 and cp["comm_s"]["cp"]["raw_s"] > 0


def test_zero_stages_trade_memory_for_traffic(fabric_1k):
    job = TrainingJob(model="llama3-70b")
    results = {z: train_step(fabric_1k, dataclasses.replace(job, zero_stage=z)) for z in range(4)}
    memory = [results[z]["model_state_bytes_per_gpu"] for z in range(4)]
    assert memory == sorted(memory, reverse=True) and memory[3] < memory[0]
    assert results[3]["comm_s"]["dp"]["raw_s"] > results[1]["comm_s"]["dp"]["raw_s"]
    unhidden = train_step(fabric_1k, dataclasses.replace(job, overlap_dp=False))
    assert unhidden["comm_s"]["dp"]["exposed_s"] == pytest.approx(unhidden["comm_s"]["dp"]["raw_s"])


# --- latency ---------------------------------------------------------------------------------


def test_more_latency_never_speeds_a_step_up(fabric_1k):
    rows = latency_sweep(fabric_1k, TrainingJob(model="mixtral-8x7b", tp=2), LATENCIES_NS)
    steps = [r["step_s"] for r in rows]
    assert steps == sorted(steps)
    assert [r["switch_latency_ns"] for r in rows] == LATENCIES_NS


def test_latency_claim_does_not_hold_for_dense_gpt3(fabric_1k):
    """GPT-3 175B, TP in the server, DP overlapped: 10 µs switches cost about nothing."""
    rows = latency_sweep(fabric_1k, TrainingJob(), LATENCIES_NS)
    claim = latency_claim(rows, at_ns=10_000, drop=0.30)
    assert not claim["holds"]
    assert claim["relative_drop"] < 0.05
    assert rows[0]["gpu_utilization"] >= rows[-1]["gpu_utilization"]


def test_latency_matters_for_latency_bound_moe_data_parallelism(fabric_1k):
    """Mixtral without pipelining: many expert-gradient buckets on long rings every step."""
    job = TrainingJob(model="mixtral-8x7b", pp=1, seq_len=2048)
    moe = latency_claim(latency_sweep(fabric_1k, job, LATENCIES_NS))
    dense = latency_claim(latency_sweep(fabric_1k, TrainingJob(), LATENCIES_NS))
    assert moe["relative_drop"] > 0.10
    assert moe["relative_drop"] > 10 * max(dense["relative_drop"], 1e-3)
