"""Settings adapter for the GUI: the typed AppSettings (app.core.settings) plus QSettings for
window geometry and dock layout only."""
from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtWidgets import QMainWindow

from app.core.settings import AppSettings, load_settings, save_settings

__all__ = ["AppSettings", "load_settings", "save_settings", "restore_geometry", "save_geometry"]


def _qsettings() -> QSettings:
    import os

    from app.core.settings import config_dir

    if os.environ.get("HAYAI_DESKTOP_CONFIG_DIR"):  # tests / portable: keep it next to settings.json
        return QSettings(str(config_dir() / "window.ini"), QSettings.Format.IniFormat)
    return QSettings("hayai-desktop", "hayai-desktop")


def restore_geometry(window: QMainWindow) -> None:
    """The last geometry and dock layout, kept inside the screens there are now
    (app.ui.screens.place_window); the first time, a size from the available screen area."""
    from app.ui.screens import place_window

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
