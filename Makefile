# FabricLab: every target creates .venv and installs into it when needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# Shared libraries Qt loads on Linux (Debian/Ubuntu package names in QT_LIBS_APT).
QT_LIBS := libGL.so.1 libEGL.so.1 libxkbcommon.so.0 libfontconfig.so.1 libglib-2.0.so.0 libdbus-1.so.3
QT_LIBS_APT := libgl1 libegl1 libxkbcommon0 libfontconfig1 libglib2.0-0 libdbus-1-3

.PHONY: install run test bench lint format clean check-python check-system validation screenshots \
  package package-test

check-python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found; install Python 3.11 or newer" >&2; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || { echo "error: FabricLab needs Python >= 3.11 ($(PYTHON) is older)" >&2; exit 1; }
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || { echo "error: Python's venv/ensurepip module is missing (Debian/Ubuntu: apt-get install python3-venv)" >&2; exit 1; }

check-system:
	@if [ "$$(uname -s)" = Linux ] && command -v ldconfig >/dev/null 2>&1; then \
	  missing=""; for lib in $(QT_LIBS); do ldconfig -p | grep -q "$$lib" || missing="$$missing $$lib"; done; \
	  if [ -n "$$missing" ]; then \
	    echo "error: Qt needs these system libraries, which are missing:$$missing" >&2; \
	    echo "       on Debian/Ubuntu: sudo apt-get install $(QT_LIBS_APT)" >&2; exit 1; \
	  fi; \
	fi

$(STAMP): pyproject.toml | check-python
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/python main.py warm-up
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP) check-system
	$(BIN)/python main.py

test: $(STAMP) check-system
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -n auto --maxprocesses=2

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py --json

screenshots: $(STAMP)
	$(BIN)/python tools/screenshots.py

# The desktop bundle (packaging/README.md): PyInstaller comes from the optional `package` extra.
PACKAGE_STAMP := $(VENV)/.installed-package
BUNDLE := dist/fabriclab/fabriclab
BUNDLE_SOURCES := main.py pyproject.toml $(shell find engine ui cli -name "*.py") \
  packaging/fabriclab.spec packaging/fabriclab.desktop packaging/install.sh \
  $(shell find resources -type f 2>/dev/null)
PYINSTALLER := $(BIN)/pyinstaller --noconfirm --log-level WARN --distpath dist \
  --workpath build/pyinstaller packaging/fabriclab.spec

$(PACKAGE_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,package]'
	@touch $(PACKAGE_STAMP)

$(BUNDLE): $(BUNDLE_SOURCES) | $(PACKAGE_STAMP)
	$(PYINSTALLER)
	@touch $(BUNDLE)

package: $(PACKAGE_STAMP) check-system
	$(PYINSTALLER)
	@du -sh dist/fabriclab

package-test: $(BUNDLE) check-system
	$(BIN)/python -m pytest -m slow tests/packaging/test_bundle.py

validation: $(STAMP)
	$(BIN)/python tests/validation/report.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache
