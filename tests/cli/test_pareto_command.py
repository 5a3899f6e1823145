"""``pareto`` (alias ``frontier``): the front over a library's scenarios, with a search and
named scenarios beside them, and the refusals named (exit 2)."""

from __future__ import annotations

import json

import pytest

from cli.main import main
from engine.analysis import frontier_library, frontier_scenarios, library_scenarios, open_library


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    path = tmp_path_factory.mktemp("lib") / "lib.fabriclab"
    open_library(path).close()  # a new library is seeded with the presets
    return str(path)


def test_pareto_over_library_scenarios_matches_the_scenarios_front(library, capsys):
    assert main(["pareto", "--library", library, "--search", "1k", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    scenarios, names = library_scenarios(library, "1k")
    assert [p["label"] for p in data["points"]] == names and len(names) >= 3
    expected = frontier_scenarios(scenarios, names)
    assert data == json.loads(expected.to_json())
    assert data == json.loads(frontier_library(library, "1k").to_json())
    on = [p for p in data["points"] if p["on_front"]]
    off = [p for p in data["points"] if not p["on_front"]]
    assert on and off and all(p["dominated_by"] for p in off)


def test_named_scenarios_join_the_library_and_frontier_is_an_alias(library, capsys):
    args = ["--library", library, "--search", "hgx-h100-roce-ecmp-1k", "dgx-h100-ib-ndr-1k"]
    assert main(["pareto", *args]) == 0
    text = capsys.readouterr().out
    assert "hgx-h100-roce-ecmp-1k" in text and "dgx-h100-ib-ndr-1k" in text
    assert main(["frontier", *args]) == 0
    assert capsys.readouterr().out == text


def test_refusals(library, tmp_path, capsys):
    assert main(["pareto", "--library", library, "--search", "no-such-design-xyz"]) == 2
    assert "no scenario in the library" in capsys.readouterr().err
    assert main(["pareto", "--library", str(tmp_path / "missing.fabriclab")]) == 2
    assert "--library" in capsys.readouterr().err
    assert main(["pareto", "dgx-h100-ib-ndr-1k", "--library", library, "--param", "x"]) == 2
