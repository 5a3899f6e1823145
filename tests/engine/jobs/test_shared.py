"""Shared clusters: placement, and the closed forms of interference.

Two jobs on disjoint halves of a non-blocking fabric each run exactly as fast as alone; two
jobs whose rings both cross one link each get half of it (their slowest flow's rate halves
and their time nearly doubles, the path latency aside). Placement is whole servers, never
shared between jobs, reproducible for a seed.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.analysis import equal_jobs, shared_run
from engine.jobs.placement import place_jobs
from engine.model.errors import ScenarioError
from engine.model.jobs import Job
from engine.model.scenario import (
    DeviceGroup,
    LinkBundle,
    RoutingPolicy,
    Scenario,
    from_json,
    to_json,
)
from engine.model.validation import check_structure
from engine.topology.expand import expand
from engine.topology.templates import generate
from tests.engine.jobs.scenarios import bottleneck


def test_two_jobs_on_disjoint_halves_of_a_non_blocking_fabric_run_as_alone(catalog):
    s = generate("leaf-spine", gpus=256, server="dgx-h100", switch="qm9700", catalog=catalog)
    s.routing = RoutingPolicy(mode="spray")
    s.jobs = [Job("a", 128), Job("b", 128)]
    result = shared_run(s, catalog)
    a, b = result.jobs
    assert set(a.servers).isdisjoint(b.servers)
    assert a.servers == tuple(range(16)) and b.servers == tuple(range(16, 32))
    fabric = expand(s, catalog)
    line = float(fabric.gpu_line_rate[0])
    for job in result.jobs:
        assert job.alone_rate_Bps == pytest.approx(line)
        assert job.shared_rate_Bps == pytest.approx(job.alone_rate_Bps)
        assert job.slowdown == pytest.approx(1.0)
        # alone: the ring's 2(k-1)/k x S / 8 bytes per flow at line rate plus latencies
        k, size = len(job.servers), 2.0**30
        assert job.alone_s >= 2 * (k - 1) / k * size / 8 / line


def test_two_jobs_sharing_one_bottleneck_link_each_get_half(catalog):
    s = bottleneck()
    assert check_structure(s, catalog) == []
    # spread over 4 servers: a on servers 0 and 2, b on 1 and 3; both rings cross the cable
    s.jobs = [Job("a", 16, placement="spread"), Job("b", 16, placement="spread")]
    result = shared_run(s, catalog)
    a, b = result.jobs
    assert (a.servers, b.servers) == ((0, 2), (1, 3))
    cable = float(expand(s, catalog).link_capacity[expand(s, catalog).network_link_mask()][0])
    for job in (a, b):
        assert job.alone_rate_Bps == pytest.approx(cable / 8)  # 8 ring flows each way
        assert job.shared_rate_Bps == pytest.approx(cable / 16)  # and 8 of the other job's
        assert job.slowdown == pytest.approx(2.0, rel=0.01)
        assert job.slowdown < 2.0  # the latency part does not double


def test_packed_jobs_on_one_leaf_each_do_not_meet_the_bottleneck(catalog):
    s = bottleneck()
    s.jobs = [Job("a", 16), Job("b", 16)]  # packed: a on servers 0-1 (leaf 0), b on 2-3
    a, b = shared_run(s, catalog).jobs
    assert (a.servers, b.servers) == ((0, 1), (2, 3))
    assert a.slowdown == pytest.approx(1.0) and b.slowdown == pytest.approx(1.0)


def test_placements_take_whole_free_servers_reproducibly():
    jobs = [
        Job("p", 16, placement="packed"),
        Job("s", 16, placement="spread"),
        Job("f", 24, placement="fragmented", seed=3),
    ]
    placed = place_jobs(jobs, 16, 8)
    assert placed[0].tolist() == [0, 1]
    assert placed[1].tolist() == [2, 9]  # free 2..15: every seventh
    taken = np.concatenate(placed[:3])
    assert np.unique(taken).size == taken.size == 7
    assert sorted(np.concatenate(placed).tolist()) == list(range(16))  # the rest free
    again = place_jobs(jobs, 16, 8)
    assert placed[2].tolist() == again[2].tolist()
    other = place_jobs([*jobs[:2], Job("f", 24, placement="fragmented", seed=4)], 16, 8)
    assert placed[2].tolist() != other[2].tolist()


def test_a_checkpoint_writes_to_the_free_servers(catalog):
    s = bottleneck()
    s.jobs = [Job("train", 16), Job("ckpt", 8, kind="checkpoint", message_bytes=1e9)]
    result = shared_run(s, catalog)
    train, ckpt = result.jobs
    assert result.storage_servers == 1 and ckpt.servers == (2,)
    # 8 writers, one per GPU, to the one free server's 8 NICs: a leaf-local 400G each
    assert ckpt.flows == 8 and ckpt.op == "write"
    assert ckpt.alone_rate_Bps == pytest.approx(float(expand(s, catalog).gpu_line_rate[0]))
    assert train.slowdown == pytest.approx(1.0)


def test_equal_jobs_split_the_servers(catalog):
    s = bottleneck()
    jobs = equal_jobs(s, catalog, 2, "spread", checkpoint_servers=1)
    assert [(j.name, j.gpus, j.kind) for j in jobs] == [
        ("job1", 8, "collective"),
        ("job2", 8, "collective"),
        ("checkpoint", 8, "checkpoint"),
    ]
    with pytest.raises(ScenarioError, match="do not make"):
        equal_jobs(s, catalog, 5)


@pytest.mark.parametrize(
    ("job", "field", "fragment"),
    [
        (Job("a", 12), "gpus", "whole servers"),
        (Job("a", 40), "gpus", "does not fit"),
        (Job("a", 8, placement="scattered"), "placement", "unknown placement"),
        (Job("a", 8, kind="training"), "kind", "unknown kind"),
        (Job("a", 8, op="all-to-all"), "op", "unknown op"),
        (Job("a", 8, message_bytes=0.0), "message_bytes", "at least 1"),
    ],
)
def test_a_bad_job_is_refused_naming_it(catalog, job, field, fragment):
    s = bottleneck()
    s.jobs = [job]
    problems = check_structure(s, catalog)
    assert [(p.where, p.field) for p in problems] == [("jobs[0]", field)]
    assert fragment in problems[0].message


def test_a_checkpoint_with_no_server_left_for_storage_is_refused(catalog):
    s = bottleneck()
    s.jobs = [Job("a", 24), Job("c", 8, kind="checkpoint")]
    assert [p.where for p in check_structure(s, catalog)] == ["jobs"]


def test_jobs_round_trip_and_an_older_file_has_none(catalog):
    s = bottleneck()
    s.jobs = [Job("a", 16, placement="fragmented", seed=7)]
    assert from_json(to_json(s)) == s
    doc = json.loads(to_json(s))
    del doc["jobs"]
    doc["version"] = 2
    assert from_json(json.dumps(doc)).jobs == []


def _single_switch(servers: int) -> Scenario:
    return Scenario(
        groups=[
            DeviceGroup("servers", "server", "dgx-h100", servers, "server"),
            DeviceGroup("leaf", "switch", "qm9700", 1, "leaf"),
        ],
        bundles=[LinkBundle("servers-leaf", "servers", "leaf", "full")],
    )


def test_inference_alone_runs_requests_and_responses_at_line_rate(catalog):
    # 1 inference server, 1 free front-end: GPU r of each talks to GPU r of the other,
    # requests one way and responses the other, each on a NIC of its own: line rate.
    s = _single_switch(2)
    size = 2.0**20
    s.jobs = [Job("serve", 8, "inference", message_bytes=size)]
    assert check_structure(s, catalog) == []
    (job,) = shared_run(s, catalog).jobs
    fabric = expand(s, catalog)
    line = float(fabric.gpu_line_rate[0])
    assert job.op == "request/response" and job.flows == 16  # 8 requests + 8 responses
    assert job.alone_rate_Bps == pytest.approx(line)
    up, down = np.unique(fabric.link_latency[fabric.network_link_mask()])  # GPU-leaf, leaf-GPU
    assert job.alone_s == pytest.approx(size / line + 2 * (up + down))  # request + response
    assert job.slowdown == pytest.approx(1.0)


def test_two_inference_servers_on_one_front_end_halve_the_rate(catalog):
    s = _single_switch(3)  # servers 0-1 serve, server 2 is the front-end of both
    s.jobs = [Job("serve", 16, "inference", message_bytes=2.0**20)]
    (job,) = shared_run(s, catalog).jobs
    line = float(expand(s, catalog).gpu_line_rate[0])
    assert job.alone_rate_Bps == pytest.approx(line / 2)


def test_inference_and_checkpoint_share_the_free_servers_nic(catalog):
    # Server 0 serves, server 1 writes a checkpoint, server 2 is front-end and storage: its
    # NIC's inbound link takes the responses and the writes, C/2 each; the requests leave on
    # its outbound link alone. Both jobs' slowest flows halve.
    s = _single_switch(3)
    size = 2.0**26
    s.jobs = [
        Job("serve", 8, "inference", message_bytes=size),
        Job("ckpt", 8, "checkpoint", message_bytes=size),
    ]
    serve, ckpt = shared_run(s, catalog).jobs
    line = float(expand(s, catalog).gpu_line_rate[0])
    for job in (serve, ckpt):
        assert job.alone_rate_Bps == pytest.approx(line)
        assert job.shared_rate_Bps == pytest.approx(line / 2)
        assert 1.9 < job.slowdown < 2.0  # the path latency part does not double


def test_inference_needs_a_free_front_end_and_equal_jobs_adds_one(catalog):
    s = _single_switch(2)
    s.jobs = [Job("serve", 16, "inference")]
    problems = check_structure(s, catalog)
    assert any("inference" in p.message and p.field == "gpus" for p in problems)
    s = generate("leaf-spine", gpus=256, server="dgx-h100", switch="qm9700", catalog=catalog)
    jobs = equal_jobs(s, catalog, 2, inference_servers=2)
    assert [j.kind for j in jobs] == ["collective", "collective", "inference"]
    assert [j.gpus for j in jobs] == [14 * 8, 14 * 8, 16]  # 32 servers - 2 x 2, halved
