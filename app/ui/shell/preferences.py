"""Settings adapter for the GUI: the typed AppSettings (app.core.config.settings), written off the GUI
thread by `SettingsWriter`, plus QSettings for window geometry and dock layout only."""
from __future__ import annotations

import threading

from PySide6.QtCore import QByteArray, QObject, QSettings, QThreadPool, Signal
from PySide6.QtWidgets import QMainWindow

from app.core.config.settings import AppSettings, load_settings, save_settings
from app.ui.common.threads import track_pool

__all__ = ["AppSettings", "SettingsWriter", "load_settings", "save_settings", "restore_geometry", "save_geometry"]


class SettingsWriter(QObject):
    """Saves settings on a background thread, newest first: `save(settings, path)` returns at
    once (an atomic, fsynced write can take tens of milliseconds on a busy disk); saves that
    arrive while one is being written collapse into one write of the latest values. `failed`
    carries the message when a write fails; `flush(ms)` waits for the last write (exit, tests)."""

    failed = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.pool = track_pool(QThreadPool(self))
        self.pool.setObjectName("settings-writer")
        self.pool.setMaxThreadCount(1)
        self._lock = threading.Lock()
        self._pending: tuple | None = None

    def save(self, settings: AppSettings, path=None) -> None:
        with self._lock:
            queued = self._pending is not None
            self._pending = (settings, path)
        if not queued:
            self.pool.start(self._write)

    def _write(self) -> None:
        with self._lock:
            item, self._pending = self._pending, None
        if item is None:
            return
        try:
            save_settings(*item)
        except OSError as exc:
            self.failed.emit(f"Settings could not be saved: {exc}")

    def flush(self, timeout_ms: int = 5000) -> bool:
        """Wait for the pending write, at most `timeout_ms`; True when everything is written."""
        return self.pool.waitForDone(timeout_ms)


def _qsettings() -> QSettings:
    import os

    from app.core.config.settings import config_dir

    if os.environ.get("HAYAI_DESKTOP_CONFIG_DIR"):  # tests / portable: keep it next to settings.json
        return QSettings(str(config_dir() / "window.ini"), QSettings.Format.IniFormat)
    return QSettings("hayai-desktop", "hayai-desktop")


def restore_geometry(window: QMainWindow) -> None:
    """The last geometry and dock layout, kept inside the screens there are now
    (app.ui.common.screens.place_window); the first time, a size from the available screen area."""
    from app.ui.common.screens import place_window

    qs = _qsettings()
    geometry, state = qs.value("geometry"), qs.value("state")
    place_window(window, geometry if isinstance(geometry, QByteArray) else None)
    if isinstance(state, QByteArray):
        window.restoreState(state)


def save_geometry(window: QMainWindow) -> None:
    qs = _qsettings()
    qs.setValue("geometry", window.saveGeometry())
    qs.setValue("state", window.saveState())
    qs.sync()  # written now: the program ends without the usual teardown (app.cli.exit_now)
