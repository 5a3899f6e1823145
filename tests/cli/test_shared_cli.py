"""``shared`` on the command line: equal jobs from --jobs, a table per job (or JSON), and a
refusal naming the job for a size that is not whole servers."""

from __future__ import annotations

import json

from tests.cli.test_commands import assert_refused, run

PRESET = "dgx-h100-ib-ndr-1k"


def test_shared_prints_one_row_per_job():
    proc = run(
        "shared", PRESET, "--jobs", "2", "--placement", "spread", "--checkpoint-servers", "8"
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "3 jobs sharing the fabric (8 servers free)" in lines[0]
    rows = [line.split() for line in lines[2:5]]
    assert [r[0] for r in rows] == ["job1", "job2", "checkpoint"]
    assert all(r[2] == "spread" for r in rows)
    assert all(r[-1].endswith("x") for r in rows)


def test_shared_json_agrees_with_the_jobs_it_was_given():
    jobs = '[{"name":"a","gpus":512},{"name":"b","gpus":256,"placement":"fragmented","seed":5}]'
    proc = run("shared", PRESET, "--set", f"jobs={jobs}", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    a, b = data["jobs"]
    assert (a["name"], a["gpus"], len(a["servers"])) == ("a", 512, 64)
    assert a["servers"] == list(range(64))  # packed: the first servers
    assert len(b["servers"]) == 32 and min(b["servers"]) >= 64
    assert data["storage_servers"] == 32
    for job in (a, b):
        assert job["shared_s"] >= job["alone_s"] * (1 - 1e-12)
        assert job["slowdown"] == job["shared_s"] / job["alone_s"]


def test_a_job_of_part_of_a_server_is_refused_by_name():
    proc = run("shared", PRESET, "--set", 'jobs=[{"name":"a","gpus":12}]')
    assert_refused(proc, "jobs[0].gpus", "whole servers")


def test_no_jobs_says_how_to_add_them():
    assert_refused(run("shared", PRESET), "no jobs", "--jobs")


def test_shared_adds_an_inference_service_as_background_traffic():
    proc = run("shared", PRESET, "--jobs", "2", "--inference-servers", "4", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    *training, serve = data["jobs"]
    assert [j["kind"] for j in training] == ["collective", "collective"]
    assert (serve["kind"], serve["op"], serve["gpus"]) == ("inference", "request/response", 32)
    assert serve["flows"] == 2 * 32  # a request and a response per GPU
    assert data["storage_servers"] >= 4  # the front-ends
