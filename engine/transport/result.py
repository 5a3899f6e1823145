"""What a transport run returns: time series, per-class and per-link outcomes, the ideal.

Time-series row i describes the interval that ends at ``time_s[i]`` (the previous row's time
to this one): the classes' delivery rate over it, the standing queue of every link at its
end, and the share of it each link was paused. A jump over a settled stretch is one row
holding that stretch's averages.
"""

# Names carry their unit as the engine spells it (Bps: bytes per second).
# ruff: noqa: N802, N815

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.transport.network import TransportNetwork


@dataclass(frozen=True)
class TransportResult:
    """Outcome of `engine.transport.simulate.simulate`.

    Per class: finish time (``inf`` if unfinished at the end), bytes dropped (and sent
    again), the max-min ideal rate and the ideal finish time of a perfect transport
    (`engine.flows.solver`, all classes started together). Per link: the share of time
    paused, the share of bytes ECN-marked, bytes dropped, XOFF events, the largest standing
    queue and far-end occupancy, the mean standing queue and utilization, and the PFC
    headroom it needs and whether its buffer holds it. `steps` and `jumps` count the fixed
    steps taken and the settled stretches skipped; `settled_window_s` is the window of the
    steady state a run asked to stop at (``until_settled``), else None; `queues_at_rest`
    is False when it stopped there with rates at rest but some queue still moving;
    `fifo_bin_s` is the width of the FIFO egress queues' bins (0: the even service).
    """

    network: TransportNetwork
    time_s: np.ndarray
    class_rate_Bps: np.ndarray
    queue_bytes: np.ndarray
    paused_share: np.ndarray
    finish_s: np.ndarray
    delivered_bytes: np.ndarray
    dropped_class_bytes: np.ndarray
    ideal_rate_Bps: np.ndarray
    ideal_finish_s: np.ndarray
    pause_fraction: np.ndarray
    ecn_mark_fraction: np.ndarray
    dropped_bytes: np.ndarray
    xoff_events: np.ndarray
    max_queue_bytes: np.ndarray
    max_occupancy_bytes: np.ndarray
    mean_queue_bytes: np.ndarray
    utilization: np.ndarray
    headroom_bytes: np.ndarray
    lossless: np.ndarray
    xoff_bytes: np.ndarray
    xon_bytes: np.ndarray
    end_s: float
    steps: int
    jumps: int
    settled_window_s: tuple[float, float] | None = None
    queues_at_rest: bool = True
    fifo_bin_s: float = 0.0

    @property
    def finished(self) -> bool:
        """Whether every class delivered all its bytes."""
        return bool(np.all(np.isfinite(self.finish_s)))

    @property
    def makespan_s(self) -> float:
        """Time until the last class finished (``inf`` if one did not)."""
        return float(self.finish_s.max()) if self.finish_s.size else 0.0

    def mean_rate_Bps(self, t0: float, t1: float) -> np.ndarray:
        """Each class's mean delivery rate between `t0` and `t1` (from the time series)."""
        return _window_mean(self.time_s, self.class_rate_Bps, t0, t1)

    def mean_paused(self, t0: float, t1: float) -> np.ndarray:
        """Each link's paused share between `t0` and `t1` (from the time series)."""
        return _window_mean(self.time_s, self.paused_share, t0, t1)

    def queue_range(self, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray]:
        """Smallest and largest sampled standing queue of each link between `t0` and `t1`."""
        rows = (self.time_s > t0) & (self.time_s <= t1)
        if not rows.any():
            raise ValueError(f"no samples between {t0} and {t1} s")
        q = self.queue_bytes[rows]
        return q.min(axis=0), q.max(axis=0)


def _window_mean(time_s: np.ndarray, values: np.ndarray, t0: float, t1: float) -> np.ndarray:
    """Time-weighted mean of piecewise-constant rows (row i covers time[i-1]..time[i])."""
    if t1 <= t0:
        raise ValueError("the window must have t1 > t0")
    starts = np.concatenate([[0.0], time_s[:-1]])
    overlap = np.clip(np.minimum(time_s, t1) - np.maximum(starts, t0), 0.0, None)
    covered = overlap.sum()
    if covered <= 0.0:
        raise ValueError(f"no samples between {t0} and {t1} s")
    return overlap @ values / covered
