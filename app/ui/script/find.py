"""Find and replace across the volume (Edit > Find, Ctrl+F; Edit > Replace, Ctrl+H): a bar over
the Script table. Next / Previous go through the matches page by page in reading order and show
each block on its page; Replace all is one undoable step."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from app.core.document.find_replace import FIELDS, Hit, compile_pattern, find_all, replace_in_page
from app.errors import UserError


class FindBar(QWidget):
    def __init__(self, window, view, parent=None):
        super().__init__(parent)
        self.main_window, self.view = window, view
        self.last: Hit | None = None
        self.find_edit, self.replace_edit = QLineEdit(), QLineEdit()
        self.find_edit.setPlaceholderText("Find in the volume")
        self.replace_edit.setPlaceholderText("Replace with")
        self.where = QComboBox()
        for f in FIELDS:
            self.where.addItem({"source": "Source", "translation": "Translation", "both": "Source and translation"}[f], f)
        self.where.setCurrentIndex(FIELDS.index("both"))
        self.regex, self.case = QCheckBox("Regular expression"), QCheckBox("Match case")
        self.prev_button, self.next_button = QPushButton("Previous"), QPushButton("Next")
        self.replace_button, self.replace_all_button = QPushButton("Replace"), QPushButton("Replace all")
        self.result = QLabel()
        close = QPushButton("Close")
        grid = QGridLayout(self)
        grid.setContentsMargins(4, 2, 4, 2)
        grid.addWidget(self.find_edit, 0, 0)
        grid.addWidget(self.where, 0, 1)
        grid.addWidget(self.regex, 0, 2)
        grid.addWidget(self.case, 0, 3)
        grid.addWidget(self.result, 0, 4)  # on the find row: the replace row takes no height while hidden
        grid.addWidget(self.prev_button, 0, 5)
        grid.addWidget(self.next_button, 0, 6)
        grid.addWidget(close, 0, 7)
        grid.addWidget(self.replace_edit, 1, 0, 1, 4)
        grid.addWidget(self.replace_button, 1, 5)
        grid.addWidget(self.replace_all_button, 1, 6)
        grid.setColumnStretch(0, 1)
        self.replace_widgets = (self.replace_edit, self.replace_button, self.replace_all_button)
        self.next_button.clicked.connect(lambda: self.step(1))
        self.prev_button.clicked.connect(lambda: self.step(-1))
        self.find_edit.returnPressed.connect(lambda: self.step(1))
        self.replace_edit.returnPressed.connect(self.replace_one)
        self.replace_button.clicked.connect(self.replace_one)
        self.replace_all_button.clicked.connect(self.replace_all)
        close.clicked.connect(self.hide)
        self.hide()

    def open(self, with_replace: bool) -> None:
        """Show the bar (and the Script dock), the replace row with `with_replace`."""
        self.view.dock.show()
        self.view.dock.raise_()
        self.show()
        for w in self.replace_widgets:
            w.setVisible(with_replace)
        self.find_edit.setFocus()
        self.find_edit.selectAll()

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.hide()
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.step(-1)
            return
        super().keyPressEvent(event)

    def _pattern(self):
        if not self.find_edit.text() or self.main_window.doc.project is None:
            self.result.setText("")
            return None
        try:
            return compile_pattern(self.find_edit.text(), self.regex.isChecked(), self.case.isChecked())
        except UserError as exc:
            self.result.setText(str(exc))
            return None

    def hits(self) -> list[Hit]:
        pattern = self._pattern()
        return [] if pattern is None else find_all(self.main_window.doc.project, pattern, self.where.currentData())

    def step(self, direction: int) -> Hit | None:
        """Go to the next (1) or previous (-1) match, wrapping around the volume."""
        self.main_window.flush_editors()
        hits = self.hits()
        if not hits:
            if self.find_edit.text() and not self.result.text().startswith("the regular"):
                self.result.setText("No match")
            self.last = None
            return None
        if self.last in hits:
            i = (hits.index(self.last) + direction) % len(hits)
        else:
            i = 0 if direction > 0 else len(hits) - 1
        self.last = hit = hits[i]
        self.result.setText(f"{i + 1} of {len(hits)}")
        if hit.page != self.main_window.current:
            self.main_window.show_page(hit.page)
        self.main_window.select_block(hit.block_id)
        self.view.show_block(hit.page, hit.block_id)
        return hit

    def replace_one(self) -> None:
        """Replace the matches in the field of the current match, then go to the next one."""
        pattern = self._pattern()
        hit = self.last
        if pattern is None or hit is None or hit not in self.hits():
            self.step(1)
            return
        text, regex = self.replace_edit.text(), self.regex.isChecked()
        try:
            self.main_window.edit(lambda p: replace_in_page(p, pattern, text, hit.field, hit.block_id, regex)[0],
                        "replace", page=hit.page)
        except UserError as exc:
            self.result.setText(str(exc))
            return
        self.last = None if hit not in self.hits() else hit
        self.step(1) if self.last is None else None

    def replace_all(self) -> int:
        """Every match in the volume replaced, as one undoable step; returns the count."""
        self.main_window.flush_editors()
        pattern = self._pattern()
        if pattern is None:
            return 0
        text, regex, where = self.replace_edit.text(), self.regex.isChecked(), self.where.currentData()
        pages = list(dict.fromkeys(h.page for h in find_all(self.main_window.doc.project, pattern, where)))
        total = 0
        try:
            results = {name: replace_in_page(self.main_window.doc.page(name), pattern, text, where, None, regex) for name in pages}
        except UserError as exc:
            self.result.setText(str(exc))
            return 0
        if results:
            self.main_window.undo_stack.beginMacro(f"replace all {self.find_edit.text()!r}")
            for name, (page, n) in results.items():
                total += n
                self.main_window.edit(lambda _p, new=page: new, "replace", page=name)
            self.main_window.undo_stack.endMacro()
        self.last = None
        self.result.setText(f"Replaced {total} on {len(results)} page(s)" if total else "No match")
        return total
