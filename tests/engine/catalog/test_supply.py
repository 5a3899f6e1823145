"""The catalog's supply section: every part has one, sourced, and a bad one is refused."""

from __future__ import annotations

import json

import pytest

from engine.catalog.devices import default_catalog, parse_catalog
from engine.catalog.errors import CatalogError
from engine.runtime.resources import resource_path


@pytest.fixture(scope="module")
def catalog():
    return default_catalog()


def _shipped():
    return json.loads(resource_path("catalog.json").read_text(encoding="utf-8"))


def test_every_shipped_part_has_supply_facts_with_a_source_or_an_assumption(catalog):
    assert set(catalog.supply) == set(catalog.devices)
    for part_id, supply in catalog.supply.items():
        assert supply.vendor, part_id
        for name, figure in supply.figures.items():
            where = f"supply.{part_id}.{name}"
            assert figure.source is not None or figure.assumption, where
            if figure.source is not None and figure.source.grade == "L":
                assert figure.assumption, f"{where}: a low-confidence figure must say why"


def test_an_unknown_lead_time_says_so_and_never_a_number(catalog):
    for supply in catalog.supply.values():
        figure = supply.figures["lead_time_weeks"]
        if figure.value is None:
            assert supply.lead_time_text() == "unknown"
            assert "unknown" in figure.assumption.lower()
        else:
            assert figure.source is not None, supply.part_id  # a lead time needs a source


def test_infiniband_parts_have_no_second_source_and_ethernet_optics_several(catalog):
    assert catalog.supply_of("qm9700").second_sources("infiniband") == 0
    assert catalog.supply_of("connectx-7").second_sources("infiniband") == 0
    assert catalog.supply_of("connectx-7").second_sources("roce") >= 1
    assert catalog.supply_of("xcvr-800g-osfp-dr8").second_sources("roce") >= 2
    assert catalog.supply_of("connectx-7").open_standard("infiniband") is False
    assert catalog.supply_of("sn5600").open_standard("roce") is True


def test_a_part_without_supply_data_is_not_an_error():
    data = _shipped()
    del data["supply"]["qm9700"]
    catalog = parse_catalog(data)
    assert catalog.supply_of("qm9700") is None


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda s: s.update({"no-such-part": s["qm9700"]}), "no device 'no-such-part'"),
        (lambda s: s["qm9700"].pop("vendor"), r"supply.qm9700.vendor"),
        (lambda s: s["qm9700"].pop("open_standard"), "missing 'open_standard'"),
        (lambda s: s["qm9700"]["second_sources"].update({"value": -1}), "whole number >= 0"),
        (lambda s: s["qm9700"]["lead_time_weeks"].update({"value": [9, 3]}), r"\[low, high\]"),
        (lambda s: s["connectx-7"]["second_sources"].update({"value": {"ib": 0}}), "technology"),
        (
            lambda s: s["qm9700"]["second_sources"].update({"source": None, "assumption": None}),
            "neither a source nor an assumption",
        ),
    ],
)
def test_a_malformed_supply_entry_is_refused_by_its_place(change, match):
    data = _shipped()
    change(data["supply"])
    with pytest.raises(CatalogError, match=match):
        parse_catalog(data)
