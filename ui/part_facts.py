"""What the palette says of a part before it is used: its supply and, for a server, its NICs'
offload, read from the catalog (nothing computed).

A tooltip line per fact: the vendor and second sources per technology with the public lead
time and openness (catalog ``supply``, or "no supply data"); for a server, the congestion
control its NIC runs, whether the NIC reorders packets (per-packet spraying on RoCE needs
it) and the host CPU cores the NIC's offload saves.
"""

from __future__ import annotations

from engine.catalog.devices import Catalog, Device

_TECHNOLOGIES = (("infiniband", "InfiniBand"), ("roce", "RoCE"))


def _supply_line(device: Device, catalog: Catalog) -> str:
    supply = catalog.supply_of(device.id)
    if supply is None:
        return "Supply: no supply data in the catalog"
    techs = [
        (key, title)
        for key, title in _TECHNOLOGIES
        if device.technology in (None, "both")
        or (key == "roce") == (device.technology == "ethernet")
    ]
    counts = [f"{supply.second_sources(key)} on {title}" for key, title in techs]
    opened = [title for key, title in techs if supply.open_standard(key)]
    return (
        f"Supply: {supply.vendor}; second sources {', '.join(counts)}; "
        f"lead time {supply.lead_time_text()}; "
        + (f"open standard on {' and '.join(opened)}" if opened else "single-vendor interfaces")
    )


def _offload_line(device: Device, catalog: Catalog) -> str | None:
    if device.kind != "server" or not device.has("nic"):
        return None
    nic = catalog.devices.get(str(device.value("nic")))
    if nic is None:
        return None
    parts = [f"NIC offload ({nic.name})"]
    if nic.has("cc_profile"):
        parts.append(f"congestion control {nic.value('cc_profile')}")
    if nic.has("packet_reordering"):
        parts.append("reorders packets" if nic.value("packet_reordering") else "in-order only")
    if nic.has("host_cores_saved"):
        parts.append(f"host cores saved {int(nic.value('host_cores_saved'))} per NIC")
    return ": ".join([parts[0], "; ".join(parts[1:])]) if len(parts) > 1 else None


def part_tooltip(device: Device, catalog: Catalog) -> str:
    """The palette tooltip of `device`: name and vendor, supply, and a server's NIC offload."""
    lines = [f"{device.name} ({device.vendor})", _supply_line(device, catalog)]
    offload = _offload_line(device, catalog)
    if offload:
        lines.append(offload)
    return "\n".join(lines)
