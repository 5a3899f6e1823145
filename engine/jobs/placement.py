"""Where each job of a shared cluster runs: whole servers, chosen by its placement.

Jobs are placed in list order, each on the servers the jobs before it left free:
``packed`` takes the first free servers in fabric order (a fresh cluster's scheduler),
``spread`` takes free servers evenly spaced over the fabric (a scheduler that spreads for
fault isolation), ``fragmented`` takes free servers at random (what is left after churn,
jobs of every size having come and gone), reproducibly for the job's `seed`. Each job's
servers are kept in fabric order, the order its ring runs in.
"""

from __future__ import annotations

import numpy as np

from engine.model.errors import Problem, ScenarioError
from engine.model.jobs import Job


def place(job: Job, free: np.ndarray, count: int) -> np.ndarray:
    """`count` of the `free` servers (sorted server indices) for `job`, in fabric order."""
    if count > free.shape[0]:
        raise ScenarioError(
            Problem("jobs", f"{job.name} needs {count} servers; {free.shape[0]} are free", "gpus")
        )
    if job.placement == "packed":
        chosen = free[:count]
    elif job.placement == "spread":
        chosen = free[(np.arange(count) * free.shape[0]) // count]
    else:  # fragmented: validated before
        rng = np.random.default_rng(job.seed)
        chosen = rng.choice(free, size=count, replace=False)
    return np.sort(chosen)


def place_jobs(jobs: list[Job], n_servers: int, gpus_per_server: int) -> list[np.ndarray]:
    """The servers of every job, in list order; then the servers left free (the storage
    nodes a checkpoint job writes to) as the last entry."""
    free = np.arange(n_servers, dtype=np.int64)
    placed = []
    for job in jobs:
        servers = place(job, free, job.gpus // gpus_per_server)
        placed.append(servers)
        free = np.setdiff1d(free, servers, assume_unique=True)
    placed.append(free)
    return placed
