"""Imported hosts no catalog server matches: a user-defined server made to their measure.

Packet-simulator topologies (ns-3, htsim, SimAI exports, hand-written link lists) often
model a host as one GPU behind one NIC. When an imported server's NIC count matches no
catalog server, or the file names a server model the catalog lacks, the import defines the
server itself (`engine.model.devices.CustomDevice`, saved in the scenario): one GPU per NIC,
every NIC at the file's rate, based on the first catalog server whose NIC runs that rate
(its GPU, NIC and NVLink figures keep their sources). Its price and power are that server's
per-GPU share, an assumption the entry's note states.
"""

from __future__ import annotations

from engine.catalog.devices import Catalog, Device
from engine.formats.lines import refuse
from engine.model.devices import CustomDevice


def _runs(catalog: Catalog, server: Device, rate_gbps: float) -> bool:
    nic = catalog.devices.get(str(server.value("nic")))
    return nic is not None and rate_gbps in {float(s) for s in nic.value("port_modes_gbps")}


def host_server(
    catalog: Catalog, nics: int, rate_gbps: float, model: str | None, source: str
) -> CustomDevice:
    """The user-defined server of an imported host with `nics` NIC ports at `rate_gbps`
    (id `model` when the file names one, else ``host-{nics}x{rate}g``)."""
    servers = catalog.of_kind("server")
    exact = [s for s in servers if float(s.value("nic_port_gbps")) == rate_gbps]
    capable = [s for s in servers if _runs(catalog, s, rate_gbps)]
    if not (exact or capable):
        raise refuse(source, None, f"no catalog NIC runs {rate_gbps:g} Gb/s for host {model!r}")
    base = (exact or capable)[0]
    share = nics / int(base.value("gpus_per_server"))
    fields: dict[str, float | int] = {
        "gpus_per_server": nics,
        "nics_per_server": nics,
        "nic_port_gbps": rate_gbps,
        "price_usd": round(float(base.value("price_usd")) * share, 2),
        "power_w": round(float(base.value("power_w")) * share, 2),
    }
    if base.has("nic_cages"):
        fields["nic_cages"] = nics  # one NIC per cage: single-port modules
    return CustomDevice(
        id=model or f"host-{nics}x{rate_gbps:g}g",
        kind="server",
        name=f"imported host, {nics} GPU(s) and NIC(s) at {rate_gbps:g}G",
        based_on=base.id,
        note=(
            f"made by the import of {source.rsplit('/', 1)[-1]}: one GPU per NIC; price and "
            f"power are the {base.id}'s per-GPU share (assumption)"
        ),
        fields=fields,
    )
