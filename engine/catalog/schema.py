"""What a server, switch or NIC entry must hold for the engine to use it, and the check.

The reader (`engine.catalog.reader`) checks a catalog's shape; this module checks the
meaning of the three kinds of device a user may define (`engine.catalog.custom`): each
field the engine reads without a fallback is present, counts are whole and at least one,
rates positive, times, prices and powers not negative, flags true or false, and the GPU and
NIC a server names exist in the catalog. The shipped entries pass the same check (a test
holds them to it), so a user-defined device is held to what the shipped ones are.
"""

from __future__ import annotations

import math
from typing import Any

from engine.catalog.errors import CatalogError

# field -> rule; every field listed is required for its kind
REQUIRED: dict[str, dict[str, str]] = {
    "server": {
        "gpu": "gpu",
        "gpus_per_server": "count",
        "nic": "nic",
        "nics_per_server": "count",
        "nic_port_gbps": "positive",
        "nvlink_bw_GBps": "positive",
        "nvlink_latency_ns": "non-negative",
        "power_w": "non-negative",
        "price_usd": "non-negative",
    },
    "switch": {
        "port_modes": "port modes",
        "latency_ns": "non-negative",
        "power_w": "non-negative",
        "price_usd": "non-negative",
        "adaptive_routing": "flag",
        "in_network_reduction": "name or null",
    },
    "nic": {
        "port_gbps": "positive",
        "ports": "count",
        "port_modes_gbps": "speeds",
        "latency_ns": "non-negative",
        "power_w": "non-negative",
        "price_usd": "non-negative",
    },
}
# checked when present
OPTIONAL: dict[str, str] = {
    "power_typical_w": "non-negative",
    "rack_units": "non-negative",
    "price_includes_nics": "flag",
    "port_buffer_bytes": "positive",
    "buffer_mb": "positive",
    "nvlink_links": "count",
    "scalable_unit_servers": "count",
}
RULE_TEXT = {
    "count": "a whole number of at least 1",
    "positive": "a number above 0",
    "non-negative": "a number of 0 or more",
    "flag": "true or false",
    "name or null": "text (the feature's name, e.g. 'SHARPv3') or null (none)",
    "gpu": "the id of a catalog GPU",
    "nic": "the id of a catalog NIC",
    "port modes": "an object of port speed in Gb/s to a whole number of ports, e.g. {'400': 64}",
    "speeds": "a list of port speeds in Gb/s above 0",
}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _speed_key(key: Any) -> bool:
    try:
        return float(key) > 0
    except (TypeError, ValueError):
        return False


def value_fits(rule: str, value: Any, kinds: dict[str, str]) -> bool:
    """Whether `value` meets `rule` (`kinds` maps catalog ids to their kind, for the GPU
    and NIC a server names)."""
    if rule == "count":
        return _number(value) and float(value).is_integer() and value >= 1
    if rule == "positive":
        return _number(value) and value > 0
    if rule == "non-negative":
        return _number(value) and value >= 0
    if rule == "flag":
        return isinstance(value, bool)
    if rule == "name or null":
        return value is None or (isinstance(value, str) and bool(value.strip()))
    if rule in ("gpu", "nic"):
        return isinstance(value, str) and kinds.get(value) == rule
    if rule == "port modes":
        return (
            isinstance(value, dict)
            and bool(value)
            and all(_speed_key(k) and value_fits("count", v, kinds) for k, v in value.items())
        )
    if rule == "speeds":
        return isinstance(value, list) and bool(value) and all(_number(v) and v > 0 for v in value)
    raise ValueError(rule)  # a bug in the tables above


def check_device(
    device_id: str, kind: str, values: dict[str, Any], kinds: dict[str, str], where: str = ""
) -> None:
    """Refuse an entry of `kind` whose `values` (field -> value) the engine could not use;
    the `CatalogError` names the entry (`where`, else its id) and the field."""
    place = where or f"device {device_id!r}"
    rules = REQUIRED.get(kind)
    if rules is None:
        raise CatalogError(f"{place}: kind {kind!r}; a user may define {', '.join(REQUIRED)}")
    for name, rule in rules.items():
        if name not in values:
            raise CatalogError(f"{place} field {name!r}: missing; expected {RULE_TEXT[rule]}")
    for name, value in values.items():
        rule = rules.get(name) or OPTIONAL.get(name)
        if rule is not None and not value_fits(rule, value, kinds):
            raise CatalogError(f"{place} field {name!r}: {_shown(value)} is not {RULE_TEXT[rule]}")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
