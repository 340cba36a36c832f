"""The window's Messages: every status line and notice in full, and who may clear them.

The status bar has room for one short line, and a notice over the page is gone once its cause is;
the Messages dock keeps both, newest last, with the time and the part of the app that said it,
so an export's result, a cancelled run's count or a translation report can be read whole
whatever the window's width. `StatusLine` is the status bar's left message: it shows what fits
and opens the Messages dock when clicked.
"""
from __future__ import annotations

import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from app.ui.common.widgets import ElidedLabel

KEEP = 500  # messages kept in the dock (the oldest go first)


class MessageLog(QWidget):
    """The Messages dock's content: a read-only list of what the window said, newest last."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setMaximumBlockCount(KEEP)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.entries: list[tuple[str, str, str]] = []  # (kind, owner, message), oldest first
        clear = QPushButton("Clear")
        clear.clicked.connect(self.clear)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(clear)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.text, 1)
        lay.addLayout(row)

    def add(self, kind: str, message: str, owner: str = "") -> None:
        if not message or (self.entries and self.entries[-1] == (kind, owner, message)):
            return
        self.entries = [*self.entries[-(KEEP - 1):], (kind, owner, message)]
        who = f" [{owner}]" if owner else ""
        self.text.appendPlainText(f"{time.strftime('%H:%M:%S')} {kind}{who}: {message}")

    def clear(self) -> None:
        self.entries = []
        self.text.clear()


MIN_CHARS = 48  # the status line keeps room for about this many characters whatever else the bar shows


class StatusLine(ElidedLabel):
    """The status bar's message: as much as fits, the whole of it in the tooltip; a click opens
    the Messages (`clicked`). Its owner clears it (`clear(owner)`) when the message is no longer true.
    It keeps room for MIN_CHARS characters beside the bar's permanent widgets (a warning, the models)."""

    clicked = Signal()

    def __init__(self, text: str = "", parent=None):
        super().__init__(text, parent)
        self.setMinimumWidth(MIN_CHARS * self.fontMetrics().averageCharWidth())
        self.owner = ""
        self.setCursor(Qt.CursorShape.PointingHandCursor)

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt override
        if event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit()
        super().mousePressEvent(event)
