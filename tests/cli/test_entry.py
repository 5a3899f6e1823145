"""The `fabriclab` console script is the same entry as ``python main.py``."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import main

ROOT = Path(__file__).resolve().parents[2]


def test_the_console_script_names_main_py_s_entry():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "scripts"
    ]
    module, _, function = scripts["fabriclab"].partition(":")
    assert (module, function) == ("main", "main")
    assert callable(main.main)


def test_the_installed_script_answers_like_main_py():
    script = Path(sys.executable).parent / "fabriclab"
    if not script.exists():
        pytest.skip("FabricLab is not installed in this interpreter's environment")
    installed = subprocess.run(
        [str(script), "presets"], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    checkout = subprocess.run(
        [sys.executable, "main.py", "presets"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert installed.returncode == checkout.returncode == 0
    assert installed.stdout == checkout.stdout
    assert "dgx-h100-ib-ndr-1k" in installed.stdout


def test_main_dispatches_arguments_to_the_cli(capsys):
    assert main.main(["presets", "--json"]) == 0
    assert '"name": "dgx-h100-ib-ndr-1k"' in capsys.readouterr().out
