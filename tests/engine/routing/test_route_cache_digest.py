"""`array_digest`: a read-only array's digest is remembered, a writable one's never is."""

from __future__ import annotations

import numpy as np

from engine.routing import route_cache
from engine.routing.route_cache import array_digest


def test_a_writable_array_edited_in_place_gets_a_new_digest():
    a = np.arange(1000)
    before = array_digest(a)
    a[0] = 99
    assert array_digest(a) != before


def test_a_read_only_array_is_hashed_once_and_equals_a_fresh_copy(monkeypatch):
    a = np.arange(1000, dtype=np.float64)
    a.flags.writeable = False
    first = array_digest(a)
    calls = []
    real = route_cache._one_digest
    monkeypatch.setattr(route_cache, "_one_digest", lambda x: calls.append(1) or real(x))
    assert array_digest(a) == first and calls == []  # remembered
    assert array_digest(a.copy()) == first and calls == [1]  # same values, same digest


def test_several_arrays_hash_in_order():
    a, b = np.arange(5), np.arange(5, 10)
    assert array_digest(a, b) != array_digest(b, a)
    assert array_digest(a, b) == array_digest(a.copy(), b.copy())
