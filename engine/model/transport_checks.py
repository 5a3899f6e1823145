"""Checks of a scenario's transport settings: mechanisms that exist on its technology, and
thresholds that make sense together.

PFC, ECN and DCQCN are RoCE mechanisms and IB CC is InfiniBand's: asking for one on the
other technology is refused with what to use instead, rather than silently ignored.
"""

from __future__ import annotations

from engine.catalog.devices import Catalog
from engine.model.errors import Problem
from engine.model.scenario import Scenario

TRANSPORT_MODELS = ("mechanistic", "ideal")
# The settings that exist on RoCE only (engine.analysis.comparison resets them on conversion).
ROCE_ONLY = (
    "pfc",
    "pfc_xoff_bytes",
    "ecn_kmin_bytes",
    "ecn_kmax_bytes",
    "ecn_pmax",
    "dcqcn",
    "dcqcn_g_reading",
    "dcqcn_byte_unit_bytes",
    "dcqcn_byte_counter",
    "dcqcn_cnp_pacing",
)
# What DCE_TCP_G may be read as: the retention or the gain of alpha's average
# (engine.transport.readings applies the reading).
G_READINGS = ("retention", "gain")
CNP_PACINGS = ("flow", "port")  # how the receiving NIC paces CNPs


def check_transport(scenario: Scenario, catalog: Catalog) -> list[Problem]:
    """Problems of the scenario's transport section on its fabric's technology."""
    t, technology = scenario.transport, scenario.fabric.technology
    problems = []
    if t.model not in TRANSPORT_MODELS:
        problems.append(
            Problem(
                "transport",
                f"unknown model {t.model!r}; use one of {', '.join(TRANSPORT_MODELS)}",
                "model",
            )
        )
    if technology == "infiniband":
        for name in ROCE_ONLY:
            if getattr(t, name) is not None:
                problems.append(
                    Problem(
                        "transport",
                        f"{name} is a RoCE setting; InfiniBand is lossless by credits and "
                        "has its own congestion control (ib_cc)",
                        name,
                    )
                )
    elif technology == "roce" and t.ib_cc is not None:
        problems.append(
            Problem(
                "transport",
                "ib_cc is InfiniBand congestion control; RoCE uses ECN with DCQCN (dcqcn)",
                "ib_cc",
            )
        )
    for name in ("pfc_xoff_bytes", "ecn_kmin_bytes", "ecn_kmax_bytes", "port_buffer_bytes"):
        value = getattr(t, name)
        if value is not None and value < 0:
            problems.append(Problem("transport", f"{name} must not be negative ({value:g})", name))
    if t.port_buffer_bytes is not None and t.port_buffer_bytes < 4096:
        problems.append(
            Problem(
                "transport",
                f"port_buffer_bytes must hold at least one 4 KiB packet, not {t.port_buffer_bytes:g}",
                "port_buffer_bytes",
            )
        )
    if t.ecn_pmax is not None and not 0 <= t.ecn_pmax <= 1:
        problems.append(
            Problem("transport", f"ecn_pmax must be in [0, 1], not {t.ecn_pmax:g}", "ecn_pmax")
        )
    if t.dcqcn_g_reading is not None and t.dcqcn_g_reading not in G_READINGS:
        problems.append(
            Problem(
                "transport",
                f"unknown reading of DCE_TCP_G {t.dcqcn_g_reading!r}; use "
                f"{' or '.join(G_READINGS)}",
                "dcqcn_g_reading",
            )
        )
    if t.dcqcn_cnp_pacing is not None and t.dcqcn_cnp_pacing not in CNP_PACINGS:
        problems.append(
            Problem(
                "transport",
                f"unknown CNP pacing {t.dcqcn_cnp_pacing!r}; use {' or '.join(CNP_PACINGS)}",
                "dcqcn_cnp_pacing",
            )
        )
    unit = t.dcqcn_byte_unit_bytes
    if unit is not None and not 1 <= unit <= 2**20:
        problems.append(
            Problem(
                "transport",
                f"dcqcn_byte_unit_bytes must be from 1 to 1,048,576 bytes (RPG_BYTE_RESET is "
                f"read in 1 or 64), not {unit:g}",
                "dcqcn_byte_unit_bytes",
            )
        )
    problems += _check_thresholds(scenario, catalog)
    profiles = sorted(k for k in catalog.technologies if k.startswith("dcqcn-"))
    if t.dcqcn_profile is not None and t.dcqcn_profile not in profiles:
        problems.append(
            Problem(
                "transport",
                f"unknown DCQCN profile {t.dcqcn_profile!r}; the catalog has {', '.join(profiles)}",
                "dcqcn_profile",
            )
        )
    return problems


def _check_thresholds(scenario: Scenario, catalog: Catalog) -> list[Problem]:
    """Kmax above Kmin, where one of them may come from a switch's catalog figures."""
    t = scenario.transport
    if t.ecn_kmin_bytes is None and t.ecn_kmax_bytes is None:
        return []
    pairs = []
    if t.ecn_kmin_bytes is not None and t.ecn_kmax_bytes is not None:
        pairs.append((t.ecn_kmin_bytes, t.ecn_kmax_bytes, ""))
    else:
        for g in scenario.groups:
            if g.kind != "switch":
                continue
            try:
                switch = catalog.get(g.model, "switch")
            except KeyError:
                continue  # an unknown model is reported with its group
            if not switch.has("ecn_kmin_bytes"):
                continue
            kmin = (
                t.ecn_kmin_bytes if t.ecn_kmin_bytes is not None else switch.value("ecn_kmin_bytes")
            )
            kmax = (
                t.ecn_kmax_bytes if t.ecn_kmax_bytes is not None else switch.value("ecn_kmax_bytes")
            )
            pairs.append((float(kmin), float(kmax), f" ({g.model}'s catalog value for the other)"))
    for kmin, kmax, where in pairs:
        if kmax <= kmin:
            return [
                Problem(
                    "transport",
                    f"ecn_kmax_bytes ({kmax:g}) must be above ecn_kmin_bytes ({kmin:g}){where}",
                    "ecn_kmax_bytes" if t.ecn_kmax_bytes is not None else "ecn_kmin_bytes",
                )
            ]
    return []
