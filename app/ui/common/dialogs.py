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
    window wider than a narrow screen.

    Each message has an owner (a short key: "translation", "reading", "export", ...): the part
    of the app that posted it and clears it when its cause is gone (`post(owner, ...)`,
    `clear(owner)`). A new message of an owner replaces that owner's last one; the bar shows the
    newest message standing, and clearing or closing it shows the one under it again. Messages
    posted with the owner "" stand until the next one without an owner, or until closed."""

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
        self.owner = ""  # the owner of the message shown
        self._standing: dict[str, tuple] = {}  # owner -> (kind, html, buttons, closable), oldest first
        self.hide()

    def post(self, owner: str, kind: str, html: str, buttons=(), closable: bool = True) -> None:
        """Show `html` as `owner`'s message (replacing that owner's last one); buttons are
        (label, callback) pairs; kind picks the colours."""
        self._standing.pop(owner, None)
        self._standing[owner] = (kind, html, tuple(buttons), closable)
        self._show(owner)

    def clear(self, owner: str) -> None:
        """`owner`'s message is no longer true: gone (the one under it shows again)."""
        if self._standing.pop(owner, None) is not None and owner == self.owner:
            self._show_newest()

    def clear_all(self) -> None:
        self._standing.clear()
        self._show_newest()

    def message(self, owner: str) -> str:
        """The html of `owner`'s standing message ("" when it has none)."""
        entry = self._standing.get(owner)
        return entry[1] if entry else ""

    def owners(self) -> list[str]:
        """The owners of the standing messages, oldest first."""
        return list(self._standing)

    def show_message(self, kind: str, html: str, buttons=(), closable: bool = True) -> None:
        """Show `html` with no owner (replacing the last message without one)."""
        self.post("", kind, html, buttons, closable)

    def _show_newest(self) -> None:
        if self._standing:
            self._show(next(reversed(self._standing)))
        else:
            self.kind, self.owner = "", ""
            self.hide()

    def _show(self, owner: str) -> None:
        kind, html, buttons, closable = self._standing[owner]
        self.kind, self.owner = kind, owner
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
        """The user closed the message shown (or its owner is done with it): the one under it shows."""
        self.clear(self.owner)


def ask(parent: QWidget, icon: QMessageBox.Icon, title: str, text: str, buttons, default):
    """Ask a modal question over `parent` (a widget: the dialog's owner and position) and return
    the StandardButton clicked. Every yes/no question of the window goes through here, so none is
    given a parent that is not a widget."""
    if not isinstance(parent, QWidget):
        raise TypeError(f"a question needs a widget as its parent, not {type(parent).__name__}")
    box = QMessageBox(icon, title, text, buttons, parent)
    box.setDefaultButton(default)
    return QMessageBox.StandardButton(box.exec())


class Questions:
    """The modal questions a window asks, each shown over that window (given at construction, so a
    question cannot be given another parent). `answers` holds answers given ahead, by question
    name: the smoke test and the close of test windows use it; scenario tests answer the real
    dialogs instead."""

    def __init__(self, window: QWidget):
        if not isinstance(window, QWidget):
            raise TypeError(f"questions are asked over a widget, not {type(window).__name__}")
        self.window = window
        self.answers: dict[str, object] = {}  # question name -> fixed answer (smoke test, closing test windows)

    def _yes(self, name: str, icon, title: str, text: str, default_yes: bool) -> bool:
        if name in self.answers:
            return bool(self.answers[name])
        yes, no = QMessageBox.StandardButton.Yes, QMessageBox.StandardButton.No
        return ask(self.window, icon, title, text, yes | no, yes if default_yes else no) == yes

    def unsaved_changes(self) -> str:
        """'save', 'discard' or 'cancel'."""
        if "unsaved_changes" in self.answers:
            return str(self.answers["unsaved_changes"])
        b = QMessageBox.StandardButton
        answer = ask(self.window, QMessageBox.Icon.Question, "Unsaved changes",
                     "This project has changes that are not saved. Save them before closing?",
                     b.Save | b.Discard | b.Cancel, b.Save)
        return {b.Save: "save", b.Discard: "discard"}.get(answer, "cancel")

    def reread_all(self) -> bool:
        """Every page has been read: read them all again (replacing corrections)?"""
        return self._yes("reread_all", QMessageBox.Icon.Question, "Read all pages again?",
                         "Every page has been read already. Reading them again replaces their blocks and any "
                         "corrections (Undo brings them back). Read all pages again?", default_yes=False)

    def translate_again(self) -> bool:
        """Every read page is translated: translate them all again (hand edits kept)?"""
        return self._yes("translate_again", QMessageBox.Icon.Question, "Translate all pages again?",
                         "Every page that has been read is translated already. Translate them all again? "
                         "Translations you edited by hand are kept (Translate > Translate page again replaces "
                         "them, page by page).", default_yes=False)

    def insecure_key(self, server: str) -> bool:
        """Send an API key over plain http:// to another machine (`server`)?"""
        return self._yes("insecure_key", QMessageBox.Icon.Warning, "Send the key unencrypted?",
                         f"{server} is reached over plain http:// on another machine: anyone on the network path "
                         "can read the API key sent with each request.\n\nUse an https:// address if the server "
                         "has one. Send the key over http:// anyway (until the app closes)?", default_yes=False)

    def restore_autosave(self, source: str) -> bool:
        """After a crash: restore the autosaved edits of `source`?"""
        return self._yes("restore_autosave", QMessageBox.Icon.Question, "Restore unsaved edits?",
                         f"The last session on {source} ended with edits not saved (the app did not close normally, "
                         "or it was ended by the system).\n\n"
                         "Restore the edits that were not saved?", default_yes=True)


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
