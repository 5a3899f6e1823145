"""Constraints a scenario puts on the parts it may use, checked by validation.

`multi_vendor_only` asks for a network that no single vendor can hold hostage: every network
part (switch, NIC, cable, optic) must have at least one second source in the catalog's
``supply`` section on the scenario's technology. The GPU servers are left out of the rule on
purpose: every GPU board in the catalog comes from one vendor, so the rule would refuse every
scenario and decide nothing between fabrics. Validation names each part that breaks it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Constraints:
    """What the parts of a scenario must satisfy (each off by default)."""

    multi_vendor_only: bool = False
