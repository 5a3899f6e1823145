"""The numba cache refresh: stale kernels go when a package's sources change, only then."""

from __future__ import annotations

from engine.runtime.jit_cache import refresh


def test_cached_kernels_are_dropped_once_per_change_of_the_sources(tmp_path):
    (tmp_path / "kernel.py").write_text("x = 1\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    (cache / "kernel.run-1.py311.nbi").write_bytes(b"old")
    assert refresh(tmp_path) is True
    assert not list(cache.glob("*.nbi"))
    (cache / "kernel.run-1.py311.nbi").write_bytes(b"new")
    assert refresh(tmp_path) is False  # same sources: the new cache stays
    assert list(cache.glob("*.nbi"))
    (tmp_path / "kernel.py").write_text("x = 2\n")
    assert refresh(tmp_path) is True
    assert not list(cache.glob("*.nbi"))
