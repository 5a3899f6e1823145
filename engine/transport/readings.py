"""The readings of NVIDIA's DCQCN firmware registers that no document settles.

A firmware profile (``dcqcn-nvidia``, ``dcqcn-barre-retune``) lists the registers as
``mlxconfig`` shows them; what two of them mean is read differently by the public sources,
and at 400G each reading decides the regime (docs/transport.md, "The readings"):

- ``DCE_TCP_G`` (1019 by default, in 1/1024): mstflint's parameter text gives alpha =
  cnp_received x G + (1 - G) x alpha, G the *gain* of the average (so alpha follows the last
  microsecond); Mellanox's community page DOC-2790 (v19) and Google's Isekai simulator take G
  as the *retention*, alpha = G x alpha + (1 - G) x cnp_received (a 204 us average).
- ``RPG_BYTE_RESET`` (32767): "Given in Bytes" in every NVIDIA text (mstflint, the FreeBSD
  mlx5 driver's descriptions); Isekai counts it in 64-byte units.
- The byte counter itself: NVIDIA lists it and Zhu's ns-3 DCQCN models it; the HPCC
  artifact's NVIDIA-style DCQCN (the most used public DCQCN model) has none.
- ``MIN_TIME_BETWEEN_CNPS``: "from the port" in mstflint's text, per flow in the paper and
  ns3-rdma; newer firmware has a ``CNP_MODERATION`` choice of either whose device default
  is not documented. Per port, the flows a port receives share its CNPs
  (`engine.transport.tables.cnp_dead_time`).

The catalog profile names its default reading with the sources; a scenario's transport
section can take the other (``dcqcn_g_reading``, ``dcqcn_byte_unit_bytes``,
``dcqcn_byte_counter``, ``dcqcn_cnp_pacing``), so that a verdict can be shown over every
reading.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.catalog.devices import Device
from engine.model.transport_checks import CNP_PACINGS, G_READINGS

G_SCALE = 1024.0  # DCE_TCP_G is a fraction of 2^10
BYTE_UNITS = (1.0, 64.0)  # the two units RPG_BYTE_RESET is read in


@dataclass(frozen=True)
class DcqcnReadings:
    """A choice for each unsettled reading; ``None`` keeps the profile's own default."""

    g_reading: str | None = None
    byte_unit_bytes: float | None = None
    byte_counter: bool | None = None
    cnp_pacing: str | None = None


def is_firmware_profile(profile: Device) -> bool:
    """Whether a DCQCN profile lists NVIDIA's firmware registers (``dce_tcp_g``), so that the
    readings apply to it; the paper's profile states its constants directly."""
    return profile.has("dce_tcp_g")


def alpha_gain(profile: Device, readings: DcqcnReadings) -> float:
    """The weight of a new sample in alpha's average per alpha period, under the reading
    of ``DCE_TCP_G``; a profile without the register keeps its ``alpha_gain``."""
    if not is_firmware_profile(profile):
        return float(profile.value("alpha_gain"))
    g = float(profile.value("dce_tcp_g")) / G_SCALE
    reading = readings.g_reading or str(profile.value("dce_tcp_g_reading"))
    if reading not in G_READINGS:
        raise ValueError(f"unknown reading of DCE_TCP_G {reading!r}; use {' or '.join(G_READINGS)}")
    return g if reading == "gain" else 1.0 - g


def cnp_pacing(profile: Device, readings: DcqcnReadings) -> str:
    """Whether the notification point paces CNPs per flow or per port, under the reading
    of ``MIN_TIME_BETWEEN_CNPS`` (a profile without the field: per flow, as the paper)."""
    pacing = readings.cnp_pacing or (
        str(profile.value("cnp_pacing")) if profile.has("cnp_pacing") else "flow"
    )
    if pacing not in CNP_PACINGS:
        raise ValueError(f"unknown CNP pacing {pacing!r}; use {' or '.join(CNP_PACINGS)}")
    return pacing


def byte_counter_bytes(profile: Device, readings: DcqcnReadings) -> float:
    """The bytes a flow sends between two byte-counter increases (``inf``: no byte counter),
    under the reading of ``RPG_BYTE_RESET``'s unit."""
    counter = profile.value("byte_counter_bytes")
    if counter is None or readings.byte_counter is False:
        return math.inf
    if not is_firmware_profile(profile):
        return float(counter)
    unit = readings.byte_unit_bytes
    if unit is None:
        unit = float(profile.value("byte_counter_unit_bytes"))
    return float(counter) * float(unit)
