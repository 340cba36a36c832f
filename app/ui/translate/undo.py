"""The translation room's own undo command: a selection run's pages (merged into one step). The
glossary and the story memory are project values (app.ui.editor.undo.ProjectValueCommand)."""
from __future__ import annotations

from PySide6.QtGui import QUndoCommand

SELECTION_RUN_ID = 4712  # the undo commands of one selection run merge into one step


class SelectionRunCommand(QUndoCommand):
    """The translations of a selection run (every page it touched, and what they taught the
    story memory): one undo step. The pages' commands of one run merge as they arrive, as long
    as nothing else was done in between."""

    def __init__(self, doc, run_id: int, before, after, memory=None):
        super().__init__("translate the selected blocks")
        self.doc, self.project, self.run_id = doc, doc.project, run_id
        self.pages = {before.name: [before, after]} if before is not None else {}
        self.memory = list(memory) if memory is not None else None  # [before, after]
        self._first = True

    def id(self) -> int:  # noqa: A003 - Qt override
        return SELECTION_RUN_ID

    def mergeWith(self, other) -> bool:
        if not isinstance(other, SelectionRunCommand) or other.run_id != self.run_id or other.doc is not self.doc:
            return False
        for name, (before, after) in other.pages.items():
            self.pages.setdefault(name, [before, after])[1] = after
        if other.memory is not None:
            self.memory = [self.memory[0] if self.memory else other.memory[0], other.memory[1]]
        return True

    def redo(self) -> None:
        if self.doc.project is not self.project:
            return
        for _before, after in self.pages.values():
            self.doc.set_page(after, reveal=not self._first)
        if self.memory is not None:
            self.doc.set_memory(self.memory[1])
        self._first = False

    def undo(self) -> None:
        if self.doc.project is not self.project:
            return
        for before, _after in reversed(self.pages.values()):
            self.doc.set_page(before, reveal=True)
        if self.memory is not None:
            self.doc.set_memory(self.memory[0])
