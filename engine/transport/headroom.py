"""Lossless-link arithmetic: PFC headroom and thresholds, credit round trips.

PFC: after a port's ingress crosses XOFF, bytes keep arriving until the pause has reached
the upstream port and that port has stopped: the pause frame's flight (one propagation
delay), the peer's response time, the bytes already on the wire (another propagation
delay), and a frame being sent at each end. The headroom a port needs above XOFF is
``2 x propagation x rate + response bytes + 2 x MTU`` (SONiC's headroom scripts; Bifrost's
bound of about one link bandwidth-delay product); when the buffer above XOFF is smaller the
port is not lossless and overflow is dropped. The same span, as time, is the delay after
which the upstream port obeys a pause or a resume.

InfiniBand credits: a sender holds credits for the receiver's free buffer; a credit comes
back one credit round trip (twice the propagation delay plus the update and pipeline time)
after its bytes left the receiver, so a link sustains at most buffer / round trip.
"""

# Names carry their unit as the engine spells it (Bps: bytes per second).
# ruff: noqa: N802

from __future__ import annotations

import numpy as np

from engine.transport.params import PfcParams

# The pause threshold is kept at least this many MTUs above zero, so that a port too small
# for its headroom still pauses on real occupancy instead of on every byte.
MIN_XOFF_MTUS = 1.0


def response_bytes(speed_gbps: np.ndarray, pfc: PfcParams) -> np.ndarray:
    """Peer response of each port as bytes: the table's entry at its speed, or, for a speed
    the table lacks, the response time of the nearest listed speed at this speed."""
    speeds = np.array(sorted(pfc.response_bytes_by_gbps), dtype=np.float64)
    table = np.array([pfc.response_bytes_by_gbps[s] for s in speeds])
    speed = np.asarray(speed_gbps, dtype=np.float64)
    nearest = np.abs(speed[:, None] - speeds[None, :]).argmin(axis=1)
    return table[nearest] * speed / speeds[nearest]


def pfc_headroom_bytes(
    capacity_Bps: np.ndarray,
    propagation_s: np.ndarray,
    speed_gbps: np.ndarray,
    mtu_bytes: float,
    pfc: PfcParams,
) -> np.ndarray:
    """Headroom each port needs above XOFF to stay lossless (bytes)."""
    return (
        2.0 * np.asarray(propagation_s) * np.asarray(capacity_Bps)
        + response_bytes(speed_gbps, pfc)
        + 2.0 * mtu_bytes
    )


def pfc_thresholds(
    buffer_bytes: np.ndarray, headroom_bytes: np.ndarray, mtu_bytes: float, pfc: PfcParams
) -> tuple[np.ndarray, np.ndarray]:
    """XOFF and XON of each port: the configured XOFF, or the buffer minus the headroom
    (the catalog's rule); XON lies the resume offset below XOFF."""
    if pfc.xoff_bytes is not None:
        xoff = np.full(np.shape(buffer_bytes), float(pfc.xoff_bytes))
    else:
        xoff = np.asarray(buffer_bytes, dtype=np.float64) - np.asarray(headroom_bytes)
    xoff = np.maximum(xoff, MIN_XOFF_MTUS * mtu_bytes)
    xon = np.maximum(xoff - pfc.xon_offset_bytes, 0.0)
    return xoff, xon


def pfc_is_lossless(
    buffer_bytes: np.ndarray, xoff_bytes: np.ndarray, headroom_bytes: np.ndarray
) -> np.ndarray:
    """Whether each port's buffer above XOFF holds the headroom it needs (an unbounded
    buffer always does)."""
    buffer = np.asarray(buffer_bytes, dtype=np.float64)
    finite = np.isfinite(buffer)
    room = np.where(finite, buffer - np.where(finite, xoff_bytes, 0.0), np.inf)
    return room >= np.asarray(headroom_bytes)


def credit_round_trip_s(propagation_s: np.ndarray, overhead_s: float) -> np.ndarray:
    """Credit loop time of each link: there and back plus the update and pipeline time."""
    return 2.0 * np.asarray(propagation_s, dtype=np.float64) + overhead_s


def credit_limited_rate_Bps(
    capacity_Bps: np.ndarray, buffer_bytes: np.ndarray, round_trip_s: np.ndarray
) -> np.ndarray:
    """The rate credits allow on an uncongested link: min(capacity, buffer / round trip)."""
    return np.minimum(np.asarray(capacity_Bps), np.asarray(buffer_bytes) / np.asarray(round_trip_s))
