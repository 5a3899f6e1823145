"""``fabriclab goodput``: the text and JSON forms, IB vs RoCE, and bad input named, exit 2."""

from __future__ import annotations

import json

import pytest

from cli.main import main

PRESET = "dgx-h100-ib-ndr-1k"


def test_goodput_text_shows_interruptions_and_goodput(capsys):
    assert main(["goodput", PRESET]) == 0
    out = capsys.readouterr().out
    assert "interruptions per day" in out
    assert "goodput (tokens/s)" in out
    assert "infiniband" in out and "roce" not in out.split("note:")[0]


def test_goodput_json_with_a_chosen_interval_and_a_figure_override(capsys):
    args = ["goodput", PRESET, "--json", "--checkpoint-interval", "1800"]
    assert main([*args, "--reliability", "gpu_per_year=0.222"]) == 0
    doubled = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    base = json.loads(capsys.readouterr().out)
    assert base["checkpoint_interval_s"] == doubled["checkpoint_interval_s"] == 1800
    gpu = next(p for p in base["parts"] if p["kind"] == "gpu")
    assert doubled["interruptions_per_day"] == pytest.approx(
        base["interruptions_per_day"] + gpu["interruptions_per_day"]
    )
    assert doubled["goodput_tokens_per_s"] < base["goodput_tokens_per_s"]


def test_ib_vs_roce_gives_both_technologies(capsys):
    assert main(["goodput", PRESET, "--ib-vs-roce", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["technology"] for r in data["results"]] == ["infiniband", "roce"]


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--reliability", "gpu_per_yr=0.1"], "gpu_per_yr"),
        (["--reliability", "gpu_per_year=lots"], "--reliability"),
        (["--reliability", "nic_per_year=-1"], "nic_per_year"),
        (["--checkpoint-interval", "-5"], "checkpoint_interval_s"),
    ],
)
def test_bad_input_names_the_field_and_exits_2(capsys, args, named):
    assert main(["goodput", PRESET, *args]) == 2
    err = capsys.readouterr().err
    assert named in err
    assert "Traceback" not in err


def test_hot_spares_shorten_the_time_lost(capsys):
    args = ["goodput", PRESET, "--json", "--checkpoint-interval", "1800"]
    assert main(args) == 0
    base = json.loads(capsys.readouterr().out)
    assert main([*args, "--hot-spares"]) == 0
    spares = json.loads(capsys.readouterr().out)
    assert spares["hot_spares"] is True
    assert spares["restart_s"] < base["restart_s"]
    assert spares["goodput_share"] > base["goodput_share"]
