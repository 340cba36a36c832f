"""The app's warnings reach the status bar (from any thread); Help > Open log folder opens it."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication

from app.logs import SHOWN

ROOT = Path(__file__).resolve().parents[2]


def test_a_warning_logged_on_a_worker_thread_shows_on_the_status_bar(make_window, qtbot):
    w = make_window()
    button = w.warning_button
    assert not button.isVisible()
    message = "CUDA ran out of memory at batch 1: reading on the CPU from now on"
    t = threading.Thread(target=lambda: logging.getLogger("app.ocr.recognizer").warning(message))
    t.start()
    t.join()
    qtbot.waitUntil(button.isVisible, timeout=5000)
    assert button.text().startswith("⚠ CUDA ran out") and button.text().endswith("…")  # the whole in the tooltip
    assert message in button.toolTip() and "Details in the log" in button.toolTip()
    # not the app's, or already shown another way: left to the log file
    logging.getLogger("ultralytics").warning("third-party noise")
    logging.getLogger("app.ui.reading.worker").error("shown in a notice already", extra={SHOWN: True})
    sentinel = "a later warning: the two above were handled before it arrives"
    logging.getLogger("app.core").warning(sentinel)
    qtbot.waitUntil(lambda: button.text().startswith("⚠ a later warning"), timeout=5000)
    assert "third-party noise" not in button.toolTip() and "shown in a notice" not in button.toolTip()
    button.dismiss()
    assert not button.isVisible()
    w.shutdown()  # the handler leaves with the window
    logging.getLogger("app.core").warning("after the window closed")
    QApplication.processEvents()  # the handler left synchronously: nothing can be on its way
    assert not button.isVisible() and "after the window closed" not in button.toolTip()


class _Opened(QObject):
    def __init__(self):
        super().__init__()
        self.urls = []

    @Slot("QUrl")
    def open(self, url) -> None:
        self.urls.append(url.toLocalFile())


def test_help_menu_opens_the_log_folder(make_window, tmp_path, monkeypatch):
    monkeypatch.setenv("HAYAI_LOG_DIR", str(tmp_path / "logs"))
    w = make_window()
    help_menu = next(a.menu() for a in w.menuBar().actions() if a.text() == "&Help")
    action = next(a for a in help_menu.actions() if a.text() == "Open log folder")
    opened = _Opened()
    QDesktopServices.setUrlHandler("file", opened, "open")
    try:
        action.trigger()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert opened.urls == [str(tmp_path / "logs")]
    assert (tmp_path / "logs").is_dir()


def test_a_damaged_settings_file_is_said_on_the_status_bar_at_start_up(tmp_path):
    """As the app starts: logging set up, settings read (the damaged file set aside, a warning),
    then the window, which shows that warning."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.json").write_text('{"patches": 512,', encoding="utf-8")
    code = (
        "from argparse import Namespace\n"
        "from PySide6.QtWidgets import QApplication\n"
        "from app.logs import configure_logging\n"
        "configure_logging(stderr=False)\n"
        "app = QApplication([])\n"
        "from app.ui.shell.startup import startup_settings\n"
        "from app.ui.shell.main_window import MainWindow\n"
        "settings, _, _ = startup_settings(Namespace(demo=False, path=None, model=None, detector=None))\n"
        "w = MainWindow(settings)\n"
        "print('BUTTON', w.warning_button.isVisibleTo(w), w.warning_button.text())\n"
        "print('TIP', w.warning_button.toolTip())\n"
        "w.shutdown()\n"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HAYAI_DESKTOP_CONFIG_DIR": str(config),
           "HAYAI_LOG_DIR": str(tmp_path / "logs"), "HAYAI_MODELS_DIR": str(tmp_path / "models")}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env=env)
    assert out.returncode == 0, out.stderr
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("BUTTON"))
    assert line.startswith("BUTTON True ⚠ Settings were reset to the default"), line
    tip = next(ln for ln in out.stdout.splitlines() if ln.startswith("TIP"))
    assert "could not be read" in tip and "settings.json.bad" in tip, tip
    assert (config / "settings.json.bad").read_text(encoding="utf-8") == '{"patches": 512,'
    assert "settings.json.bad" in (tmp_path / "logs" / "hayai-desktop.log").read_text(encoding="utf-8")
