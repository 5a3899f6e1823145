"""Test configuration: offscreen Qt for every GUI test, and shared fixtures."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from engine.catalog.devices import default_catalog


@pytest.fixture(scope="session")
def catalog():
    """The shipped device catalog."""
    return default_catalog()


@pytest.fixture(autouse=True)
def _gui_thread_collector(request):
    """Tests that use Qt collect garbage on the GUI thread only, as the app does
    (ui.collector): a collection on an engine worker thread can deadlock in a Qt destructor."""
    if "qapp" in request.fixturenames or "qtbot" in request.fixturenames:
        from ui.collector import install_gui_thread_collector

        install_gui_thread_collector(request.getfixturevalue("qapp"))
    yield


@pytest.fixture
def temp_settings(tmp_path):
    """Send `app_settings()` (INI, user scope) to a temporary folder, so no test reads or
    writes the user's settings; yields that folder."""
    from PySide6.QtCore import QSettings

    folder = tmp_path / "settings"
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))
    return folder
