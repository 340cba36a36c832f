"""The Glossary dialog: the project's terms (source, target, note) in a table to add, edit and
remove, import from and export to a file (TSV, `a -> b # note` lines, JSON), and a term taken
from the selected block's text. OK hands the new list back (the window applies it as an
undoable change to the project); the glossary file from Translation settings is shown, not
edited here."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from app.errors import UserError
from app.translate.base import GlossaryEntry
from app.translate.glossary import format_glossary, load_glossary, merge

FILTER = "Tab-separated (*.tsv);;Arrow lines (*.txt);;JSON (*.json)"


class GlossaryDialog(QDialog):
    def __init__(self, entries, file_note: str = "", block_text: str = "", parent=None):
        super().__init__(parent)
        self.setWindowTitle("Glossary")
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Source term", "Translation", "Note"])
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        help_text = QLabel("Names and terms translated the same way on every page. Only the terms that occur "
                           "on a page (or in the pages sent as its context) are sent with it.")
        help_text.setWordWrap(True)
        self.status = QLabel(file_note)
        self.status.setWordWrap(True)
        self._block_text = block_text.strip().strip("「」『』“”\"'（）()").strip()  # a name, not its quotes
        add = QPushButton("Add")
        self.from_block = QPushButton("Add from selected block")
        self.from_block.setEnabled(bool(self._block_text))
        self.from_block.setToolTip(f"New term: {self._block_text[:60]}" if self._block_text
                                   else "Select a block on the page first")
        remove = QPushButton("Remove")
        import_button = QPushButton("Import…")
        export_button = QPushButton("Export…")
        add.clicked.connect(lambda: self.add_row(GlossaryEntry("", "")))
        self.from_block.clicked.connect(lambda: self.add_row(GlossaryEntry(self._block_text, "")))
        remove.clicked.connect(self._remove_selected)
        import_button.clicked.connect(self._import)
        export_button.clicked.connect(self._export)
        row = QHBoxLayout()
        for b in (add, self.from_block, remove):
            row.addWidget(b)
        row.addStretch(1)
        row.addWidget(import_button)
        row.addWidget(export_button)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(help_text)
        lay.addWidget(self.table, 1)
        lay.addLayout(row)
        lay.addWidget(self.status)
        lay.addWidget(buttons)
        for e in entries:
            self.add_row(e, edit=False)
        self.resize(680, 460)

    def add_row(self, entry: GlossaryEntry, edit: bool = True) -> int:
        r = self.table.rowCount()
        self.table.insertRow(r)
        for c, value in enumerate((entry.source, entry.target, entry.note)):
            self.table.setItem(r, c, QTableWidgetItem(value))
        if edit:
            self.table.setCurrentCell(r, 1 if entry.source else 0)
            self.table.editItem(self.table.item(r, 1 if entry.source else 0))
        return r

    def entries(self) -> list[GlossaryEntry]:
        """The rows with a source and a target, trimmed; later duplicates of a term dropped."""
        out = []
        for r in range(self.table.rowCount()):
            source, target, note = ((self.table.item(r, c).text() if self.table.item(r, c) else "").strip()
                                    for c in range(3))
            if source and target:
                out.append(GlossaryEntry(source, target, note))
        return merge(out)

    def _remove_selected(self) -> None:
        for r in sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True):
            self.table.removeRow(r)

    def import_file(self, path: str | Path) -> int:
        """Add a file's terms (a term already in the table keeps its row); returns how many were added."""
        entries = load_glossary(path)
        have = {e.source for e in self.entries()}
        added = [e for e in merge(entries) if e.source not in have]
        for e in added:
            self.add_row(e, edit=False)
        self.status.setText(f"Imported {len(added)} term(s) from {Path(path).name}"
                            + (f" ({len(entries) - len(added)} already here)" if len(entries) > len(added) else "."))
        return len(added)

    def export_file(self, path: str | Path) -> None:
        suffix = Path(path).suffix.lower()
        fmt = {".json": "json", ".txt": "arrows"}.get(suffix, "tsv")
        Path(path).write_text(format_glossary(self.entries(), fmt), encoding="utf-8")
        self.status.setText(f"Exported {len(self.entries())} term(s) to {path}")

    def _import(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import a glossary", "", FILTER + ";;All files (*)")
        if path:
            try:
                self.import_file(path)
            except UserError as exc:
                self.status.setText(str(exc))

    def _export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export the glossary", "glossary.tsv", FILTER)
        if path:
            try:
                self.export_file(path)
            except OSError as exc:
                self.status.setText(f"{path}: cannot write it ({exc.strerror or exc}).")
