"""docs/api-example.ipynb stays runnable: its code cells, run in order as one script with a
non-interactive plotting backend, build, evaluate, sweep, export and import without error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "docs" / "api-example.ipynb"


def _script() -> str:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert len(code) >= 4, "the notebook lost its code cells"
    return "\n\n".join(code) + "\n\nprint('NOTEBOOK-OK', len(y), min(y) > 0)\n"


def test_the_notebook_is_valid_json_of_nbformat_4():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert nb["nbformat"] == 4
    assert all(c["cell_type"] in ("markdown", "code") for c in nb["cells"])
    assert all(c.get("outputs") == [] for c in nb["cells"] if c["cell_type"] == "code")


def test_the_notebook_code_runs_as_a_script(tmp_path):
    script = tmp_path / "notebook.py"
    script.write_text(_script(), encoding="utf-8")
    env = {**os.environ, "MPLBACKEND": "Agg", "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "NOTEBOOK-OK 4 True" in done.stdout
    assert "busbw" in done.stdout and "(nodes, switches, links)" in done.stdout
