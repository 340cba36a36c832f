"""Small dialogs and bars: the notice bar over the canvas, the shortcuts help, the questions
the window asks (unsaved changes, restore after a crash)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.ui.common.widgets import FlowLayout

STYLES = {  # kind: (background, text) that read well in light and dark themes
    "info": ("#dbeafe", "#0b2545"),
    "warning": ("#fff3c4", "#4a3500"),
    "error": ("#fde2e1", "#5c0b0b"),
    "demo": ("#ede4ff", "#2b0d5e"),
}


class NoticeBar(QFrame):
    """A coloured bar with a message, action buttons under it and a close button (hidden when
    empty). The message wraps and the buttons flow onto more rows, so the bar never makes the
    window wider than a narrow screen."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("notice")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setOpenExternalLinks(True)
        self._buttons: list[QPushButton] = []
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(10, 6, 6, 6)
        content = QVBoxLayout()
        content.setSpacing(4)
        content.addWidget(self.label)
        self._button_box = QWidget()
        self._button_box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self._button_flow = FlowLayout(self._button_box)
        content.addWidget(self._button_box)
        self._layout.addLayout(content, 1)
        self.close_button = QPushButton("✕")
        self.close_button.setFlat(True)
        self.close_button.setFixedWidth(28)
        self.close_button.setToolTip("Dismiss")
        self.close_button.clicked.connect(self.dismiss)
        self._layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.kind = ""
        self.hide()

    def show_message(self, kind: str, html: str, buttons=(), closable: bool = True) -> None:
        """Show `html`; buttons are (label, callback) pairs; kind picks the colours."""
        self.kind = kind
        bg, fg = STYLES.get(kind, STYLES["info"])
        pal = self.palette()
        pal.setColor(QPalette.ColorRole.Window, QColor(bg))
        pal.setColor(QPalette.ColorRole.WindowText, QColor(fg))
        self.setPalette(pal)
        self.setAutoFillBackground(True)
        self.label.setStyleSheet(f"color: {fg};")
        self.close_button.setStyleSheet(f"color: {fg}; font-weight: bold;")  # readable on the bar in dark themes
        self.label.setText(html)
        for b in self._buttons:
            self._button_flow.removeWidget(b)
            b.hide()  # gone now, deleted when the event loop next runs
            b.deleteLater()
        self._buttons = []
        for text, callback in buttons:
            b = QPushButton(text)
            b.clicked.connect(callback)
            self._button_flow.addWidget(b)
            self._buttons.append(b)
        self._button_box.setVisible(bool(self._buttons))
        self.close_button.setVisible(closable)
        self.show()

    def buttons(self) -> list[QPushButton]:
        return list(self._buttons)

    def dismiss(self) -> None:
        self.kind = ""
        self.hide()


class Questions:
    """The modal questions the window asks; tests replace `answers` to answer them."""

    def __init__(self):
        self.answers: dict[str, object] = {}  # question name -> fixed answer (tests, smoke test)

    def unsaved_changes(self, parent) -> str:
        """'save', 'discard' or 'cancel'."""
        if "unsaved_changes" in self.answers:
            return str(self.answers["unsaved_changes"])
        box = QMessageBox(QMessageBox.Icon.Question, "Unsaved changes",
                          "This project has changes that are not saved. Save them before closing?",
                          QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                          | QMessageBox.StandardButton.Cancel, parent)
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        answer = box.exec()
        return {QMessageBox.StandardButton.Save: "save",
                QMessageBox.StandardButton.Discard: "discard"}.get(QMessageBox.StandardButton(answer), "cancel")

    def reread_all(self, parent) -> bool:
        """Every page has been read: read them all again (replacing corrections)?"""
        if "reread_all" in self.answers:
            return bool(self.answers["reread_all"])
        answer = QMessageBox.question(
            parent, "Read all pages again?",
            "Every page has been read already. Reading them again replaces their blocks and any "
            "corrections (Undo brings them back). Read all pages again?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def insecure_key(self, parent, server: str) -> bool:
        """Send an API key over plain http:// to another machine (`server`)?"""
        if "insecure_key" in self.answers:
            return bool(self.answers["insecure_key"])
        answer = QMessageBox.warning(
            parent, "Send the key unencrypted?",
            f"{server} is reached over plain http:// on another machine: anyone on the network path can "
            "read the API key sent with each request.\n\nUse an https:// address if the server has one. "
            "Send the key over http:// anyway (until the app closes)?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def restore_autosave(self, parent, source: str) -> bool:
        """After a crash: restore the autosaved edits of `source`?"""
        if "restore_autosave" in self.answers:
            return bool(self.answers["restore_autosave"])
        answer = QMessageBox.question(
            parent, "Restore unsaved edits?",
            f"Hayai Desktop did not close normally while {source} was open.\n\n"
            "Restore the edits that were not saved?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes)
        return answer == QMessageBox.StandardButton.Yes


class ShortcutsDialog(QDialog):
    """A table of every keyboard shortcut."""

    def __init__(self, shortcuts, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        table = QTableWidget(len(shortcuts), 2)
        table.setHorizontalHeaderLabels(["Action", "Keys"])
        table.verticalHeader().hide()
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for row, (_name, label, keys) in enumerate(shortcuts):
            table.setItem(row, 0, QTableWidgetItem(label.rstrip("…")))
            table.setItem(row, 1, QTableWidgetItem(keys))
        table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        table.resizeColumnToContents(1)
        extra = QLabel("Mouse: wheel zooms, Shift+wheel scrolls, drag the page to pan, drag a box to move it, "
                       "its corner to resize, double-click a box to edit its text, right-click for more. "
                       "Drag rows in the block list to renumber.")
        extra.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(table)
        lay.addWidget(extra)
        lay.addWidget(buttons)
        self.table = table
        self.resize(480, 640)
