"""The byte-bounded LRU the engine's work caches are made of."""

from __future__ import annotations

import numpy as np

from engine.runtime.lru import ByteLRU, nbytes_of


def test_the_least_recently_used_goes_first_when_the_bytes_run_out() -> None:
    cache: ByteLRU[np.ndarray] = ByteLRU(limit_bytes=3 * 800)
    for key in "abc":
        cache.put(key, np.zeros(100))  # 800 bytes each
    assert cache.get("a") is not None  # a is now the most recent
    cache.put("d", np.zeros(100))
    assert cache.get("b") is None and len(cache) == 3 and cache.bytes == 2400
    assert cache.get("a") is not None and cache.get("c") is not None
    assert (cache.hits, cache.misses) == (3, 1)


def test_a_value_larger_than_the_limit_is_not_kept_and_a_growing_one_is_remeasured() -> None:
    cache: ByteLRU[dict] = ByteLRU(limit_bytes=1000)
    cache.put("huge", {"x": np.zeros(200)})
    assert cache.get("huge") is None and cache.bytes == 0
    value = {"x": np.zeros(50)}
    cache.put("grows", value)
    cache.put("other", {"x": np.zeros(50)})
    assert cache.get("grows") is value  # in use, so the most recent
    value["x"] = np.zeros(100)  # 800 bytes now: with the other's 400, past the limit
    cache.resize("grows")
    assert cache.get("other") is None and cache.bytes == 800


def test_bytes_are_counted_through_objects_tuples_and_dicts() -> None:
    class Holder:
        def __init__(self) -> None:
            self.a = np.zeros(10)
            self.b = (np.zeros(5, dtype=np.int32), {"c": np.zeros(2)})

    assert nbytes_of(Holder()) == 80 + 20 + 16
