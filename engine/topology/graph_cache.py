"""Expanded graphs kept between evaluations, keyed by exactly what the expansion reads.

A sweep of a latency, or an edit of the workload, changes nothing of the expanded graph: its
nodes, links, capacities and wiring depend on the groups, bundles, failures, the fabric's
technology and header settings and the catalog (the size check against the memory limit
runs on every expansion). `graph_key` names those inputs and nothing else; the two
fabric-wide latency fields are left out because links keep their latency as a class
(`engine.topology.expand.latency_classes`), filled in afresh on every expansion. A cached
graph holds its catalog, so a key naming the catalog's identity cannot be reused by another.
"""

from __future__ import annotations

import json
from typing import Any

from engine.catalog.devices import Catalog
from engine.model.scenario import Scenario, to_dict
from engine.runtime.lru import ByteLRU

GRAPHS: ByteLRU[Any] = ByteLRU(512 * 2**20)

# Fabric fields that only set link latencies (their classes are recomputed on every expansion).
LATENCY_FIELDS = ("switch_latency_ns", "nic_latency_ns")

# Catalogs named by the keys, held so that an identity in a key stays theirs (bounded: a
# process reads few catalogs).
_CATALOGS: dict[int, Catalog] = {}


def graph_key(scenario: Scenario, catalog: Catalog) -> str:
    """The key of `scenario`'s expanded graph: its structure, failures, the fabric settings
    other than latencies, and the catalog."""
    fabric = {k: v for k, v in to_dict(scenario.fabric).items() if k not in LATENCY_FIELDS}
    if len(_CATALOGS) > 64:
        _CATALOGS.clear()
        GRAPHS.clear()
    _CATALOGS[id(catalog)] = catalog
    inputs = {
        "groups": to_dict(scenario.groups),
        "bundles": to_dict(scenario.bundles),
        "failures": to_dict(scenario.failures),
        "fabric": fabric,
        "catalog": id(catalog),
    }
    return json.dumps(inputs, sort_keys=True, default=str)
