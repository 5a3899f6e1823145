"""Several jobs on one fabric (a shared cluster): each job's size, placement and traffic.

A scenario's `jobs` list, when not empty, says how the cluster is shared: each `Job` takes
`gpus` GPUs (whole servers) placed by its `placement` (``packed``: the next free servers in
order; ``spread``: free servers evenly spaced over the fabric; ``fragmented``: free servers
at random, as a cluster looks after churn, reproducible for `seed`), and runs its traffic:
a ``collective`` job a ring collective (`op` of `message_bytes` per rank), a ``checkpoint``
job the background writes of a checkpoint, every GPU sending `message_bytes` to storage
(the servers no job holds stand for the storage nodes), an ``inference`` job the steady
background traffic of inference servers: every GPU receives `message_bytes` of requests
from a front-end and returns `message_bytes` of responses, both directions at once (the
servers no job holds stand for the front-ends too). Jobs are placed in list order, each
on servers the ones before it left free. `engine.jobs` times each job alone and with the
others; `engine.model.job_checks` refuses what cannot be placed, naming the job.
"""

from __future__ import annotations

from dataclasses import dataclass

JOB_KINDS = ("collective", "checkpoint", "inference")
FREE_SERVER_KINDS = ("checkpoint", "inference")  # kinds whose peers are the free servers
PLACEMENTS = ("packed", "spread", "fragmented")
JOB_OPS = ("all-reduce", "all-gather", "reduce-scatter")


@dataclass
class Job:
    """One job of a shared cluster: its name, kind, size in GPUs, placement and traffic."""

    name: str
    gpus: int
    kind: str = "collective"
    placement: str = "packed"
    op: str = "all-reduce"
    message_bytes: float = 1073741824.0
    seed: int = 0
