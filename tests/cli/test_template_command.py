"""``template``: the CLI builds the same scenario as the engine's generator (and the app's
dialog), writes it where asked so the other commands read it, and refuses what a template
cannot build with its message and exit status 2."""

from __future__ import annotations

import json

from cli.main import main
from engine.model.scenario import from_json, to_json
from engine.topology.templates import generate


def test_template_prints_the_generators_scenario(capsys):
    assert (
        main(
            ["template", "dual-tor", "--gpus", "256", "--server", "hgx-b300", "--switch", "sn5600"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert from_json(out) == generate("dual-tor", gpus=256, server="hgx-b300", switch="sn5600")
    groups = {g["id"]: g["name"] for g in json.loads(out)["groups"]}
    assert groups["p1-leaf"] == "ToR A (plane 1)" and groups["p2-leaf"] == "ToR B (plane 2)"


def test_template_writes_a_file_the_other_commands_read(tmp_path, capsys):
    path = tmp_path / "nvl72.json"
    assert (
        main(["template", "nvl72", "--gpus", "576", "--server", "gb200-nvl72", "--out", str(path)])
        == 0
    )
    assert "8 × gb200-nvl72" in capsys.readouterr().out
    assert path.read_text(encoding="utf-8").strip() == to_json(generate("nvl72", gpus=576))
    assert main(["validate", str(path)]) == 0
    assert "576 GPUs" in capsys.readouterr().out


def test_template_refusals_name_the_reason(capsys):
    assert (
        main(
            [
                "template",
                "multi-plane",
                "--planes",
                "4",
                "--server",
                "hgx-b300",
                "--switch",
                "sn5600",
            ]
        )
        == 2
    )
    assert "makes 2 link(s)" in capsys.readouterr().err
    assert main(["template", "nvl72", "--planes", "2"]) == 2
    assert "takes no --planes" in capsys.readouterr().err
    assert main(["template", "nvl72", "--gpus", str(72 * 33)]) == 2  # not whole SUs of 8 racks
    assert "the nearest GPU counts that build are 2,304 or 2,880" in capsys.readouterr().err


def test_template_builds_the_64_rack_superpod_in_pods(tmp_path, capsys):
    path = tmp_path / "superpod.json"
    assert main(["template", "nvl72", "--gpus", "4608", "--out", str(path)]) == 0
    assert "64 × gb200-nvl72 in 8 pods of 8" in capsys.readouterr().out
    assert path.read_text(encoding="utf-8").strip() == to_json(generate("nvl72", gpus=4608))
    groups = {g["id"]: g for g in json.loads(path.read_text(encoding="utf-8"))["groups"]}
    assert {f"p{p}-servers" for p in range(1, 9)} <= set(groups) and "p9-servers" not in groups
    assert groups["core"]["tier"] == "core"
    assert main(["validate", str(path)]) == 0
    assert "4,608 GPUs" in capsys.readouterr().out
