"""NCCL's chunk pipeline (engine.collectives.chunk_pipeline): closed forms and NCCL's rules."""

from __future__ import annotations

import numpy as np
import pytest

from engine.collectives.chunk_pipeline import fill_factor, ladder_chunk, pipeline_fill
from engine.collectives.timing import CollectiveEngine
from engine.topology import generators as gen
from engine.topology.expand import expand

KIB, MIB, GIB = 2.0**10, 2.0**20, 2.0**30


def simulated_pipeline_s(stages: int, chunks: int, chunk_s: float) -> float:
    """Plain-Python reference: `chunks` chunks through `stages` stages in a row, each stage
    working on one chunk at a time for `chunk_s`; the time the last chunk leaves."""
    done = [0.0] * stages  # when each stage finished its previous chunk
    for _ in range(chunks):
        ready = 0.0  # the chunk enters the first stage as soon as that stage is free
        for s in range(stages):
            start = max(ready, done[s])
            done[s] = start + chunk_s
            ready = done[s]
    return done[-1]


@pytest.mark.parametrize("stages", [1, 3, 5, 16])
@pytest.mark.parametrize("chunks", [1, 2, 7, 64])
def test_fill_factor_is_the_pipeline_of_chunks(stages, chunks):
    # S bytes in chunks of L: (P - 1 + S/L) chunk times instead of S/L.
    loop = 1.0
    sizes = np.array([chunks * loop])
    factor = fill_factor(stages, np.array([loop]), sizes)[0]
    reference = simulated_pipeline_s(stages, chunks, 1.0) / chunks
    assert factor == pytest.approx(reference, rel=1e-12)
    assert factor == pytest.approx((stages - 1 + chunks) / chunks, rel=1e-12)


def test_a_message_smaller_than_one_loop_pays_every_stage_in_full():
    sizes = np.array([1e3, 1e5])
    np.testing.assert_allclose(fill_factor(3, np.array([1e6, 1e6]), sizes), [3.0, 3.0])


def test_nvls_chunk_follows_nccls_ladder(catalog):
    # calcCollChunking on one H100 server: 16 NVLS channels x 8 heads = 128 chunks at once,
    # nvlsChunkSize 128 KiB cut to 64 K under 64 loops, 32 K under 8, 16 K under 2.
    rules = CollectiveEngine(_h100_server(catalog), catalog).tech.nccl.chunk_rules
    sizes = np.array([1 * MIB, 16 * MIB, 64 * MIB, 1 * GIB, 8 * GIB])
    chunk = ladder_chunk(sizes, rules.nvls_chunk_bytes, 128, rules.nvls_ladder)
    np.testing.assert_array_equal(chunk, [16 * KIB, 32 * KIB, 64 * KIB, 128 * KIB, 128 * KIB])


def test_nvlstree_chunk_is_capped_from_four_servers(catalog):
    rules = CollectiveEngine(_h100_server(catalog), catalog).tech.nccl.chunk_rules
    sizes = np.array([64 * MIB, 16 * GIB])
    two = pipeline_fill(rules, "nvlstree", "all-reduce", "simple", 16, 2, 16, 32, sizes)
    # 2 servers: 256 concurrent chunks, 64 MiB < 4 x 256 x 128 K: 64 K chunks, 4 loops of
    # 16 MiB; 5 stages (scatter, reduce, one tree step up and down, gather).
    assert two[0] == pytest.approx(1 + 4 * (256 * 64 * KIB) / (64 * MIB))
    many = pipeline_fill(rules, "nvlstree", "all-reduce", "simple", 64, 8, 16, 32, sizes)
    # 8 servers: at most 64 K even at 16 GiB, 3 tree levels: 9 stages.
    assert many[1] == pytest.approx(1 + 8 * (256 * 64 * KIB) / (16 * GIB))


def test_ring_and_tree_all_reduce_pay_no_fill(catalog):
    rules = CollectiveEngine(_h100_server(catalog), catalog).tech.nccl.chunk_rules
    sizes = np.array([1 * MIB, 64 * MIB])
    for cls in ("ring", "tree", "collnet", None):
        for op in ("all-reduce", "all-gather", "reduce-scatter"):
            fill = pipeline_fill(rules, cls, op, "simple", 16, 2, 16, 32, sizes)
            np.testing.assert_array_equal(fill, 1)


def test_a_simple_chain_pays_one_chunk_per_hop(catalog):
    # Ring broadcast over n ranks, c channels, 512 KiB Simple steps: (n - 2 + S / L) chunk
    # times with L = c x 512 KiB; LL and LL128 forward line by line: no chunk fill.
    rules = CollectiveEngine(_h100_server(catalog), catalog).tech.nccl.chunk_rules
    assert rules.simple_step_bytes * rules.chain_chunk_steps == 512 * KIB
    sizes = np.array([1 * MIB, 1 * GIB])
    loop = 16 * 512 * KIB
    fill = pipeline_fill(rules, "ring", "broadcast", "simple", 64, 8, 16, 32, sizes)
    np.testing.assert_allclose(fill, [63.0, (62 + GIB / loop) / (GIB / loop)])
    for proto in ("ll", "ll128"):
        np.testing.assert_array_equal(
            pipeline_fill(rules, "ring", "reduce", proto, 64, 8, 16, 32, sizes), 1
        )


def _h100_server(catalog):
    return expand(gen.single_switch(8, "dgx-h100", "qm9700", catalog=catalog), catalog)


def test_nvls_all_reduce_time_carries_the_fill(catalog):
    # On one H100 server: t(S) = latency + bw(S) (1 + 2 min(1, L/S)), L = 128 x chunk(S).
    fabric = _h100_server(catalog)
    engine = CollectiveEngine(fabric, catalog)
    ranks = np.arange(8, dtype=np.int64)
    sizes = np.array([1 * MIB, 16 * MIB, 64 * MIB])
    times = np.array([r["time_s"] for r in engine.run("all-reduce", ranks, sizes, "nvls").rows])
    latency = engine.run("all-reduce", ranks, np.array([0.0]), "nvls").rows[0]["time_s"]
    per_byte = engine.nvlink_seconds_per_byte(ranks) * (1 + 1 / 8)
    loops = 128 * np.array([16 * KIB, 32 * KIB, 64 * KIB])
    expected = latency + per_byte * sizes * (1 + 2 * np.minimum(1, loops / sizes))
    np.testing.assert_allclose(times, expected, rtol=1e-9)


def test_ring_broadcast_time_is_the_chain_pipeline(catalog):
    # One GPU on each of 8 servers of a non-blocking switch: the chain's hops are NIC to NIC,
    # 2 channels (one NIC's), so L = 1 MiB and t(S) - t(0) = S/B (1 + 6 min(1, L/S)).
    from tests.engine.collectives.test_timing import bandwidth_part, one_rank_per_server

    fabric, ranks = one_rank_per_server(8, catalog)
    engine = CollectiveEngine(fabric, catalog)
    sizes = np.array([256 * KIB, 1 * MIB, 1 * GIB])
    bw_part, _ = bandwidth_part(engine, "broadcast", "ring", ranks, sizes)
    rate = float(engine.gpu_net_rate[ranks[0]])
    expected = sizes / rate * (1 + 6 * np.minimum(1, 1 * MIB / sizes))
    np.testing.assert_allclose(bw_part, expected, rtol=1e-9)
