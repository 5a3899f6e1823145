"""A least-recently-used map bounded by the bytes its values hold.

The engine keeps what it computed for a fabric (routing tables, routes, transport verdicts)
so that an edit re-runs only what it touches; each of those caches is one `ByteLRU`, so a
long session or a sweep cannot grow the process without bound, and each counts its hits so
the front ends can say when a cache saved work.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import numpy as np

T = TypeVar("T")


def nbytes_of(value: Any) -> int:
    """Bytes held by the numpy arrays in `value` (an object's attributes, a tuple, a dict)."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, dict):
        return sum(nbytes_of(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(nbytes_of(v) for v in value)
    if hasattr(value, "__dict__"):
        return nbytes_of(vars(value))
    return 0


class ByteLRU(Generic[T]):
    """A least-recently-used map bounded by the bytes of its values (`size` measures one).

    `hits` and `misses` count lookups, so a caller can say when the cache saved work."""

    def __init__(self, limit_bytes: int, size: Callable[[T], int] = nbytes_of):
        self.limit_bytes = limit_bytes
        self._size = size
        self._items: OrderedDict[str, tuple[T, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> T | None:
        """The value kept under `key` (now the most recent), or None."""
        with self._lock:
            item = self._items.get(key)
            if item is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return item[0]

    def put(self, key: str, value: T) -> None:
        """Keep `value` under `key`, dropping the least recent entries past the limit (a
        value larger than the whole limit is not kept)."""
        size = self._size(value)
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            if size > self.limit_bytes:
                return
            self._items[key] = (value, size)
            self._bytes += size
            while self._bytes > self.limit_bytes:
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= dropped

    def resize(self, key: str) -> None:
        """Measure the value under `key` again (it grew in place) and keep within the limit."""
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return
            size = self._size(item[0])
            self._bytes += size - item[1]
            self._items[key] = (item[0], size)
            while self._bytes > self.limit_bytes and len(self._items) > 1:
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= dropped

    def clear(self) -> None:
        """Forget everything (tests, and a caller that wants a cold run)."""
        with self._lock:
            self._items.clear()
            self._bytes = 0
            self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def bytes(self) -> int:
        """Bytes held now."""
        return self._bytes
