"""``evaluate --link-errors [BER]``: the link-errors line and JSON, and the default output
left as it was without the option."""

from __future__ import annotations

import json

from cli.main import main

PRESET = "hgx-h100-roce-ecmp-1k"


def test_text_names_the_fec_losses_and_costs(capsys):
    assert main(["evaluate", PRESET, "--parts", "training", "--link-errors", "1e-3"]) == 0
    out = capsys.readouterr().out
    assert "link errors: RS(544,514) FEC, pre-FEC BER 0.001 (ABOVE" in out
    assert "expected losses per step" in out
    assert "go-back-n +" in out and "(this fabric's)" in out


def test_json_adds_link_errors_only_when_asked(capsys):
    assert main(["evaluate", PRESET, "--parts", "training", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert "link_errors" not in plain
    assert main(["evaluate", PRESET, "--parts", "training", "--json", "--link-errors", "5e-4"]) == 0
    data = json.loads(capsys.readouterr().out)
    errors = data.pop("link_errors")
    assert data.keys() == plain.keys()
    assert errors["pre_fec_ber"] == 5e-4 and errors["recovery"] == "go-back-n"
    assert errors["base_step_s"] == plain["training"]["step_s"]
    assert next(c["recovery"] for c in errors["costs"]) == "go-back-n"


def test_default_ber_comes_from_the_catalog(capsys):
    assert main(["evaluate", PRESET, "--parts", "training", "--json", "--link-errors"]) == 0
    errors = json.loads(capsys.readouterr().out)["link_errors"]
    assert errors["pre_fec_ber"] == 1e-6 and errors["within_limit"]
