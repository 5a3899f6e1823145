"""Resolving a job for a fabric: published layouts filled in, fitted, or refused by field."""

from __future__ import annotations

import pytest

from engine.model.errors import ScenarioError
from engine.model.scenario import DeviceGroup, Scenario, TrainingJob
from engine.topology.expand import expand
from engine.training.knobs import KNOBS, check_knobs
from engine.training.layout import default_job, resolve_job
from engine.training.step import train_step


def test_default_job_fills_the_published_layout_on_1k(fabric_1k):
    job = default_job(fabric_1k)
    assert (job.model, job.tp, job.pp, job.dp, job.cp, job.ep) == ("gpt3-175b", 8, 12, 10, 1, 1)
    assert (job.micro_batch, job.seq_len, job.zero_stage) == (1, 2048, 0)
    assert job.global_batch % (job.dp * job.micro_batch) == 0
    assert job.compute_efficiency == 0.0  # the kernel model, not a flat share of peak
    plan = resolve_job(fabric_1k)
    assert any("64 GPUs idle" in n for n in plan.notes)


def test_tp_across_whole_servers_is_allowed_with_a_warning(fabric_1k):
    inside = train_step(fabric_1k, TrainingJob(tp=8))
    across = train_step(fabric_1k, TrainingJob(tp=16))
    assert any("spans 2 servers" in n for n in across["notes"])
    # its all-reduces leave NVLink for 400G NICs: per layer they cost far more
    assert across["comm_s"]["tp"]["raw_s"] > 2 * inside["comm_s"]["tp"]["raw_s"]


def test_tp_over_part_of_a_server_is_refused(fabric_1k):
    with pytest.raises(ScenarioError) as info:
        train_step(fabric_1k, TrainingJob(tp=12))
    problem = info.value.problems[0]
    assert (problem.where, problem.field) == ("workload.training", "tp")
    assert "server" in problem.message
    assert "workload.training.tp" in str(info.value)


@pytest.mark.parametrize(
    ("job", "field"),
    [
        (TrainingJob(model="gpt-5"), "model"),
        (TrainingJob(dp=1000), "dp"),
        (TrainingJob(zero_stage=4), "zero_stage"),
        (TrainingJob(global_batch=1001), "global_batch"),
        (TrainingJob(ep=2), "ep"),
        (TrainingJob(overrides={"depth": 3}), "depth"),
    ],
)
def test_impossible_jobs_name_the_field(fabric_1k, job, field):
    with pytest.raises(ScenarioError) as info:
        train_step(fabric_1k, job)
    assert info.value.problems[0].field == field


def test_a_published_replica_larger_than_the_fabric_shrinks_its_pipeline(fabric_64):
    r = train_step(fabric_64)  # TP 8 x PP 12 = 96 GPUs > 64
    assert (r["layout"]["tp"], r["layout"]["pp"], r["layout"]["dp"]) == (8, 8, 1)
    assert any("needs 96 GPUs" in n for n in r["notes"])
    with pytest.raises(ScenarioError) as info:
        train_step(fabric_64, TrainingJob(pp=12))  # asked for explicitly: refused
    assert info.value.problems[0].field == "pp"


def test_a_lone_server_trains_over_nvlink_only():
    lone = expand(Scenario(groups=[DeviceGroup("s", "server", "dgx-h100", 1, "server")]))
    r = train_step(lone)
    assert (r["layout"]["tp"], r["layout"]["pp"], r["layout"]["dp"]) == (8, 1, 1)
    assert r["comm_s"]["dp"]["raw_s"] == 0.0 and r["comm_s"]["tp"]["raw_s"] > 0.0
    assert any("model states" in n for n in r["notes"])  # 175B does not fit in 8 x 80 GB


@pytest.mark.parametrize(
    ("knob", "value"),
    [
        ("bucket_params", 1e-320),
        ("bucket_params", 0.5),
        ("grad_bytes", 1e-300),
        ("tp_overlap", 2.0),
    ],
)
def test_a_step_knob_out_of_its_range_is_refused_by_name(knob: str, value: float) -> None:
    """A denormal bucket once made the bucket count infinite (OverflowError); every knob
    outside its range is a refusal naming the knob."""
    knobs = {k: v[0] for k, v in KNOBS.items()} | {knob: value}
    with pytest.raises(ScenarioError) as info:
        check_knobs(knobs)
    assert info.value.problems[0].field == knob
