"""What the window keeps between runs: geometry, dock state, splitters, theme and recent files.

The app keeps them in the user's `QSettings` (INI format, so tests can redirect them with
`setPath`); a window opened without settings (tests, the self-test, screenshots) keeps them
in memory only, for as long as it lives.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow, QSplitter, QWidget

MAX_RECENT = 5
RECENT_FILES = "recentFiles"


def app_settings() -> QSettings:
    """FabricLab's user settings (INI format, so tests can redirect them with `setPath`)."""
    return QSettings(
        QSettings.Format.IniFormat, QSettings.Scope.UserScope, "FabricLab", "FabricLab"
    )


class SettingsStore:
    """Values by key in `settings`, or in a dict when there are none."""

    def __init__(self, settings: QSettings | None) -> None:
        self.settings = settings
        self._memory: dict[str, Any] = {}

    def value(self, key: str, default: Any = None) -> Any:
        """The stored value of `key`, else `default`."""
        if self.settings is None:
            return self._memory.get(key, default)
        return self.settings.value(key, default)

    def set_value(self, key: str, value: Any) -> None:
        """Store `value` under `key`."""
        if self.settings is None:
            self._memory[key] = value
        else:
            self.settings.setValue(key, value)

    def sync(self) -> None:
        """Write the values to disk now (nothing to do in memory)."""
        if self.settings is not None:
            self.settings.sync()

    def recent_files(self) -> list[str]:
        """The last opened or saved scenario files, newest first (at most `MAX_RECENT`)."""
        value = self.value(RECENT_FILES, [])
        if isinstance(value, str):
            value = [value] if value else []
        return [str(v) for v in (value or [])][:MAX_RECENT]

    def add_recent_file(self, path: str) -> list[str]:
        """Put `path` first in the recent files (at most `MAX_RECENT`); the new list."""
        files = [f for f in self.recent_files() if f != str(path)]
        files = [str(path), *files][:MAX_RECENT]
        self.set_value(RECENT_FILES, files)
        return files


SPLITTERS = "splitters"


def save_splitters(root: QWidget, store: SettingsStore) -> None:
    """Keep the sizes of every named splitter under `root`, one key per object name."""
    for splitter in root.findChildren(QSplitter):
        if splitter.objectName():
            store.set_value(f"{SPLITTERS}/{splitter.objectName()}", splitter.saveState())


def restore_splitters(root: QWidget, store: SettingsStore) -> None:
    """Give every named splitter under `root` the sizes it was last saved with."""
    for splitter in root.findChildren(QSplitter):
        state = (
            store.value(f"{SPLITTERS}/{splitter.objectName()}") if splitter.objectName() else None
        )
        if state is not None:
            splitter.restoreState(state)


def first_start_docks(window: QMainWindow) -> None:
    """On a first start (no saved state), give the Results dock almost half the window's
    height once it is shown: the default leaves the plots a sliver at 1280x800."""

    def resize() -> None:
        dock = window.findChild(QDockWidget, "resultsDock")
        if dock is not None:
            window.resizeDocks([dock], [window.height() * 9 // 20], Qt.Orientation.Vertical)

    QTimer.singleShot(0, resize)
