"""Shared clusters: the door's call for "what do the jobs on this fabric cost each other?".

`shared_run` expands the scenario, places its `jobs` and times each alone and with the
others (`engine.jobs.interference`), returning a `SharedResult` per job: servers, rates,
times and the slowdown the sharing costs it. `equal_jobs` splits a scenario's servers
into equal jobs (and a checkpoint writer, an inference service), as `shared --jobs N` and the Jobs tab do.
"""

from __future__ import annotations

import math

from engine.analysis.results.jobs import JobResult, SharedResult
from engine.catalog.devices import Catalog
from engine.jobs.interference import interference
from engine.model.errors import Problem, ScenarioError
from engine.model.jobs import Job
from engine.model.networks import has_storage
from engine.model.scenario import Scenario
from engine.topology.expand import expand

NOTES = (
    "collective jobs: the ring across servers (one per GPU index) after NVLink inside each "
    "server, which sharing does not change; a job lasts as long as its slowest ring flow plus "
    "one path latency per ring step",
    "checkpoint jobs: each GPU writes its bytes to the servers no job holds (the storage nodes)",
    "inference jobs: each GPU takes its bytes of requests from the servers no job holds (the "
    "front-ends) and sends as many bytes of responses back, both at once, plus two path "
    "latencies",
    "rates are max-min fair on the routed paths (the ideal transport); queues, PFC and "
    "congestion control between the jobs are not modelled here",
)

STORAGE_NOTE = (
    "checkpoint jobs: each GPU writes its bytes over the design's storage network, through "
    "its server's front-end ports, to the {nodes} storage nodes; they share no link with "
    "the compute fabric"
)

FRONTEND_NOTE = (
    "inference jobs: each GPU takes its bytes of requests from the servers no job holds (the "
    "front-ends) and sends as many bytes of responses back, both at once, plus two path "
    "latencies, over the design's front-end (storage) network through both servers' "
    "front-end ports, where they meet the checkpoint writes and leave the compute fabric"
)

OPS_SHOWN = {"checkpoint": "write", "inference": "request/response"}


def _rate(value: float) -> float | None:
    return None if math.isinf(value) else value


def shared_run(scenario: Scenario, catalog: Catalog) -> SharedResult:
    """Each job of `scenario.jobs` timed alone and with every job at once; `ScenarioError`
    when the scenario is broken or has no jobs."""
    if not scenario.jobs:
        raise ScenarioError(
            Problem("jobs", "the scenario has no jobs; add some (e.g. --jobs 2) to share it")
        )
    fabric = expand(scenario, catalog)
    rows = []
    found = interference(fabric, list(scenario.jobs))
    for traffic, alone, shared in found:
        job = traffic.job
        rows.append(
            JobResult(
                name=job.name,
                kind=job.kind,
                placement=job.placement,
                op=OPS_SHOWN.get(job.kind, job.op),
                gpus=job.gpus,
                servers=tuple(int(s) for s in traffic.servers),
                message_bytes=job.message_bytes,
                flows=int(traffic.src.size),
                alone_rate_Bps=_rate(alone.rate_Bps),
                shared_rate_Bps=_rate(shared.rate_Bps),
                alone_s=alone.time_s,
                shared_s=shared.time_s,
                slowdown=shared.time_s / alone.time_s if alone.time_s > 0 else 1.0,
            )
        )
    used = sum(len(r.servers) for r in rows)
    notes = NOTES
    if fabric.storage is not None:
        nodes = fabric.storage.n_servers - fabric.n_servers
        notes = (NOTES[0], STORAGE_NOTE.format(nodes=nodes), FRONTEND_NOTE, *NOTES[3:])
    return SharedResult(
        scenario=scenario.metadata.name,
        jobs=tuple(rows),
        storage_servers=fabric.n_servers - used,
        notes=notes,
    )


def equal_jobs(
    scenario: Scenario,
    catalog: Catalog,
    count: int,
    placement: str = "packed",
    message_bytes: float | None = None,
    checkpoint_servers: int = 0,
    inference_servers: int = 0,
) -> list[Job]:
    """`count` equal all-reduce jobs over the scenario's servers (the workload's message
    size unless given), placed by `placement`; with `checkpoint_servers`, one more job of
    that many servers writing a checkpoint of the same size, and as many servers left free
    for storage (none when the design has a storage network, whose nodes take it); with
    `inference_servers`, one more inference job of that many servers (requests and
    responses of the same size), and as many servers left free for its
    front-ends. `ScenarioError` when the servers do not go round."""
    servers = sum(g.count for g in scenario.groups if g.kind == "server")
    model = next((g.model for g in scenario.groups if g.kind == "server"), None)
    if model is None or count < 1:
        raise ScenarioError(Problem("jobs", "a shared cluster needs servers and at least one job"))
    try:
        per = int(catalog.get(model, "server").value("gpus_per_server"))
    except KeyError:
        raise ScenarioError(Problem("jobs", f"unknown server model {model!r}")) from None
    size = float(message_bytes or scenario.workload.message_bytes)
    kept = checkpoint_servers * (1 if has_storage(scenario) else 2)  # storage nodes instead
    each = (servers - kept - 2 * inference_servers) // count
    if each < 1:
        raise ScenarioError(
            Problem("jobs", f"{servers} servers do not make {count} jobs of at least one server")
        )
    jobs = [
        Job(f"job{i + 1}", each * per, placement=placement, message_bytes=size, seed=i)
        for i in range(count)
    ]
    if checkpoint_servers:
        jobs.append(
            Job("checkpoint", checkpoint_servers * per, "checkpoint", placement, message_bytes=size)
        )
    if inference_servers:
        jobs.append(
            Job("inference", inference_servers * per, "inference", placement, message_bytes=size)
        )
    return jobs
