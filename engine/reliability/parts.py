"""The parts of a fabric that can interrupt a training job, counted from its bill of materials.

The counts are the BOM's (engine.cost.bom), never counted again: servers and the GPUs in
them, NICs, switches, optical modules, fiber cords, and cables split into DAC and AOC
(engine.cost.parts.cable_type). Each kind has a rate of job interruptions per part-year in
the catalog's ``reliability`` profile. Software faults (bugs, NCCL watchdog timeouts) are
counted per GPU, as the fleet study they come from reports them.
"""

from __future__ import annotations

from engine.catalog.devices import Catalog
from engine.cost.bom import bill_of_materials
from engine.cost.parts import cable_type
from engine.topology.expand import Fabric

# Each kind of part and the field of the catalog's reliability profile holding its rate.
RATE_FIELDS = {
    "gpu": "gpu_per_year",
    "software": "software_per_gpu_year",
    "server": "server_per_year",
    "nic": "nic_per_year",
    "switch": "switch_per_year",
    "transceiver": "transceiver_per_year",
    "fiber": "fiber_per_year",
    "aoc": "aoc_per_year",
    "dac": "dac_per_year",
}
LABELS = {
    "gpu": "GPUs",
    "software": "software (per GPU)",
    "server": "servers (host)",
    "nic": "NICs",
    "switch": "switches",
    "transceiver": "optical modules",
    "fiber": "fiber cords",
    "aoc": "AOC cables",
    "dac": "DAC cables",
}


def part_counts(fabric: Fabric, catalog: Catalog) -> dict[str, int]:
    """How many parts of each kind (`RATE_FIELDS`) the fabric has, from its bill of materials.

    Every installed part counts, failed ones included: the job is taken to span the whole
    fabric, so any part that fails interrupts it.
    """
    counts = dict.fromkeys(RATE_FIELDS, 0)
    for line in bill_of_materials(fabric, catalog):
        if line.tier.startswith("storage"):
            continue  # the storage network's parts do not stop the training job's traffic
        if line.kind == "server":
            server = catalog.get(line.catalog_id, "server")
            counts["server"] += line.count
            counts["gpu"] += line.count * int(server.value("gpus_per_server"))
        elif line.kind == "cable":
            counts[cable_type(catalog.get(line.catalog_id, "cable"))] += line.count
        elif line.kind in counts:
            counts[line.kind] += line.count
    counts["software"] = counts["gpu"]
    return counts
