"""`kernels_cached`: whether numba's compiled kernels are on disk (a first start has none)."""

from __future__ import annotations

from engine.runtime.jit_cache import kernels_cached


def test_no_index_file_means_a_first_start(tmp_path):
    (tmp_path / "transport" / "__pycache__").mkdir(parents=True)
    assert not kernels_cached(tmp_path)


def test_an_index_file_beside_the_modules_or_in_the_cache_dir_counts(tmp_path):
    pkg = tmp_path / "engine" / "routing" / "__pycache__"
    pkg.mkdir(parents=True)
    (pkg / "kernels.route_flows-39.py311.nbi").write_bytes(b"x")
    assert kernels_cached(tmp_path / "engine")
    elsewhere = tmp_path / "numba-cache"
    elsewhere.mkdir()
    assert not kernels_cached(tmp_path / "engine", str(elsewhere))  # NUMBA_CACHE_DIR wins
