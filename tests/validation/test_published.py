"""The model against published measurements; tolerances and sources in checks.py."""

from __future__ import annotations

import pytest

from tests.validation.checks import CHECKS, published


def test_every_check_names_a_published_figure_with_a_source():
    figures = published()
    for check in CHECKS:
        figure = figures[check.figure]
        assert figure["source"]["url"].startswith("http")
        assert figure["source"]["date"]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.figure)
def test_model_is_within_tolerance_of_the_measurement(check):
    measured = published()[check.figure]["value"]
    model = check.model()
    error = abs(model - measured) / measured
    if check.known_gap:
        # The gap must still be there; when the model closes it, this fails: drop known_gap.
        assert error > check.tolerance, (
            f"{check.figure}: the known gap closed ({error:.1%}); remove known_gap"
        )
        pytest.xfail(check.known_gap)
    assert error <= check.tolerance, (
        f"{check.what}: model {model:.3g} vs measured {measured:.3g} ({error:.1%})"
    )
