"""Undo commands: each holds a value before and after an edit (pages are frozen values).

`PageEditCommand` replaces a page: typing in one field of one block merges into a single
command, so undo steps back a whole edit rather than a keystroke. Undo/redo after the first redo
asks the window to show the page, so history works across page changes.

`ProjectValueCommand` replaces one project-wide value (glossary, story memory, dismissed
proposals, lettering style, sizes, the policy for text outside bubbles) through the setter the
panel names; every panel uses it. It belongs to the project it was made on: once another project
is the document's, its undo and redo do nothing.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtGui import QUndoCommand, QUndoStack

from app.core.document.types import Page
from app.ui.editor.document_model import DocumentModel

_MERGE_ID = 4711


class PageEditCommand(QUndoCommand):
    """Replace a page by an edited copy; `merge_key` lets consecutive typing merge."""

    def __init__(self, model: DocumentModel, before: Page, after: Page, text: str,
                 merge_key: tuple | None = None):
        super().__init__(text)
        self.model = model
        self.before = before
        self.after = after
        self.merge_key = merge_key
        self._first = True

    def redo(self) -> None:
        self.model.set_page(self.after, reveal=not self._first)
        self._first = False

    def undo(self) -> None:
        self.model.set_page(self.before, reveal=True)

    def id(self) -> int:  # noqa: A003 - Qt override
        return _MERGE_ID if self.merge_key is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, PageEditCommand) or other.merge_key != self.merge_key:
            return False
        self.after = other.after
        return True


def push_edit(stack: QUndoStack, model: DocumentModel, page_name: str, edit, text: str,
              merge_key: tuple | None = None) -> bool:
    """Apply `edit(page) -> Page` as an undoable command; no-op edits push nothing."""
    before = model.page(page_name)
    after = edit(before)
    if after == before:
        return False
    stack.push(PageEditCommand(model, before, after, text, merge_key))
    return True


class ProjectValueCommand(QUndoCommand):
    """A project-wide value replaced: `set_value(after)` on redo, `set_value(before)` on undo,
    only while `model`'s project is the one the command was made on. `set_value` is one of the
    DocumentModel's setters (`model.set_memory`) or a panel's method that calls one and then
    refreshes what shows the value (`PageViews.set_project_style`)."""

    def __init__(self, model: DocumentModel, set_value: Callable[[Any], None], before, after, text: str):
        super().__init__(text)
        self.model, self.project, self.set_value = model, model.project, set_value
        self.before, self.after = before, after

    def redo(self) -> None:
        if self.model.project is self.project:
            self.set_value(self.after)

    def undo(self) -> None:
        if self.model.project is self.project:
            self.set_value(self.before)
