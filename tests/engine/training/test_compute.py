"""Model arithmetic: parameter counts against the model names, FLOPs against the closed form.

The FLOPs formula is checked against Narayanan et al. 2021 (arXiv 2104.04473) eq. 3.
"""

from __future__ import annotations

import dataclasses

import pytest

from engine.catalog.model_presets import get_model
from engine.training.compute import flops_per_token, parameter_counts


def test_parameter_counts_match_the_model_names():
    assert parameter_counts(get_model("gpt3-175b")).total == pytest.approx(175e9, rel=0.01)
    assert parameter_counts(get_model("llama3-70b")).total == pytest.approx(70.6e9, rel=0.01)
    assert parameter_counts(get_model("llama3-405b")).total == pytest.approx(405.9e9, rel=0.01)
    mixtral = parameter_counts(get_model("mixtral-8x7b"))
    assert mixtral.total == pytest.approx(46.7e9, rel=0.01)  # "47B parameters"
    assert mixtral.active == pytest.approx(12.9e9, rel=0.02)  # "13B active parameters"


def test_flops_formula_closed_form_for_a_tiny_model():
    tiny = dataclasses.replace(
        get_model("gpt3-175b"),
        layers=2,
        d_model=64,
        ffn=256,
        heads=4,
        kv_heads=4,
        vocab=1000,
        position_embeddings=128,
    )
    batch, s, layers, h, vocab = 3, 128, 2, 64, 1000
    # Narayanan et al. eq. 3 without recomputation: 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).
    expected = 72 * batch * s * layers * h**2 * (1 + s / (6 * h) + vocab / (12 * layers * h))
    assert flops_per_token(tiny, s) * batch * s == pytest.approx(expected, rel=1e-12)
