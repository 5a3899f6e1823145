"""The routing tests check the router's own work: each starts with empty routing caches
(some patch the router's constants, which a cached route would not see)."""

from __future__ import annotations

import pytest

from engine.routing import route_cache


@pytest.fixture(autouse=True)
def cold_routing_caches() -> None:
    route_cache.clear()
