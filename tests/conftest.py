"""Test configuration: offscreen Qt for every GUI test, and shared fixtures."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from engine.catalog import default_catalog


@pytest.fixture(scope="session")
def catalog():
    """The shipped device catalog."""
    return default_catalog()
