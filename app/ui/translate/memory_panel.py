"""The Memory dock: the project's story memory (characters, terms, the story so far) and the
glossary entries proposed from it and from the source, to accept or dismiss.

Every change is one undoable command through the DocumentModel (`set_memory`, `set_dismissed`,
and the glossary's own command), so it is saved with the project like any edit. An entry the
user types or changes is theirs (`by_user`): the model's later proposals never change it.
"""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.translate.memory import Character, StoryMemory, Term
from app.ui.editor.items import overlay_font
from app.ui.editor.undo import ProjectValueCommand


def _table(headers: list[str]) -> QTableWidget:
    t = QTableWidget(0, len(headers))
    t.setHorizontalHeaderLabels(headers)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
    t.verticalHeader().hide()
    t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    t.setWordWrap(True)
    t.setFont(overlay_font(13))  # the bundled CJK face: names in the source script draw everywhere
    return t


class MemoryPanel(QWidget):
    """Shows and edits the open project's story memory; `glossary_accepted(entries)` asks the
    translation control to add entries to the glossary (its own undoable command)."""

    glossary_accepted = Signal(list)  # [GlossaryEntry]

    def __init__(self, doc, undo_stack, parent=None):
        super().__init__(parent)
        self.doc, self.undo_stack = doc, undo_stack
        self._syncing = False
        self.tabs = QTabWidget()
        self.characters = _table(["Source", "Target", "Notes"])
        self.terms = _table(["Source", "Target", "Notes"])
        self.summary = QPlainTextEdit()
        self.summary.setFont(overlay_font(13))
        self.summary.setPlaceholderText("The story so far (the model writes it as pages go by; yours is kept)")
        self.proposed = _table(["Source", "Target", "Why"])
        self.proposal_note = QLabel()
        self.proposal_note.setWordWrap(True)
        for table, kind in ((self.characters, "character"), (self.terms, "term")):
            page = QWidget()
            lay = QVBoxLayout(page)
            lay.setContentsMargins(2, 2, 2, 2)
            lay.addWidget(table)
            row = QHBoxLayout()
            add, delete = QPushButton(f"Add {kind}"), QPushButton("Delete")
            add.clicked.connect(lambda _=False, t=table: self._add_row(t))
            delete.clicked.connect(lambda _=False, t=table: self._delete_rows(t))
            row.addWidget(add)
            row.addWidget(delete)
            row.addStretch(1)
            lay.addLayout(row)
            table.cellChanged.connect(self._on_table_edited)
            self.tabs.addTab(page, "Characters" if kind == "character" else "Terms")
        self.tabs.addTab(self.summary, "Summary")
        prop = QWidget()
        lay = QVBoxLayout(prop)
        lay.setContentsMargins(2, 2, 2, 2)
        head = QLabel("Proposed glossary entries (type a target where it is empty, then Accept):")
        head.setWordWrap(True)
        lay.addWidget(head)
        lay.addWidget(self.proposed)
        row = QHBoxLayout()
        self.accept_button, self.dismiss_button = QPushButton("Accept"), QPushButton("Dismiss")
        self.accept_button.clicked.connect(self.accept_selected)
        self.dismiss_button.clicked.connect(self.dismiss_selected)
        row.addWidget(self.accept_button)
        row.addWidget(self.dismiss_button)
        row.addStretch(1)
        lay.addLayout(row)
        lay.addWidget(self.proposal_note)
        self.tabs.addTab(prop, "Proposed")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        outer.addWidget(self.tabs)
        self._summary_timer = QTimer(self, singleShot=True, interval=600, timeout=self._commit_summary)
        self.summary.textChanged.connect(lambda: None if self._syncing else self._summary_timer.start())
        doc.project_reset.connect(self.refresh)
        doc.project_changed.connect(lambda what: self.refresh() if what in ("memory", "glossary", "dismissed") else None)
        doc.page_changed.connect(lambda _name: self._refresh_proposals())
        self.refresh()

    # --- showing ---------------------------------------------------------------------------
    @property
    def memory(self) -> StoryMemory:
        return self.doc.project.memory if self.doc.project is not None else StoryMemory()

    def refresh(self) -> None:
        self._syncing = True
        try:
            memory = self.memory
            for table, items in ((self.characters, memory.characters), (self.terms, memory.terms)):
                table.setRowCount(0)
                for item in items:
                    self._append(table, (item.source, item.target, item.notes),
                                 "" if item.by_user else "proposed by the model")
            if not self._summary_timer.isActive() and self.summary.toPlainText() != memory.summary:
                self.summary.setPlainText(memory.summary)
            self.setEnabled(self.doc.project is not None)
        finally:
            self._syncing = False
        self._refresh_proposals()

    def _append(self, table: QTableWidget, values, tip: str = "") -> None:
        row = table.rowCount()
        table.insertRow(row)
        for col, value in enumerate(values):
            cell = QTableWidgetItem(value)
            if tip:
                cell.setToolTip(tip)
            table.setItem(row, col, cell)

    def _refresh_proposals(self) -> None:
        from app.core.translation.glossary_proposals import proposals

        if self.doc.project is None:
            return
        found = proposals(self.doc.project)
        self._syncing = True
        try:
            self.proposed.setRowCount(0)
            for p in found:
                self._append(self.proposed, (p.source, p.target, p.why))
                self.proposed.item(self.proposed.rowCount() - 1, 0).setFlags(
                    Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
                self.proposed.item(self.proposed.rowCount() - 1, 2).setFlags(
                    Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
        finally:
            self._syncing = False
        self.tabs.setTabText(3, f"Proposed ({len(found)})" if found else "Proposed")
        self.proposal_note.setText("Nothing is added to the glossary until you accept it; dismissed entries are "
                                   "not proposed again." if found else "No proposals now.")

    # --- editing ---------------------------------------------------------------------------
    def _rows(self, table: QTableWidget, cls, old):
        by_source = {i.source: i for i in old}
        out = []
        for r in range(table.rowCount()):
            values = [(table.item(r, c).text().strip() if table.item(r, c) else "") for c in range(3)]
            if not values[0]:
                continue
            before = by_source.get(values[0])
            same = before is not None and (before.target, before.notes) == (values[1], values[2])
            out.append(before if same else cls(values[0], values[1], values[2], by_user=True))
        return tuple(out)

    def _from_tables(self) -> StoryMemory:
        m = self.memory
        return replace(m, characters=self._rows(self.characters, Character, m.characters),
                       terms=self._rows(self.terms, Term, m.terms))

    def set_memory(self, memory: StoryMemory, text: str = "edit story memory") -> bool:
        """Replace the project's memory as one undoable step (no-op when unchanged)."""
        if self.doc.project is None or memory == self.memory:
            return False
        self.undo_stack.push(ProjectValueCommand(self.doc, self.doc.set_memory, self.memory, memory, text))
        return True

    def _on_table_edited(self, *_args) -> None:
        if not self._syncing:
            self.set_memory(self._from_tables())

    def _add_row(self, table: QTableWidget) -> None:
        self._syncing = True
        self._append(table, ("", "", ""))
        self._syncing = False
        table.setCurrentCell(table.rowCount() - 1, 0)
        table.editItem(table.item(table.rowCount() - 1, 0))

    def _delete_rows(self, table: QTableWidget) -> None:
        rows = sorted({i.row() for i in table.selectedIndexes()}, reverse=True)
        if not rows:
            return
        self._syncing = True
        for r in rows:
            table.removeRow(r)
        self._syncing = False
        self.set_memory(self._from_tables(), "delete from story memory")

    def _commit_summary(self) -> None:
        self._summary_timer.stop()
        text = self.summary.toPlainText().strip()
        if text != self.memory.summary:
            self.set_memory(replace(self.memory, summary=text, summary_by_user=bool(text)), "edit story summary")

    def flush(self) -> None:
        if self._summary_timer.isActive():
            self._commit_summary()

    # --- proposals -------------------------------------------------------------------------
    def _selected_proposals(self) -> list[tuple[str, str]]:
        rows = sorted({i.row() for i in self.proposed.selectedIndexes()})
        return [(self.proposed.item(r, 0).text(), (self.proposed.item(r, 1).text() if self.proposed.item(r, 1)
                                                   else "").strip()) for r in rows]

    def accept_selected(self) -> int:
        from app.translate.base import GlossaryEntry

        chosen = [(s, t) for s, t in self._selected_proposals() if t]
        if not chosen:
            self.proposal_note.setText("Type the entry's target first (the Target column), then Accept.")
            return 0
        self.glossary_accepted.emit([GlossaryEntry(s, t) for s, t in chosen])
        return len(chosen)

    def dismiss_selected(self) -> int:
        chosen = [s for s, _t in self._selected_proposals()]
        if not chosen or self.doc.project is None:
            return 0
        before = list(self.doc.project.dismissed_proposals)
        self.undo_stack.push(ProjectValueCommand(self.doc, self.doc.set_dismissed, before, before + chosen,
                                                 "dismiss glossary proposal"))
        return len(chosen)
