"""The app's warnings on the status bar, and the way to the log folder.

`install(window)` puts a warning button on the window's status bar (hidden until something goes
wrong) and attaches a logging handler to the app's loggers (`app.*`): every WARNING or ERROR they
log, from any thread, travels to the GUI thread through a queued signal and shows on the button
("⚠ message"). Its menu opens the log folder or dismisses it; its tooltip lists the last warnings
and the log file. Warnings logged at start-up before the window existed (app.logs) are shown
too. A record logged with `extra={app.logs.SHOWN: True}` was already shown another way and is
left to the log file.
"""
from __future__ import annotations

import logging
from collections import deque
from html import escape

from PySide6.QtCore import QObject, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMenu, QToolButton

from app import logs

MAX_LABEL = 40  # about this many characters' width of the latest warning on the status bar (the rest
# elided: the status line beside it keeps its room; the whole warning is in the tooltip and the log)
KEEP = 10  # warnings listed in the tooltip


class _Handler(logging.Handler):
    def __init__(self, bridge: LogBridge):
        super().__init__(logging.WARNING)
        self.bridge = bridge

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, logs.SHOWN, False):
            return
        try:
            self.bridge.warned.emit(record.levelname, record.getMessage())
        except RuntimeError:  # the window (and its bridge) is gone: the log file still has it
            pass


class LogBridge(QObject):
    """Carries the app's warnings from any thread to the GUI thread (`warned(level, message)`)."""

    warned = Signal(str, str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._handler = _Handler(self)
        logging.getLogger(logs.APP_LOGGER).addHandler(self._handler)

    def close(self) -> None:
        logging.getLogger(logs.APP_LOGGER).removeHandler(self._handler)


class WarningButton(QToolButton):
    """The status bar's "⚠ latest warning" button; hidden while there is nothing to say."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setAutoRaise(True)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setObjectName("warning_button")
        self.setStyleSheet("QToolButton#warning_button { color: #c46a00; }")  # amber on light and dark
        self.messages: deque[tuple[str, str]] = deque(maxlen=KEEP)
        menu = QMenu(self)
        menu.addAction("Open log folder", lambda: open_log_folder())
        menu.addAction("Dismiss", self.dismiss)
        self.setMenu(menu)
        self.hide()

    def show_warning(self, level: str, message: str) -> None:
        self.messages.append((level, message))
        first = message.splitlines()[0] if message else level
        room = MAX_LABEL * self.fontMetrics().averageCharWidth()
        self.setText(self.fontMetrics().elidedText(f"⚠ {first}", Qt.TextElideMode.ElideRight, room))
        where = logs.log_file() or logs.log_dir()
        rows = "".join(f"<li>{escape(lvl.lower())}: {escape(msg)}</li>" for lvl, msg in reversed(self.messages))
        self.setToolTip(f"<ul>{rows}</ul>Details in the log: {escape(str(where))}")
        self.show()

    def dismiss(self) -> None:
        self.messages.clear()
        self.hide()


def open_log_folder() -> bool:
    """Show the log folder in the file manager (made if missing); False when it cannot be."""
    folder = logs.log_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        logging.getLogger(__name__).warning("the log folder %s cannot be made: %s", folder, exc.strerror or exc)
        return False
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))


def install(window) -> WarningButton:
    """Add the warning button to `window`'s status bar and start forwarding the app's warnings;
    `window.log_bridge.close()` stops it (MainWindow.shutdown)."""
    button = WarningButton()
    window.statusBar().addPermanentWidget(button)
    window.log_bridge = LogBridge(window)
    window.log_bridge.warned.connect(button.show_warning)
    for level, message in logs.pending_warnings():
        button.show_warning(level, message)
    return button
