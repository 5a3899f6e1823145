"""``main.py --self-test`` and ``--version`` from the checkout, as a user or CI runs them.

The bundled app runs the same code; tests/packaging/test_bundle.py runs it on the built bundle.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

from PySide6.QtGui import QImage

ROOT = Path(__file__).resolve().parents[2]
CHECKS = (
    "resource files",
    "evaluate default preset",
    "numba cache",
    "library round trip",
    "main window evaluated",
    "window rendered to PNG",
)


def pyproject_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "version"
    ]


def run_main(*args: str, timeout_s: float = 240) -> subprocess.CompletedProcess:
    """`python main.py ARGS` from the checkout without a display or a chosen Qt platform."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    return subprocess.run(
        [sys.executable, "main.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )


def colour_count(image: QImage) -> int:
    """Distinct pixel values on a 4-pixel grid (a blank render has one or two)."""
    return len(
        {image.pixel(x, y) for y in range(0, image.height(), 4) for x in range(0, image.width(), 4)}
    )


def check_lines(stdout: str) -> dict[str, str]:
    """Check name → its PASS/FAIL line, from the self-test's output."""
    lines = {}
    for line in stdout.splitlines():
        for name in CHECKS:
            if line[6:].startswith(name):
                lines[name] = line
    return lines


def test_self_test_passes_and_renders_a_real_window_png(tmp_path):
    png = tmp_path / "window.png"
    result = run_main("--self-test", "--self-test-png", str(png))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Qt platform offscreen" in result.stdout  # it chose offscreen by itself
    lines = check_lines(result.stdout)
    assert set(lines) == set(CHECKS), result.stdout
    assert all(line.startswith("PASS") for line in lines.values()), result.stdout
    assert all(" s  " in line for line in lines.values())  # each line carries its time
    assert "self-test passed" in result.stdout
    assert "Traceback" not in result.stderr

    image = QImage(str(png))
    assert not image.isNull()
    assert image.width() >= 640 and image.height() >= 400
    assert colour_count(image) >= 16
    assert str(png) in lines["window rendered to PNG"]


def test_self_test_fails_clearly_when_the_png_cannot_be_written(tmp_path):
    png = tmp_path / "no-such-folder" / "window.png"
    result = run_main("--self-test", "--self-test-png", str(png))
    assert result.returncode == 1
    lines = check_lines(result.stdout)
    assert lines["window rendered to PNG"].startswith("FAIL")
    assert f"cannot write {png}" in lines["window rendered to PNG"]
    assert lines["evaluate default preset"].startswith("PASS")
    assert "self-test FAILED: 1 of 6 checks (window rendered to PNG)" in result.stdout
    assert "Traceback" not in result.stderr


def test_version_prints_the_pyproject_version():
    result = run_main("--version", timeout_s=60)
    assert result.returncode == 0
    assert result.stdout.strip() == f"FabricLab {pyproject_version()}"
