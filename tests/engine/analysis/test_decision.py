"""The deciding figures of several scenarios: values, deltas against the baseline, the
better value, and the busbw read at the sizes that matter."""

from __future__ import annotations

import pytest

from engine.analysis import (
    DEFAULT_PRESET,
    convert_technology,
    decision_row,
    decision_table,
    load_preset,
    run_evaluation,
)


def test_a_row_measures_every_scenario_against_the_first():
    row = decision_row("capex", "USD", "lower", [100.0, 120.0, None, 90.0])
    assert row.deltas == (None, 20.0, None, -10.0)
    assert row.relative == (None, pytest.approx(0.2), None, pytest.approx(-0.1))
    assert row.best == 3  # the cheapest


def test_higher_is_better_where_it_says_so_and_ties_mark_nothing():
    assert decision_row("busbw", "GB/s", "higher", [10.0, 30.0, 20.0]).best == 1
    assert decision_row("busbw", "GB/s", "higher", [10.0, 10.0]).best is None
    assert decision_row("busbw", "GB/s", "higher", [10.0, None]).best is None
    assert decision_row("power", "W", "lower", [0.0, 5.0]).relative == (None, None)


@pytest.fixture(scope="module")
def ib_and_roce(catalog):
    ib = load_preset(DEFAULT_PRESET)
    roce = convert_technology(ib, "roce", catalog)
    return [run_evaluation(s, catalog) for s in (ib, roce)]


def test_the_table_holds_the_figures_that_decide(ib_and_roce):
    ib, roce = ib_and_roce
    table = decision_table(["IB", "RoCE"], [ib, roce])
    titles = [r.title for r in table.rows]
    op = ib.collective.op
    for size in ("2 MiB", "128 MiB", "2 GiB"):
        assert f"{op} busbw at {size}" in titles
    for title in ("training step time", "GPU utilization", "tokens/s", "capex", "opex per year"):
        assert title in titles
    for title in ("power", "cost per GPU", "USD per busbw GB/s", "USD per token/s"):
        assert title in titles
    capex = table.row("capex")
    assert capex.values == (ib.cost.capex_usd, roce.cost.capex_usd)
    assert capex.deltas[1] == pytest.approx(roce.cost.capex_usd - ib.cost.capex_usd)
    opex = table.row("opex per year")
    assert opex.values[0] == pytest.approx(ib.cost.opex_usd / ib.cost.years)
    big = table.row(f"{op} busbw at 2 GiB")
    sizes = [r.bytes for r in ib.collective.rows]
    assert big.values[0] == ib.collective.rows[sizes.index(2 * 1024**3)].busbw_GBps


def test_the_csv_has_a_value_and_both_deltas_per_scenario(ib_and_roce):
    table = decision_table(["IB", "RoCE"], ib_and_roce)
    assert table.csv_header() == [
        "figure",
        "unit",
        "better",
        "IB",
        "RoCE",
        "RoCE - IB",
        "RoCE vs IB (relative)",
    ]
    capex = next(r for r in table.csv_rows() if r[0] == "capex")
    assert capex[1:3] == ["USD", "lower"]
    assert capex[5] == pytest.approx(capex[4] - capex[3])
    assert capex[6] == pytest.approx((capex[4] - capex[3]) / capex[3])


def test_labels_and_reports_must_pair(ib_and_roce):
    with pytest.raises(ValueError, match="labels"):
        decision_table(["one"], ib_and_roce)


def test_converting_drops_the_old_technologys_transport_settings(catalog):
    from engine.model.overrides import apply_override
    from engine.model.validation import check_structure

    ib = convert_technology(load_preset(DEFAULT_PRESET), "roce", catalog)
    ib = apply_override(ib, "transport.ecn_kmin_bytes", "100000")
    back = convert_technology(ib, "infiniband", catalog)
    assert back.transport.ecn_kmin_bytes is None
    assert check_structure(back, catalog) == []
    assert (
        check_structure(convert_technology(load_preset(DEFAULT_PRESET), "roce", catalog), catalog)
        == []
    )
