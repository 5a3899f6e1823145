"""Packaging: resource lookup, version, numba cache location, desktop entry, icon, the bundle.

The fast tests run in `make test`. The ones marked slow run the built bundle
(dist/fabriclab/fabriclab) as a user would, in a clean environment; `make package-test`
builds the bundle when it is missing or stale and runs them (`pytest -m slow`).
"""

from __future__ import annotations

import configparser
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

import engine
from engine.catalog.devices import load_catalog_file
from engine.runtime import numba_cache
from engine.runtime.resources import resource_dir, resource_path

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "dist" / "fabriclab"
EXECUTABLE = BUNDLE / "fabriclab"
TEST_ONLY = ("pytest", "_pytest", "pytestqt", "hypothesis", "dask", "distributed", "importlinter")
UNUSED_QT = ("libQt6Quick", "libQt6Qml", "libQt6Network", "libQt6Pdf", "libQt6WebEngine")


def pyproject_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "version"
    ]


# ---- resources ---------------------------------------------------------------------------------


def test_resource_path_from_a_checkout_is_the_repository_resources_folder():
    assert resource_dir() == ROOT / "resources"
    assert resource_path("catalog.json") == ROOT / "resources" / "catalog.json"
    assert resource_path("icons", "fabriclab.svg").is_file()


def test_resource_path_in_a_bundle_reads_from_the_bundle_folder(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "resources", tmp_path / "resources")
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert resource_path("catalog.json") == tmp_path / "resources" / "catalog.json"
    catalog = load_catalog_file(resource_path("catalog.json"))
    expected = json.loads((ROOT / "resources" / "catalog.json").read_text(encoding="utf-8"))
    assert len(catalog.devices) == len(expected["devices"])
    assert resource_path("icons", "fabriclab.png").is_file()


def test_no_module_builds_resource_paths_itself():
    literal = re.compile(r"""["']resources["']""")
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("engine", "ui")
        for path in (ROOT / folder).rglob("*.py")
        if path.name != "resources.py" and literal.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "read resources through engine.runtime.resources.resource_path"


# ---- version -----------------------------------------------------------------------------------


def test_engine_version_is_the_pyproject_version():
    assert engine.__version__ == pyproject_version()


def test_project_version_reads_fabriclabs_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "fabriclab"\nversion = "9.8.7"\n')
    assert engine.project_version(tmp_path) == "9.8.7"


def test_project_version_without_its_pyproject_uses_the_package_metadata(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "other"\nversion = "1.2.3"\n')
    assert engine.project_version(tmp_path) == importlib.metadata.version("fabriclab")
    assert engine.project_version(tmp_path / "empty") == importlib.metadata.version("fabriclab")


def test_project_version_without_any_source_says_unknown(tmp_path, monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    (tmp_path / "pyproject.toml").write_text("this is not [toml")
    assert engine.project_version(tmp_path) == engine.UNKNOWN_VERSION


# ---- numba cache -------------------------------------------------------------------------------


def _choose(tmp_path, environ, frozen, package=None, home=None, temp=None):
    package = package or tmp_path / "pkg"
    package.mkdir(exist_ok=True)
    return numba_cache.choose_cache(
        package, "1.0", environ, frozen, home or tmp_path / "home", temp or tmp_path / "tmp"
    )


def test_numba_cache_is_left_alone_from_a_writable_checkout(tmp_path):
    environ: dict[str, str] = {}
    choice = _choose(tmp_path, environ, frozen=False)
    assert choice == numba_cache.CacheChoice(None)
    numba_cache.apply_cache_choice(choice, environ)
    assert environ == {}


def test_numba_cache_of_a_bundle_goes_to_the_xdg_cache_home(tmp_path):
    environ = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    choice = _choose(tmp_path, environ, frozen=True)
    assert choice.directory == tmp_path / "cache" / "fabriclab" / "numba-1.0"
    assert choice.note == ""
    numba_cache.apply_cache_choice(choice, environ)
    assert environ["NUMBA_CACHE_DIR"] == str(choice.directory)


def test_numba_cache_of_a_bundle_defaults_to_dot_cache_in_home(tmp_path):
    path = numba_cache.numba_cache_dir("1.0", {}, tmp_path)
    assert path == tmp_path / ".cache/fabriclab/numba-1.0"
    # the XDG spec says to ignore a relative XDG_CACHE_HOME
    relative = {"XDG_CACHE_HOME": "relative/cache"}
    assert numba_cache.numba_cache_dir("1.0", relative, tmp_path) == path


def _only_writable(*allowed):
    """A `can_write` that allows the folders under `allowed` only (root writes anywhere, so
    permission bits cannot stand in for a read-only install here)."""

    def can_write(path):
        if not any(path == a or a in path.parents for a in allowed):
            return False
        path.mkdir(parents=True, exist_ok=True)
        return True

    return can_write


def test_a_read_only_install_goes_to_the_users_cache(tmp_path):
    home = tmp_path / "home"
    choice = numba_cache.choose_cache(
        tmp_path / "pkg", "1.0", {}, False, home, tmp_path / "tmp", _only_writable(home)
    )
    assert choice.directory == home / ".cache/fabriclab/numba-1.0" and choice.note == ""


def test_a_read_only_install_with_no_home_falls_back_to_the_temporary_folder(tmp_path):
    temp = tmp_path / "tmp"
    choice = numba_cache.choose_cache(
        tmp_path / "pkg", "1.0", {}, False, Path("/nonexistent"), temp, _only_writable(temp)
    )
    assert choice.directory is not None and choice.directory.parent == temp
    assert "compile again" in choice.note and str(choice.directory) in choice.note


def test_nothing_writable_runs_uncached_and_says_so(tmp_path):
    choice = numba_cache.choose_cache(
        tmp_path / "pkg", "1.0", {}, True, tmp_path / "h", tmp_path / "t", _only_writable()
    )
    assert choice.directory is None and not choice.cached
    assert "compile in every run" in choice.note


def test_uncached_kernels_are_defined_and_run():
    """With caching turned off, ``cache=True`` kernels are defined (no 'no locator
    available') and run, with numba's null cache."""
    script = (
        "from engine.runtime import numba_cache as n\n"
        "n.apply_cache_choice(n.CacheChoice(None, cached=False), {})\n"
        "import numba\n"
        "f = numba.njit(cache=True)(lambda x: x + 1)\n"
        "print(f(1), type(f._cache).__name__)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["2", "NullCache"]


def _as_nobody(args, **kwargs):
    return subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *args],
        capture_output=True,
        text=True,
        timeout=300,
        **kwargs,
    )


def test_a_read_only_install_without_home_still_runs_a_kernel(tmp_path):
    """The reproducer: a read-only checkout, HOME nowhere, as an unprivileged user; every
    command died at import with numba's 'no locator available'."""
    if os.name != "posix" or os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to drop to an unprivileged user")
    if _as_nobody([sys.executable, "-c", "import numba"], cwd="/").returncode != 0:
        pytest.skip("this Python is not readable by an unprivileged user")
    tree = tmp_path / "ro"
    shutil.copytree(ROOT / "engine", tree / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    for path in [tree, *tree.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    tmp_path.chmod(0o755)
    script = (
        "import engine\n"
        "from engine.collectives.completion_curve import slowest_times\n"
        "print(engine.KERNEL_CACHE.directory)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    run = _as_nobody([sys.executable, "-c", script], cwd=tree, env={**env, "HOME": "/nonexistent"})
    assert run.returncode == 0, run.stderr
    assert "fabriclab-numba-65534-" in run.stdout


def test_an_explicit_numba_cache_dir_is_respected(tmp_path):
    environ = {"NUMBA_CACHE_DIR": "/somewhere/else", "XDG_CACHE_HOME": "/x"}
    assert _choose(tmp_path, environ, frozen=True) == numba_cache.CacheChoice(None)
    assert environ["NUMBA_CACHE_DIR"] == "/somewhere/else"


# ---- desktop entry and icon --------------------------------------------------------------------


def test_desktop_entry_names_the_app_its_icon_and_command():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # keys are case-sensitive
    entry.read(ROOT / "packaging" / "fabriclab.desktop", encoding="utf-8")
    desktop = entry["Desktop Entry"]
    assert desktop["Type"] == "Application"
    assert desktop["Name"] == "FabricLab"
    assert desktop["Exec"].split()[0] == "fabriclab"
    assert desktop["Terminal"] == "false"
    assert desktop["Categories"].endswith(";")
    assert resource_path("icons", f"{desktop['Icon']}.png").is_file()
    assert resource_path("icons", f"{desktop['Icon']}.svg").is_file()
    validator = shutil.which("desktop-file-validate")  # desktop-file-utils, where installed
    if validator:
        result = subprocess.run(
            [validator, str(ROOT / "packaging" / "fabriclab.desktop")],
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0 and not result.stdout.strip(), result.stdout


def test_icon_png_is_the_svg_rendered_at_256_px(qapp, tmp_path):
    sys.path.insert(0, str(ROOT))
    from tools.render_icon import render_icon

    fresh = tmp_path / "icon.png"
    render_icon(resource_path("icons", "fabriclab.svg"), fresh)
    shipped, rendered = QImage(str(resource_path("icons", "fabriclab.png"))), QImage(str(fresh))
    assert (shipped.width(), shipped.height()) == (256, 256)
    differing = sum(
        shipped.pixel(x, y) != rendered.pixel(x, y)
        for y in range(0, 256, 2)
        for x in range(0, 256, 2)
    )
    assert differing < 0.02 * 128 * 128, "re-run tools/render_icon.py after editing the SVG"


# ---- the built bundle (slow) -------------------------------------------------------------------


def clean_environment(tmp_path: Path) -> dict[str, str]:
    """What a fresh user session has: no PYTHONPATH or venv, a new home, no display."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "LANG": "C.UTF-8",
    }


def run_bundle(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    """Run the bundle's executable from an unrelated folder; the result and its wall time."""
    t0 = time.perf_counter()
    result = subprocess.run(
        [str(EXECUTABLE), *args],
        cwd=tmp_path,
        env=clean_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=280,
    )
    return result, time.perf_counter() - t0


@pytest.fixture
def bundle() -> Path:
    if not EXECUTABLE.is_file():
        pytest.fail(f"no bundle at {EXECUTABLE}: build it with `make package`")
    return EXECUTABLE


def cache_indexes(cache: Path) -> dict[str, int]:
    """numba's index files in `cache` with their modification times (ns)."""
    return {str(p.relative_to(cache)): p.stat().st_mtime_ns for p in cache.rglob("*.nbi")}


@pytest.mark.slow
def test_bundle_self_test_passes_and_the_second_start_loads_the_numba_cache(bundle, tmp_path):
    cache = tmp_path / "cache" / "fabriclab" / f"numba-{pyproject_version()}"
    png_cold, png_warm = tmp_path / "cold.png", tmp_path / "warm.png"

    cold, cold_s = run_bundle(tmp_path, "--self-test", "--self-test-png", str(png_cold))
    assert cold.returncode == 0, cold.stdout + cold.stderr
    assert "bundled app" in cold.stdout and "self-test passed" in cold.stdout
    assert "Traceback" not in cold.stderr
    compiled = cache_indexes(cache)
    assert compiled, f"numba wrote nothing to {cache}"

    warm, warm_s = run_bundle(tmp_path, "--self-test", "--self-test-png", str(png_warm))
    assert warm.returncode == 0, warm.stdout + warm.stderr
    assert cache_indexes(cache) == compiled  # every kernel loaded, none compiled again
    assert warm_s < cold_s / 2, f"warm start {warm_s:.1f} s, cold {cold_s:.1f} s"
    print(f"bundle --self-test: cold {cold_s:.1f} s, warm {warm_s:.1f} s")

    for png in (png_cold, png_warm):
        image = QImage(str(png))
        assert not image.isNull() and image.width() >= 640
        colours = {image.pixel(x, y) for y in range(0, image.height(), 4) for x in range(0, 640, 4)}
        assert len(colours) >= 16


@pytest.mark.slow
def test_bundle_reports_the_project_version_and_runs_headless_commands(bundle, tmp_path):
    version, _ = run_bundle(tmp_path, "--version")
    assert version.returncode == 0
    assert version.stdout.strip() == f"FabricLab {pyproject_version()}"
    presets, _ = run_bundle(tmp_path, "presets")
    assert presets.returncode == 0
    assert "dgx-h100-ib-ndr-1k" in presets.stdout


@pytest.mark.slow
def test_bundle_leaves_out_test_tools_and_unused_qt(bundle):
    listing = subprocess.run(
        [str(Path(sys.executable).with_name("pyi-archive_viewer")), "-r", "-b", str(bundle)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    modules = {line.strip().split(".")[0] for line in listing.splitlines()}
    assert "engine" not in modules  # .py files, so numba's cache can find the kernels' sources
    assert "numba" in modules and "PySide6" in modules  # the listing is real
    assert sorted(modules & set(TEST_ONLY)) == []
    files = [p.name for p in (BUNDLE / "_internal").rglob("*")]
    assert [f for f in files if f.startswith(UNUSED_QT)] == []
    assert (BUNDLE / "_internal" / "engine" / "flows.py").is_file()
    assert (BUNDLE / "_internal" / "resources" / "catalog.json").is_file()
    assert (BUNDLE / "_internal" / "share" / "fabriclab.desktop").is_file()
    size_mb = sum(p.stat().st_size for p in BUNDLE.rglob("*") if p.is_file()) / 1e6
    print(f"bundle size {size_mb:.0f} MB")
    assert os.access(bundle, os.X_OK)
