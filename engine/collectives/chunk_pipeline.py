"""NCCL's chunk pipeline: how the fill and drain of a chunked collective add to its time.

NCCL does not move a collective as one piece. Each channel cuts its share into chunks
(`calcCollChunking`, src/enqueue.cc) and runs them through the algorithm's stages in
loops of ``nChannels x nchunksPerLoop x chunkSize`` bytes. Where one chunk has to pass
through several stages one after another, the pipeline fills before every stage is busy
and drains at the end: with P stages of equal chunk time t and n loops the transfer takes
``(P - 1 + n) t`` instead of ``n t``. The latency-plus-bandwidth form of NCCL's tuner
(src/graph/tuning.cc), which the rest of the engine follows, has no such term, so mid-size
collectives, whose chunks NCCL also shrinks (more loops of smaller chunks, for a shorter
fill), come out too fast without it.

Modelled here (NCCL master, 2.28-2.29, `calcCollChunking` and src/device/all_reduce.h):

* NVLS all-reduce in one server: three warp groups in a row for every chunk: scatter into
  the NVLink SHARP buffer, the switch's load-reduce and multicast, gather out of it
  (P = 3); chunk size ``nvlsChunkSize`` (128 KiB, src/transport/nvls.cc), cut to 64, 32 and
  16 KiB while the message is under 64, 8 and 2 loops of concurrent chunks
  (``nChannels x nHeads``).
* NVLS-tree all-reduce: the same scatter, reduce and gather around a tree between servers,
  a chunk climbing and descending its depth (P = 3 + 2 depth); chunk size at most 64 KiB
  from 4 servers, cut to 256, 128, 64 and 32 KiB under 32, 16, 4 and 1 loops.

* Ring broadcast and reduce with the Simple protocol: a pipelined chain, every chunk handed
  from rank to rank (P = n - 1); chunk = one step of the Simple buffer (4 MiB / NCCL_STEPS =
  512 KiB, BROADCAST_CHUNKSTEPS = REDUCE_CHUNKSTEPS = 1), one chunk per channel per loop.
  LL and LL128 forward every line as its flag arrives, so their chain has no chunk fill.

Not here: the ring all-reduce, all-gather and reduce-scatter, whose every rank injects its
own chunk at the first step, so every link is busy from the start and there is no fill to
pay (their per-step latencies are NCCL's own latency term); the tree, whose mid-size loss
NCCL's tuner already carries in its measured ``treeCorrectionFactor`` (adding a fill would
count it twice); CollNet, which no published mid-size point checks yet.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ChunkRules:
    """NCCL's chunking constants for the switch-reduced (NVLink SHARP) algorithms."""

    nvls_chunk_bytes: int  # nvlsChunkSize, NCCL_NVLS_CHUNKSIZE
    nvls_ladder: tuple[tuple[int, int], ...]  # (loops, chunk): below loops x ops x chunk
    nvlstree_ladder: tuple[tuple[int, int], ...]
    nvlstree_max_chunk_bytes_many_nodes: int  # from `nvlstree_many_nodes` servers
    nvlstree_many_nodes: int
    nvls_pipeline_stages: int  # scatter, reduce-multicast, gather
    simple_step_bytes: int  # the Simple buffer over NCCL_STEPS: 4 MiB / 8
    chain_chunk_steps: int  # BROADCAST_CHUNKSTEPS, REDUCE_CHUNKSTEPS


def ladder_chunk(
    sizes: np.ndarray, chunk_bytes: int, ops: int, ladder: tuple[tuple[int, int], ...]
) -> np.ndarray:
    """NCCL's chunk size at each message size: the largest rung the message fills.

    Each rung ``(loops, cap)`` caps the chunk at `cap` while the message is under `loops`
    rounds of `ops` concurrent chunks of the current size, in order (calcCollChunking's
    ``if (nBytes < loops * concurrentOps * chunkSize && chunkSize > cap) chunkSize = cap``).
    """
    sizes = np.asarray(sizes, dtype=np.float64)
    chunk = np.full(sizes.shape[0], float(chunk_bytes))
    for loops, cap in ladder:
        cut = (sizes < loops * ops * chunk) & (chunk > cap)
        chunk[cut] = float(cap)
    return chunk


def fill_factor(stages: int, loop_bytes: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """How much longer than its bandwidth time a P-stage chunk pipeline takes.

    With n = S / L loops of L bytes (one loop of S when S < L) the transfer takes
    ``(P - 1 + n)`` loop times instead of n: a factor ``1 + (P - 1) min(1, L / S)``.
    """
    sizes = np.asarray(sizes, dtype=np.float64)
    share = np.minimum(1.0, np.asarray(loop_bytes, dtype=np.float64) / np.maximum(sizes, 1.0))
    return 1.0 + max(0, stages - 1) * share


def pipeline_fill(
    rules: ChunkRules,
    cls: str | None,
    op: str,
    protocol: str,
    n: int,
    n_nodes: int,
    ring_channels: int,
    nvls_channels: int,
    sizes: np.ndarray,
) -> np.ndarray:
    """The factor NCCL's chunk pipeline puts on a collective's bandwidth time, per size.

    1 where the algorithm has no fill to pay (see the module's docstring); NVLS and
    NVLS-tree all-reduce by their chunk ladders, with ``nHeads`` taken as the GPUs of a
    server (one NVLS head per GPU) and `nvls_channels` NCCL's NVLS channel count; the
    Simple chain of broadcast and reduce over its `ring_channels` rings.
    """
    sizes = np.asarray(sizes, dtype=np.float64)
    ones = np.ones(sizes.shape[0])
    if cls == "ring" and op in ("broadcast", "reduce"):
        if protocol != "simple" or n < 3:
            return ones
        loop = max(1, ring_channels) * rules.simple_step_bytes * rules.chain_chunk_steps
        return fill_factor(n - 1, np.full(sizes.shape[0], float(loop)), sizes)
    per_server = n // max(1, n_nodes)
    if op != "all-reduce" or cls not in ("nvls", "nvlstree") or per_server < 2:
        return ones
    ops = max(1, nvls_channels) * per_server  # concurrentOps = nChannels x nHeads
    if cls == "nvls":
        chunk = ladder_chunk(sizes, rules.nvls_chunk_bytes, ops, rules.nvls_ladder)
        return fill_factor(rules.nvls_pipeline_stages, ops * chunk, sizes)
    top = rules.nvls_chunk_bytes
    if n_nodes >= rules.nvlstree_many_nodes:
        top = min(top, rules.nvlstree_max_chunk_bytes_many_nodes)
    chunk = ladder_chunk(sizes, top, ops, rules.nvlstree_ladder)
    depth = math.floor(math.log2(n_nodes)) if n_nodes > 1 else 0
    return fill_factor(rules.nvls_pipeline_stages + 2 * depth, ops * chunk, sizes)
