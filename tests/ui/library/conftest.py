"""Fixtures of the library window tests: a new library of the test's own, closed after it."""

from __future__ import annotations

import pytest

from engine.analysis import open_library


@pytest.fixture
def library(tmp_path):
    """A new library in tmp_path (seeded with the presets), never the user's own."""
    lib = open_library(tmp_path / "lib.fabriclab")
    yield lib
    lib.close()
