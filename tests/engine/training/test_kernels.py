"""The kernel-time model: closed forms of the roofline and quantization, and each mechanism's sign.

Each test names what an engineer would expect of the kernels of a step and checks the engine
against a figure computed here by hand from the catalog, not from the engine's own helpers.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.catalog.devices import default_catalog
from engine.catalog.model_presets import get_model
from engine.model.errors import ScenarioError
from engine.model.scenario import TrainingJob
from engine.training.context import stage_layers
from engine.training.kernels import GpuSpeed, Shard, gemm_s, layer_times, wave_fill
from engine.training.step import train_step

H100 = GpuSpeed.of(default_catalog(), "h100-sxm")


def _by_hand_fill(m: int, n: int, sms: int, tm: int, tn: int) -> float:
    tiles = -(-m // tm) * -(-n // tn)
    waves = -(-tiles // sms)
    return m * n / (waves * sms * tm * tn)


def test_the_matmul_rate_is_the_measured_ceiling_and_hbm_at_its_efficiency():
    assert H100.matmul_flops == pytest.approx(794.5e12)
    assert H100.fp8 is not None and H100.fp8.matmul_flops == pytest.approx(1402.6e12)
    assert H100.stream_bytes_per_s == pytest.approx(3.35e12 * 0.9)


def test_a_large_square_gemm_is_compute_bound_at_the_quantized_ceiling():
    m = n = k = 8192
    fill = max(_by_hand_fill(m, n, 132, 256, 128), _by_hand_fill(m, n, 132, 128, 256))
    assert gemm_s(m, n, k, H100) == pytest.approx(2 * m * n * k / (H100.matmul_flops * fill))


def test_a_thin_gemm_is_bound_by_memory():
    m, n, k = 16, 16384, 16384  # one token's worth of rows: a matrix-vector product
    moved = 2 * (m * k + k * n + m * n)  # bf16 inputs and output
    assert gemm_s(m, n, k, H100) == pytest.approx(moved / H100.stream_bytes_per_s)


def test_one_tile_more_than_a_full_wave_costs_a_whole_wave():
    sms, tile = 132, (256, 128)
    assert wave_fill(256 * 132, 128, sms, tile) == pytest.approx(1.0)
    assert wave_fill(256 * 133, 128, sms, tile) == pytest.approx(133 / 264)


def test_a_batched_launch_shares_its_waves():
    alone = wave_fill(256, 128, 132, (256, 128))
    batched = wave_fill(256, 128, 132, (256, 128), batch=132)
    assert alone == pytest.approx(1 / 132) and batched == pytest.approx(1.0)


@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(1, 20000),
    n=st.integers(1, 20000),
    k=st.integers(1, 20000),
)
def test_no_gemm_beats_the_ceiling_or_the_memory_bound(m, n, k):
    t = gemm_s(m, n, k, H100)
    assert t >= 2 * m * n * k / H100.matmul_flops * (1 - 1e-12)
    assert t >= 2 * (m * k + k * n + m * n) / H100.stream_bytes_per_s * (1 - 1e-12)
    assert 0 < wave_fill(m, n, 132, (256, 128)) <= 1


def _shard(**kw) -> Shard:
    base = dict(
        tokens=8192,
        seq_len=8192,
        micro_batch=1,
        tp=8,
        ep=1,
        sequence_parallel=True,
        flash_attention=True,
    )
    base.update(kw)
    return Shard(**base)


def test_small_micro_batches_run_their_matmuls_below_the_large_ones_rate():
    model = get_model("llama3-70b")
    small = layer_times(model, _shard(tokens=256, seq_len=256), H100)
    large = layer_times(model, _shard(tokens=8192, seq_len=8192), H100)
    # per token, the small GEMMs cost more: partial waves and less reuse of the weights
    assert small.matmul_s / 256 > 1.1 * large.matmul_s / 8192


def test_unfused_attention_pays_for_the_scores_in_memory():
    model = get_model("gpt3-175b")
    fused = layer_times(model, _shard(tokens=2048, seq_len=2048), H100)
    unfused = layer_times(model, _shard(tokens=2048, seq_len=2048, flash_attention=False), H100)
    assert unfused.attention_s > fused.attention_s
    assert unfused.matmul_s == fused.matmul_s and unfused.stream_s == fused.stream_s


def test_the_backward_is_twice_the_matmuls_and_streams_plus_attention_backward():
    lt = layer_times(get_model("llama3-70b"), _shard(), H100)
    assert lt.backward_s == pytest.approx(
        2 * lt.matmul_s + 2 * lt.stream_s + lt.attention_backward_s
    )
    assert lt.attention_backward_s == pytest.approx(2.5 * lt.attention_s)


@pytest.mark.parametrize(("layers", "pp", "v"), [(96, 12, 1), (126, 16, 1), (80, 8, 5), (7, 3, 1)])
def test_stages_hold_whole_layers_with_the_remainder_in_the_middle(layers, pp, v):
    split = stage_layers(layers, pp, v)
    assert sum(split) == layers and len(split) == pp
    assert max(split) - min(split) <= v
    if layers % (pp * v) and pp > 2:
        assert split[0] <= max(split[1:-1]) and split[-1] <= max(split[1:-1])


@pytest.fixture(scope="module")
def llama70(fabric_1k):
    return lambda **kw: train_step(fabric_1k, TrainingJob(model="llama3-70b", **kw))


def test_recomputation_trades_compute_for_activation_memory(llama70):
    none = llama70()
    selective = llama70(overrides={"recompute": 1})
    full = llama70(overrides={"recompute": 2})
    assert none["recompute_s"] == 0 < selective["recompute_s"] < full["recompute_s"]
    assert none["compute_s"] < selective["compute_s"] < full["compute_s"]
    assert full["activation_bytes_per_gpu"] < selective["activation_bytes_per_gpu"]
    assert selective["activation_bytes_per_gpu"] <= none["activation_bytes_per_gpu"]
    # full recomputation runs the forward twice: its TP all-reduces too
    assert full["comm_s"]["tp"]["raw_s"] == pytest.approx(1.5 * none["comm_s"]["tp"]["raw_s"])


def test_zero_bubble_shrinks_the_bubble_by_the_weight_gradients(llama70):
    plain = llama70(pp=4, overrides={"virtual_stages": 1})
    zb = llama70(pp=4, overrides={"virtual_stages": 1, "schedule": 1})
    assert zb["schedule"] == "ZB-H1" and plain["schedule"] == "1F1B"
    assert 0 < zb["bubble_s"] < plain["bubble_s"]
    assert zb["compute_s"] == pytest.approx(plain["compute_s"])


def test_zero_bubble_with_interleaving_is_refused_naming_the_knob(fabric_1k):
    job = TrainingJob(model="llama3-70b", pp=4, overrides={"virtual_stages": 2, "schedule": 1})
    with pytest.raises(ScenarioError) as info:
        train_step(fabric_1k, job)
    assert info.value.problems[0].field == "schedule"


@pytest.mark.parametrize(
    ("knob", "bad"), [("recompute", 3), ("flash_attention", 0.5), ("schedule", 2)]
)
def test_choice_knobs_refuse_other_values(fabric_1k, knob, bad):
    with pytest.raises(ScenarioError) as info:
        train_step(fabric_1k, TrainingJob(model="llama3-70b", overrides={knob: bad}))
    assert info.value.problems[0].field == knob


def test_the_distributed_optimizer_shards_the_optimizer_step(fabric_1k):
    job = TrainingJob(model="llama3-70b")
    plain = train_step(fabric_1k, dataclasses.replace(job, zero_stage=0))
    sharded = train_step(fabric_1k, dataclasses.replace(job, zero_stage=1))
    dp = sharded["layout"]["dp"] * sharded["layout"]["cp"]
    assert sharded["optimizer_s"] == pytest.approx(plain["optimizer_s"] / dp)


def test_a_flat_compute_efficiency_still_runs_every_flop_at_that_share(fabric_1k):
    r = train_step(fabric_1k, TrainingJob(compute_efficiency=0.5))
    assert r["compute_parts_s"].keys() == {"flat"}
    assert r["compute_efficiency"] == pytest.approx(0.5, rel=1e-9)
    assert math.isclose(r["mfu"], r["gpu_utilization"] * 0.5, rel_tol=1e-9)


def test_zero_bubble_on_an_interleaved_preset_runs_one_chunk_and_says_so(fabric_1k):
    r = train_step(fabric_1k, TrainingJob(model="llama3-70b", pp=4, overrides={"schedule": 1}))
    assert r["layout"]["virtual_stages"] == 1
    assert any("ZB-H1 runs one model chunk" in n for n in r["notes"])


def test_the_latency_curve_names_the_path_latency_and_what_grows(fabric_1k):
    from engine.analysis import latency_reach
    from engine.training.step import latency_sweep

    rows = latency_sweep(fabric_1k, TrainingJob(), [1000.0, 20000.0])
    assert rows[1]["path_latency_ns"] - rows[0]["path_latency_ns"] == pytest.approx(3 * 19000.0)
    flat = [
        {
            **{k: r[k] for k in ("switch_latency_ns", "path_latency_ns", "gpu_utilization")},
            **{k: r[k] for k in ("step_s", "bubble_s")},
            **{f"exposed_{k}_s": v for k, v in r["exposed_s"].items()},
        }
        for r in rows
    ]
    reach = latency_reach(flat)
    assert reach["step_growth"] == pytest.approx(rows[1]["step_s"] / rows[0]["step_s"] - 1)
    grown = reach["grown_s"]
    assert list(grown.values()) == sorted(grown.values(), reverse=True)
    assert sum(grown.values()) == pytest.approx(rows[1]["step_s"] - rows[0]["step_s"], rel=1e-6)


def test_expert_capacity_and_imbalance_slow_the_moe_layers(fabric_1k):
    def step(**knobs):
        job = TrainingJob(model="mixtral-8x7b", pp=1, seq_len=2048, overrides=knobs)
        return train_step(fabric_1k, job)

    even = step()
    padded = step(capacity_factor=1.25)
    skewed = step(expert_imbalance=2.0)
    assert even["comm_s"]["ep"]["raw_s"] < padded["comm_s"]["ep"]["raw_s"]
    assert padded["comm_s"]["ep"]["raw_s"] < skewed["comm_s"]["ep"]["raw_s"]
    assert even["compute_parts_s"]["matmul"] < padded["compute_parts_s"]["matmul"]
    assert padded["compute_parts_s"]["matmul"] < skewed["compute_parts_s"]["matmul"]
    # a dense model has no experts: neither knob changes it
    dense = [
        train_step(fabric_1k, TrainingJob(model="llama3-70b", overrides=k))["step_s"]
        for k in ({}, {"capacity_factor": 2.0})
    ]
    assert dense[0] == dense[1]


@pytest.mark.parametrize(("knob", "bad"), [("capacity_factor", 0.5), ("expert_imbalance", 0.9)])
def test_moe_knobs_refuse_impossible_loads(fabric_1k, knob, bad):
    with pytest.raises(ScenarioError) as info:
        train_step(fabric_1k, TrainingJob(model="mixtral-8x7b", overrides={knob: bad}))
    assert info.value.problems[0].field == knob


def test_fp8_runs_the_linear_layers_at_the_fp8_ceiling_and_attention_in_bf16(fabric_1k):
    bf16 = train_step(fabric_1k, TrainingJob(model="llama3-70b"))
    fp8 = train_step(fabric_1k, TrainingJob(model="llama3-70b", overrides={"fp8": 1}))
    ratio = fp8["compute_parts_s"]["matmul"] / bf16["compute_parts_s"]["matmul"]
    assert 794.5 / 1402.6 * 0.9 < ratio < 794.5 / 1402.6 * 1.1  # the two measured ceilings
    assert fp8["compute_parts_s"]["attention"] == bf16["compute_parts_s"]["attention"]
    assert H100.fp8 is not None and H100.fp8.operand_bytes == 1.0


def test_fp8_on_a_gpu_without_fp8_matmuls_is_refused_naming_the_knob():
    cat = default_catalog()
    from engine.topology import generators as gen
    from engine.topology.expand import expand

    fabric = expand(gen.single_switch(16, "dgx-a100", "qm8700", catalog=cat), cat)
    with pytest.raises(ScenarioError) as info:
        train_step(fabric, TrainingJob(model="llama3-70b", tp=8, overrides={"fp8": 1}), cat)
    assert info.value.problems[0].field == "fp8"
