"""Translate > Translate pages…: which pages (a range such as 3-7, or 1,4,9-12), and whether
pages translated already go again (and replace the user's own translations)."""
from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit

from app.core.translation.run import parse_page_range
from app.errors import UserError


class PagesDialog(QDialog):
    def __init__(self, count: int, current: int, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Translate pages")
        self.count = count
        self.range_edit = QLineEdit(f"{current}-{count}" if current < count else str(count))
        self.range_edit.setPlaceholderText("3-7, or 1,4,9-12, or 5- (to the end)")
        self.range_edit.setAccessibleName("Pages to translate")
        self.again = QCheckBox("Translate pages translated already again")
        self.replace = QCheckBox("Replace my own translations too")
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Translate")
        form = QFormLayout(self)
        form.addRow(QLabel(f"The volume has {count} page(s), numbered from 1."))
        form.addRow("Pages", self.range_edit)
        form.addRow(self.again)
        form.addRow(self.replace)
        form.addRow(self.error)
        form.addRow(self.buttons)
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        self.range_edit.textChanged.connect(lambda _t: self._check())
        self._check()

    def _check(self) -> bool:
        try:
            pages = parse_page_range(self.range_edit.text(), self.count)
        except UserError as exc:
            self.error.setText(str(exc))
            self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(False)
            return False
        self.error.setText(f"{len(pages)} page(s)")
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(True)
        return True

    def _accept(self) -> None:
        if self._check():
            self.accept()

    def answer(self) -> tuple[str, bool, bool]:
        return self.range_edit.text(), self.again.isChecked(), self.replace.isChecked()
