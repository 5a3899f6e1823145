"""NCCL's own choice of algorithm and protocol: its static tuner, blind to the fabric's state.

NCCL times every enabled (algorithm, protocol) pair with its cost model and runs the
fastest (`topoGetAlgoInfo`, src/enqueue.cc; ``../shared/reference/nccl-model.md`` §1.2). That
model knows the GPU's links and the NIC rates its topology search found (``bwIntra``,
``bwInter`` times the channels), its latency tables and its protocol factors and caps; it
knows nothing past the NIC: not the switches' oversubscription, not ECMP collisions, not
pauses, marks or congestion control. So NCCL can pick an algorithm the network then
punishes, and FabricLab must time the algorithm NCCL runs, not the one that would have been
fastest. This module gives the tuner's view of a routed stage (its busiest NVLink or NIC cable
over that link's rate, as NCCL's bus bandwidth per channel times the channels; no fabric
path latency, no loss, no calibration) and the choice that follows; the fastest pair under the transport stays beside it as a what-if (what
forcing ``NCCL_ALGO`` / ``NCCL_PROTO`` would gain).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.collectives.stage_times import StageProfile
from engine.model.scenario import Calibration
from engine.topology.expand import NODE_GPU, NVLINK_BUNDLE, Fabric

# A capacity no stage reaches (bytes/s): the links NCCL's model does not see.
UNSEEN_CAPACITY = 1e30
UNCALIBRATED = Calibration()  # NCCL's tuner knows no fit to a measured cluster


def tuner_capacity(fabric: Fabric, capacity: np.ndarray) -> np.ndarray:
    """`capacity` as NCCL's tuner sees it: NVLink and the cables at a GPU's NIC as they are,
    every link between two switches unlimited."""
    kind = fabric.node_kind
    at_gpu = (kind[fabric.link_src] == NODE_GPU) | (kind[fabric.link_dst] == NODE_GPU)
    unseen = (fabric.link_bundle != NVLINK_BUNDLE) & ~at_gpu
    out = capacity.copy()
    out[unseen] = UNSEEN_CAPACITY
    return out


def busiest_seen_link(link_bytes: np.ndarray, capacity: np.ndarray) -> float:
    """Seconds per byte of a stage as NCCL's tuner times it: the busiest link it sees (NVLink
    or a NIC's cable) over its rate, `link_bytes` the bytes each link carries per byte of
    message and `capacity` the tuner's (`tuner_capacity`). It is NCCL's own form, a bus
    bandwidth per channel times the channels, and for the stages of its algorithms (rings,
    trees, a tree's 2:1 receivers) the max-min fluid's makespan on those links too."""
    seen = (capacity < UNSEEN_CAPACITY) & (link_bytes > 0)
    if not np.any(seen):
        return 0.0
    cap = capacity[seen]
    if np.any(cap <= 0):
        return float("inf")  # a cut cable the stage needs
    return float(np.max(link_bytes[seen] / cap))


def tuner_profile(profile: StageProfile) -> StageProfile:
    """The stage as NCCL's tuner times it: its flows at the rates NVLink and the NICs allow,
    with no path latency of the fabric (NCCL's latency tables stand for it), no loss and
    no transport."""
    spb = profile.tuner_seconds_per_byte
    return StageProfile(profile.seconds_per_byte if spb is None else spb, 0.0, 0.0, None)


@dataclass(frozen=True)
class Choice:
    """What runs at each size: NCCL's pick (its tuner's fastest pair) and the pair that is
    fastest under the transport, with both times as the fabric gives them."""

    algorithm: np.ndarray  # object arrays of names, one per size
    protocol: np.ndarray
    time_s: np.ndarray  # the picked pair's time on this fabric
    tuner_time_s: np.ndarray  # what NCCL's model expected of its pick
    fastest_algorithm: np.ndarray
    fastest_protocol: np.ndarray
    fastest_time_s: np.ndarray


class ChoiceTracker:
    """Keeps, size by size, NCCL's pick and the fastest pair as the pairs are timed."""

    def __init__(self, n_sizes: int):
        self.tuner = np.full(n_sizes, np.inf)
        self.time = np.full(n_sizes, np.inf)
        self.fastest = np.full(n_sizes, np.inf)
        self.algorithm = np.empty(n_sizes, dtype=object)
        self.protocol = np.empty(n_sizes, dtype=object)
        self.fastest_algorithm = np.empty(n_sizes, dtype=object)
        self.fastest_protocol = np.empty(n_sizes, dtype=object)

    def offer(self, algo: str, proto: str, times: np.ndarray, tuner_times: np.ndarray) -> None:
        """Take the pair `algo`/`proto` with its `times` on the fabric and its tuner times.

        Ties go to the pair offered first, as NCCL's loop over algorithms and protocols
        keeps the first minimum."""
        picked = tuner_times < self.tuner
        self.tuner[picked] = tuner_times[picked]
        self.time[picked] = times[picked]
        self.algorithm[picked] = algo
        self.protocol[picked] = proto
        faster = times < self.fastest
        self.fastest[faster] = times[faster]
        self.fastest_algorithm[faster] = algo
        self.fastest_protocol[faster] = proto

    def unpicked(self) -> np.ndarray:
        """The sizes no pair could be picked for (every time infinite)."""
        return np.flatnonzero((self.algorithm == None) | ~np.isfinite(self.time))  # noqa: E711

    def choice(self) -> Choice:
        """The picks as they stand."""
        return Choice(
            self.algorithm,
            self.protocol,
            self.time,
            self.tuner,
            self.fastest_algorithm,
            self.fastest_protocol,
            self.fastest,
        )
