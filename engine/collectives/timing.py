"""Collective timing on the expanded fabric: time, algbw and busbw per message size.

Each stage of a schedule (`engine.collectives.schedules`) is routed once and run through the
fluid simulation with one byte of message: flows of one stage carry fixed shares of the
message, so the time of the bandwidth part scales exactly with the message size. To it the
model adds, per step, the path latency of the routed flows, and once per collective the
latency NCCL's tuner gives the algorithm and protocol (`engine.collectives.nccl_model`: base,
NVLink and network step latencies, the ring's plateau factor, the tree's depth). Protocols keep
NCCL's share of the bandwidth (LL half, LL128 15/16 of the payload, Simple's per-family factor,
the tree's size correction) under NCCL's bus-bandwidth caps, and a GPU's network flows run no
faster than NCCL's channels drive one NIC. ``auto`` runs what NCCL would run: per size, the
algorithm and protocol NCCL's static tuner times fastest (`engine.collectives.tuner`: its
model sees NVLink and the NICs, not the fabric's congestion), among the algorithms NCCL
would consider (NVLS and NVLS-tree where the GPUs have NVLink SharP, CollNet only when
`fabric.collnet` enables it). Each row also names the pair that is fastest on this fabric
under the transport, the what-if of forcing ``NCCL_ALGO`` / ``NCCL_PROTO``.

The bandwidth time of a stage's network flows comes from the transport mechanisms
(`engine.collectives.stage_transport`), never below the ideal max-min time. Technology
effects (engine.collectives.technology): header efficiency (in the link capacities), NVLink
protocol efficiency, packet loss with its recovery as resent bytes and a delay per step. The result type lives in `engine.collectives.result`, rank placement in
`engine.collectives.placement`.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np

from engine.catalog.devices import Catalog
from engine.collectives.lumped_stage import lumped_profile
from engine.collectives.nccl_model import SIMPLE_ONLY, channel_rate_fraction, nvls_channel_share
from engine.collectives.result import CollectiveResult
from engine.collectives.schedules import (
    ALGORITHMS,
    NCCL_ALGORITHMS,
    NCCL_CLASS,
    Stage,
    build_schedule,
    bus_factor,
    layout,
    merge_concurrent,
)
from engine.collectives.stage_loss import stage_loss
from engine.collectives.stage_rates import stage_rates
from engine.collectives.stage_times import StageProfile, collective_times
from engine.collectives.stage_transport import stage_transport, transport_summary
from engine.collectives.technology import PROTOCOLS, technology
from engine.collectives.tuner import (
    UNCALIBRATED,
    ChoiceTracker,
    busiest_seen_link,
    tuner_capacity,
    tuner_profile,
)
from engine.collectives.work_cache import SCHEDULES, network_flows, unit_shares
from engine.flows.solver import link_loads
from engine.flows.utilization import hottest_links, utilization_by_tier
from engine.model.catalogs import scenario_catalog
from engine.model.errors import Problem, ScenarioError
from engine.routing.route_cache import array_digest
from engine.routing.router import Router
from engine.runtime.progress import Progress, checkpoint, poll
from engine.topology.expand import NODE_GPU, NVLINK_BUNDLE, Fabric

DEFAULT_SIZES = 8 * 4 ** np.arange(16)  # 8 B .. 8 GiB in powers of 4


def _efficiency(part: dict[str, Any]) -> float:
    """The transport's efficiency on a stage at the largest size: the ideal transfer time
    over the transport's, both before NCCL's protocol share, caps and pipeline fill (which
    an ideal transport pays as well); 1 if no time."""
    ideal, actual = float(part["ideal_s"][-1]), float(part["network_s"][-1])
    return ideal / actual if actual > 0 else 1.0


class CollectiveEngine:
    """Times collectives on one fabric; routed stages are cached between calls."""

    def __init__(
        self, fabric: Fabric, catalog: Catalog | None = None, router: Router | None = None
    ):
        self.fabric = fabric
        self.catalog = scenario_catalog(fabric.scenario, catalog)
        self.router = router or Router(fabric)
        self.tech = technology(fabric, self.catalog)
        # Factors fitted to this cluster's measured runs (all 1 without a calibration); the
        # fit itself swaps them between runs, the routed stages stay valid.
        self.calibration = fabric.scenario.calibration
        cap = fabric.link_capacity.copy()
        nvlink = fabric.link_bundle == NVLINK_BUNDLE
        cap[nvlink] *= self.tech.nvlink_efficiency
        if self.tech.loss_recovery == "link-retransmit" and self.tech.packet_loss_rate > 0:
            cap[~nvlink] /= 1 + self.tech.packet_loss_rate  # each loss resent once, on the link
        cap = self._nic_channel_caps(cap)
        self.capacity = cap
        self._capacity_key = array_digest(cap)  # names the capacities in the stage-rate cache
        # NCCL's tuner sees NVLink and the NICs, nothing between switches (engine.collectives.tuner)
        self.tuner_capacity = tuner_capacity(fabric, cap)
        self._tuner_blind = bool(np.any(self.tuner_capacity != cap))
        out_of_gpu = (fabric.node_kind[fabric.link_src] == NODE_GPU) & ~nvlink
        self.gpu_net_rate = np.zeros(fabric.n_gpus)
        np.add.at(self.gpu_net_rate, fabric.link_src[out_of_gpu], cap[out_of_gpu])
        self._profiles: dict[str, StageProfile] = {}

    def _nic_channel_caps(self, cap: np.ndarray) -> np.ndarray:
        """Cap each NIC's links at the rate NCCL's channels reach through it (48 of 50 GB/s).

        The cap is NCCL's own model of its channels (search.cc's per-channel speeds), on the
        cables between a GPU's NIC and its switch, in both directions; the header overhead
        already in the capacity stays, and the lower of the two holds.
        """
        fab = self.fabric
        kind = fab.node_kind
        edge = (fab.link_bundle != NVLINK_BUNDLE) & (
            (kind[fab.link_src] == NODE_GPU) | (kind[fab.link_dst] == NODE_GPU)
        )
        if not np.any(edge):
            return cap
        speeds = self.tech.nccl.net_channel_speeds
        bundles = fab.scenario.bundles
        cap = cap.copy()
        for b in np.unique(fab.link_bundle[edge]):
            rate = float(bundles[int(b)].speed_gbps) * 1e9 / 8
            nominal = rate * channel_rate_fraction(rate, speeds)
            on = edge & (fab.link_bundle == b)
            cap[on] = np.minimum(cap[on], nominal)
        return cap

    # ---------------------------------------------------------------------------------------
    def nic_seconds_per_byte(self, ranks: np.ndarray) -> float:
        """Seconds per byte through the slowest NIC of `ranks` (for switch-reduced stages)."""
        rate = self.gpu_net_rate[ranks]
        if np.any(rate <= 0):
            raise ScenarioError(
                Problem(
                    "workload",
                    "a rank's NIC has no working cable; in-network reduction "
                    "needs every rank on the fabric",
                    "algorithm",
                )
            )
        return 1.0 / float(rate.min())

    def nvlink_seconds_per_byte(self, ranks: np.ndarray) -> float:
        """Seconds per byte of NVLink SHARP traffic on the slowest GPU of `ranks`."""
        up = self.capacity[self.fabric.gpu_nvlink_up[ranks]]
        servers = int(np.unique(self.fabric.gpu_server[ranks]).shape[0])
        share = nvls_channel_share(self.tech.nccl, servers)
        return 1.0 / (float(up.min()) * self.tech.nvls_efficiency * share)

    def _analytic_link_bytes(self, stage: Stage, ranks: np.ndarray) -> np.ndarray:
        """Bytes per byte of S on the links a switch-reduced stage uses (both directions)."""
        fab = self.fabric
        link_bytes = np.zeros(fab.n_links)
        if stage.analytic_links == "nvlink":
            links = np.concatenate([fab.gpu_nvlink_up[ranks], fab.gpu_nvlink_down[ranks]])
        else:
            mine = np.zeros(fab.n_nodes, dtype=bool)
            mine[ranks] = True
            net = fab.link_bundle != NVLINK_BUNDLE
            links = np.flatnonzero(net & (mine[fab.link_src] | mine[fab.link_dst]))
        link_bytes[links] = stage.analytic_share
        return link_bytes

    def profile(
        self, stage: Stage, ranks: np.ndarray | None = None, progress: Progress | None = None
    ) -> StageProfile:
        """Route and simulate one stage at one byte of message (cached by its pattern).

        `progress` may stop the run between routing and the rate computation.
        """
        if stage.lumped:  # every pair of every GPU at once, by kinds of flows (lumped_stage)
            key = f"lumped|{stage.share[0]!r}|" + ("" if ranks is None else array_digest(ranks))
            if key not in self._profiles:
                self._profiles[key] = lumped_profile(self, ranks, float(stage.share[0]), progress)
            return self._profiles[key]
        if stage.analytic_s_per_byte is not None:
            link_bytes = self._analytic_link_bytes(stage, ranks) if ranks is not None else None
            # The reduction climbs from every rank to the top of its tree and back down: as
            # far as the path from the first rank to the last.
            lat = 0.0
            if ranks is not None and ranks.size > 1:
                policy = self.fabric.scenario.routing
                lat = float(self.router.route(ranks[:1], ranks[-1:], policy).latency[0])
            if stage.analytic_links == "nvlink":
                return StageProfile(stage.analytic_s_per_byte, 0.0, lat, link_bytes)
            return StageProfile(stage.analytic_s_per_byte, lat, 0.0, link_bytes)
        uniform = stage.share.size > 0 and np.all(stage.share == stage.share[0])
        if uniform and stage.share[0] != 1.0:
            # Time scales with the bytes when every flow carries the same share: route the
            # pattern once at share 1 and scale (halving steps differ only in their shares).
            unit = self.profile(
                replace(stage, share=unit_shares(stage.share.shape[0])), ranks, progress
            )
            k = float(stage.share[0])
            return StageProfile(
                unit.seconds_per_byte * k,
                unit.net_latency_s,
                unit.nvlink_latency_s,
                None if unit.link_bytes_per_byte is None else unit.link_bytes_per_byte * k,
                unit.loss_log_survival_per_byte * k,
                unit.loss_rtt_s,
                unit.transport,
                unit.transport_scale * k,
                None if unit.tuner_seconds_per_byte is None else unit.tuner_seconds_per_byte * k,
            )
        pipe = () if stage.pipeline is None else (stage.pipeline.pipe, stage.pipeline.phase)
        key = array_digest(stage.src, stage.dst, stage.share, *pipe)
        cached = self._profiles.get(key)
        if cached is not None:
            return cached
        fab = self.fabric
        routed = self.router.route(
            stage.src, stage.dst, fab.scenario.routing, connection_bytes=stage.share
        )
        if routed.unreachable.size:
            raise ScenarioError(
                Problem(
                    "workload",
                    f"{routed.unreachable.size} flows of {stage.name} cannot be routed",
                    "ranks",
                )
            )
        poll(progress, stage.name)
        capacity = self.capacity
        network_flow = network_flows(fab, routed)
        sizes, loss_log, loss_rtt = stage_loss(fab, self.tech, routed, network_flow)
        makespan, link_bytes = stage_rates(
            routed.flow_ptr,
            routed.entry_link,
            routed.entry_weight,
            capacity,
            sizes,
            routed.key,
            self._capacity_key,
        )
        tuner_makespan = None  # NCCL's tuner sees no fabric past the NICs and no loss
        if np.any(network_flow) and (self._tuner_blind or sizes is not routed.flow_bytes):
            loads = link_bytes
            if sizes is not routed.flow_bytes:
                loads = link_loads(
                    routed.flow_ptr,
                    routed.entry_link,
                    routed.entry_weight,
                    routed.flow_bytes,
                    fab.n_links,
                )
            tuner_makespan = busiest_seen_link(loads, self.tuner_capacity)
        transport = None
        if np.any(network_flow):
            buffer = self.tech.nccl.connection_buffer_bytes
            pacing = (stage, buffer) if buffer > 0 else None
            transport = stage_transport(
                fab, self.catalog, routed, sizes, capacity, progress, pacing
            )
        latency_net = float(routed.latency[network_flow].max()) if np.any(network_flow) else 0.0
        latency_nv = float(routed.latency[~network_flow].max()) if np.any(~network_flow) else 0.0
        prof = StageProfile(
            makespan,
            latency_net,
            latency_nv,
            link_bytes,
            loss_log,
            loss_rtt,
            transport,
            tuner_seconds_per_byte=tuner_makespan,
        )
        self._profiles[key] = prof
        return prof

    def algorithms(self, op: str, ranks: np.ndarray) -> list[str]:
        """The NCCL algorithms that can run `op` on these ranks here (what `auto` tries).

        In-network reduction (SHARP) needs every rank's own NIC on the fabric; with a NIC
        cut off (its leaf failed, say) `auto` leaves it out and the others route around the
        failure through NVLink (PXN) instead of the whole collective being refused.
        """
        every_nic_up = bool(np.all(self.fabric.gpu_line_rate[ranks] > 0))
        names, self.refusals = [], []  # the refusals say why when no algorithm is left
        for algo in ALGORITHMS[op]:
            if algo not in NCCL_ALGORITHMS:
                continue
            if algo == "sharp" and not (self.tech.collnet and every_nic_up):
                continue
            if algo in ("nvls", "nvlstree") and self.tech.nvls_efficiency <= 0:
                continue  # NVLink SHARP needs Hopper's NVSwitch or later
            try:
                self._schedule(op, algo, [ranks])  # kept: the run that follows reuses it
            except ScenarioError as exc:
                self.refusals.append(exc.brief())
                continue
            names.append(algo)
        return names

    def _schedule(self, op: str, algo: str, groups: list[np.ndarray]) -> list[Stage]:
        """The stages of `algo` for every group, merged stage by stage into one schedule.

        Kept in `SCHEDULES` by what a schedule reads (the op, the algorithm, the groups'
        ranks, the GPUs' servers and, for the switch-reduced algorithms, the per-byte
        seconds of NICs or NVLink), with its arrays read-only: a sweep of a timing field
        builds each schedule once, and the stage arrays hash once (`array_digest`).
        """
        extra = [self.nic_seconds_per_byte(r) if algo == "sharp" else 0.0 for r in groups] + [
            self.nvlink_seconds_per_byte(r) if algo in ("nvls", "nvlstree") else 0.0 for r in groups
        ]
        key = f"{op}|{algo}|{array_digest(self.fabric.gpu_server, *groups)}|{extra!r}"
        kept = SCHEDULES.get(key)
        if kept is not None:
            return kept
        stages = self._build_schedule(op, algo, groups)
        for stage in stages:
            pipe = () if stage.pipeline is None else (stage.pipeline.pipe, stage.pipeline.phase)
            for array in (stage.src, stage.dst, stage.share, *pipe):
                array.flags.writeable = False
        SCHEDULES.put(key, stages)
        return stages

    def _build_schedule(self, op: str, algo: str, groups: list[np.ndarray]) -> list[Stage]:
        """`_schedule` without the cache."""
        per_group = []
        for ranks in groups:
            lay = layout(ranks, self.fabric.gpu_server)
            per_group.append(
                build_schedule(
                    op,
                    algo,
                    lay,
                    self.nic_seconds_per_byte(ranks) if algo == "sharp" else 0.0,
                    self.nvlink_seconds_per_byte(ranks) if algo in ("nvls", "nvlstree") else 0.0,
                )
            )
        return merge_concurrent(op, per_group)

    def run(
        self,
        op: str,
        ranks: np.ndarray,
        sizes: np.ndarray | None = None,
        algorithm: str = "auto",
        protocol: str = "auto",
        concurrent: list[np.ndarray] | None = None,
        progress: Progress | None = None,
    ) -> CollectiveResult:
        """Time `op` over `ranks` (GPU ids) for each of `sizes` bytes.

        `progress` hears each algorithm as it starts and can stop the run between the
        profiles of its stages (`engine.runtime.progress.RunCancelledError`).

        `concurrent` lists further rank groups running the same collective at the same time
        (the data-parallel groups of every tensor/pipeline position, say): their flows share
        the fabric with those of `ranks`, and the result is the time of the whole set.
        """
        t0 = time.perf_counter()
        sizes = np.asarray(DEFAULT_SIZES if sizes is None else sizes, dtype=np.float64)
        ranks = np.asarray(ranks, dtype=np.int64)
        groups = [ranks, *(np.asarray(g, dtype=np.int64) for g in (concurrent or []))]
        all_ranks = np.concatenate(groups)
        lay = layout(ranks, self.fabric.gpu_server)
        if op not in ALGORITHMS:
            raise ScenarioError(
                Problem(
                    "workload",
                    f"unknown collective {op!r}; use one of {', '.join(ALGORITHMS)}",
                    "op",
                )
            )
        if protocol != "auto" and protocol not in PROTOCOLS:
            raise ScenarioError(
                Problem(
                    "workload",
                    f"unknown protocol {protocol!r}; use auto or {', '.join(PROTOCOLS)}",
                    "protocol",
                )
            )
        if algorithm == "auto":
            algos = self.algorithms(op, ranks)
            if not algos:
                why = "".join(f"; {reason}" for reason in self.refusals)
                raise ScenarioError(
                    Problem("workload", f"no algorithm can run {op} on {lay.n} ranks{why}", "ranks")
                )
        else:
            if algorithm == "sharp" and not self.tech.sharp:
                raise ScenarioError(
                    Problem(
                        "workload",
                        "sharp needs InfiniBand switches with in-network "
                        "reduction (SHARP) in every tier",
                        "algorithm",
                    )
                )
            algos = [algorithm]
        protocols = list(PROTOCOLS) if protocol == "auto" else [protocol]
        picks = ChoiceTracker(sizes.shape[0])
        curves: dict[str, list[float]] = {}
        plans = {}
        for a, algo in enumerate(algos):
            checkpoint(progress, a / len(algos), f"collective: {algo}")
            stages = self._schedule(op, algo, groups)
            profiles = []
            for k, stage in enumerate(stages):
                checkpoint(progress, (a + k / len(stages)) / len(algos), f"collective: {algo}")
                profiles.append(self.profile(stage, all_ranks, progress))
            algo_best = np.full(sizes.shape[0], np.inf)
            # NCCL runs CollNet (SHARP), NVLS and NVLS-tree with the Simple protocol only.
            simple_only = NCCL_CLASS.get(algo) in SIMPLE_ONLY
            usable = [p for p in protocols if p == "simple" or not simple_only]
            if not usable:
                if algorithm == "auto":
                    continue
                raise ScenarioError(
                    Problem("workload", f"{algo} runs with the simple protocol only", "protocol")
                )
            seen = [tuner_profile(p) for p in profiles]
            for proto in usable:
                times, parts = collective_times(
                    self.tech.nccl, self.calibration, op, algo, lay, stages, proto, sizes, profiles
                )
                tuner_times, _ = collective_times(
                    self.tech.nccl, UNCALIBRATED, op, algo, lay, stages, proto, sizes, seen
                )
                plans[(algo, proto)] = (stages, profiles, parts)
                picks.offer(algo, proto, times, tuner_times)
                algo_best = np.minimum(algo_best, times)
            curves[algo] = algo_best.tolist()
        unpicked = picks.unpicked()
        if unpicked.size:
            size = sizes[unpicked[0]]
            raise ScenarioError(
                Problem(
                    "workload",
                    f"{op} of {int(size):,} bytes takes no finite time on this fabric (every "
                    "algorithm's links have no usable capacity): check link speeds and "
                    "header efficiency",
                    "message_bytes",
                )
            )
        factor = bus_factor(op, lay.n)
        pick = picks.choice()
        rows = []
        for i, size in enumerate(sizes):
            algbw = size / pick.time_s[i]
            rows.append(
                {
                    "bytes": int(size),
                    "time_s": float(pick.time_s[i]),
                    "algbw_GBps": float(algbw / 1e9),
                    "busbw_GBps": float(algbw * factor / 1e9),
                    "algorithm": str(pick.algorithm[i]),
                    "protocol": str(pick.protocol[i]),
                    "tuner_time_s": float(pick.tuner_time_s[i]),
                    "fastest_algorithm": str(pick.fastest_algorithm[i]),
                    "fastest_protocol": str(pick.fastest_protocol[i]),
                    "fastest_time_s": float(pick.fastest_time_s[i]),
                }
            )
        stages, profiles, parts = plans[(pick.algorithm[-1], pick.protocol[-1])]
        breakdown = [
            {
                "stage": p["stage"],
                "latency_s": float(np.broadcast_to(p["latency_s"], sizes.shape)[-1]),
                "bandwidth_s": float(p["bandwidth_s"][-1]),
                **transport_summary(prof.transport, _efficiency(p)),
            }
            for p, prof in zip(parts, profiles, strict=True)
        ]
        link_bytes = np.zeros(self.fabric.n_links)
        for stage, prof in zip(stages, profiles, strict=True):
            if prof.link_bytes_per_byte is not None:
                link_bytes += stage.repeat * prof.link_bytes_per_byte * sizes[-1]
        util = link_bytes / (self.capacity * pick.time_s[-1])
        return CollectiveResult(
            op=op,
            ranks=lay.n,
            rows=rows,
            curves=curves,
            breakdown=breakdown,
            link_utilization=utilization_by_tier(self.fabric, util),
            hottest_links=hottest_links(self.fabric, util),
            link_util=util,
            engine_s=time.perf_counter() - t0,
        )
