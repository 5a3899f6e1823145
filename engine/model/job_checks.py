"""Checks of a scenario's jobs (`engine.model.jobs`): known kinds, placements and
operations, whole servers, jobs that fit the fabric in list order, and room left for the
storage a checkpoint job writes to (or the front-ends an inference job serves) unless the
design has a storage network (`engine.model.networks`), whose nodes take the checkpoints. Each
problem names ``jobs[i]`` and its field."""

from __future__ import annotations

from engine.catalog.devices import Catalog
from engine.model.errors import Problem
from engine.model.jobs import FREE_SERVER_KINDS, JOB_KINDS, JOB_OPS, PLACEMENTS
from engine.model.networks import has_storage
from engine.model.scenario import Scenario


def _servers(scenario: Scenario, catalog: Catalog) -> tuple[int, int]:
    """Servers of the scenario and the GPUs of its first server model (0 when unknown)."""
    servers, per = 0, 0
    for g in scenario.groups:
        device = catalog.devices.get(g.model)
        if g.kind != "server" or device is None or device.kind != "server":
            continue
        servers += g.count
        if not per:
            per = int(device.value("gpus_per_server"))
    return servers, per


def check_jobs(scenario: Scenario, catalog: Catalog) -> list[Problem]:
    """Problems of the scenario's jobs, each naming ``jobs[i]`` and its field: unknown kind,
    placement or operation, sizes that are not whole servers, jobs that do not fit, a
    checkpoint with no free server left for storage."""
    problems: list[Problem] = []
    servers, per = _servers(scenario, catalog)
    names: set[str] = set()
    used = 0
    for i, job in enumerate(scenario.jobs):
        where = f"jobs[{i}]"
        for name, value, allowed in (
            ("kind", job.kind, JOB_KINDS),
            ("placement", job.placement, PLACEMENTS),
            ("op", job.op, JOB_OPS),
        ):
            if value not in allowed:
                problems.append(
                    Problem(
                        where, f"unknown {name} {value!r}; use one of {', '.join(allowed)}", name
                    )
                )
        if not job.name or job.name in names:
            problems.append(Problem(where, f"name {job.name!r} is empty or used twice", "name"))
        names.add(job.name)
        if not job.message_bytes >= 1:
            problems.append(
                Problem(
                    where,
                    f"message_bytes must be at least 1, not {job.message_bytes:g}",
                    "message_bytes",
                )
            )
        if job.seed < 0:
            problems.append(Problem(where, f"seed must not be negative ({job.seed})", "seed"))
        if per and (job.gpus <= 0 or job.gpus % per):
            problems.append(
                Problem(where, f"{job.gpus} GPUs: a job takes whole servers of {per} GPUs", "gpus")
            )
            continue
        used += job.gpus // per if per else 0
        if per and used > servers:
            problems.append(
                Problem(
                    where,
                    f"{job.name} does not fit: the jobs up to it take {used} servers, the "
                    f"fabric has {servers}",
                    "gpus",
                )
            )
    free_needed = [j.kind for j in scenario.jobs if j.kind in FREE_SERVER_KINDS]
    if has_storage(scenario):  # checkpoints write to the storage nodes instead
        free_needed = [k for k in free_needed if k != "checkpoint"]
    if per and free_needed and used >= servers:
        problems.append(
            Problem(
                "jobs",
                "a checkpoint or inference job talks to the servers no job holds (the storage "
                "nodes, the inference front-ends); the jobs take every server: make a job "
                "smaller",
                "gpus",
            )
        )
    return problems
