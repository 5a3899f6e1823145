"""User-defined devices from the command line: a scenario file carrying its own devices
imports, validates and evaluates; a bad one exits 2 naming the entry and the field."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_commands import run

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "formats" / "samples"


def test_an_imported_one_nic_topology_validates_and_costs_its_own_server(tmp_path: Path) -> None:
    out = tmp_path / "hosts.json"
    proc = run(
        "import", str(SAMPLE / "one-nic-hosts.links.csv"), "--switch", "qm9700", "--out", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [d["id"] for d in data["devices"]] == ["host-1x400g"]
    proc = run("validate", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "valid (4 GPUs" in proc.stdout
    proc = run("cost", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    assert "[user-defined]" in proc.stdout


def test_a_bad_device_exits_2_naming_the_entry_and_its_field(tmp_path: Path) -> None:
    out = tmp_path / "hosts.json"
    run("import", str(SAMPLE / "one-nic-hosts.links.csv"), "--switch", "qm9700", "--out", str(out))
    data = json.loads(out.read_text(encoding="utf-8"))
    data["devices"][0]["fields"]["nics_per_server"] = 0
    out.write_text(json.dumps(data), encoding="utf-8")
    proc = run("validate", str(out))
    assert proc.returncode == 2
    assert "devices[0] 'host-1x400g'.nics_per_server" in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr
