"""Fabrics the training-step tests share."""

from __future__ import annotations

import pytest

from engine.presets.scenarios import load_preset
from engine.topology import generators as gen
from engine.topology.expand import expand


@pytest.fixture(scope="module")
def fabric_1k():
    """The default 1,024-GPU preset, expanded."""
    return expand(load_preset("dgx-h100-ib-ndr-1k"))


@pytest.fixture(scope="module")
def fabric_64():
    """Eight DGX H100 on one Quantum-2 switch (64 GPUs)."""
    return expand(gen.single_switch(64, "dgx-h100", "qm9700"))
