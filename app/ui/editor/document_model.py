"""The open document on the GUI side: the Project, its Source path, and change signals.

Every change to a page goes through `set_page`, called by undo commands (app.ui.editor.undo) so
that each edit is undoable. Pages are frozen values; the model swaps whole pages.
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from app.core.document import Page, Project


class DocumentModel(QObject):
    """Holds the project; emits `page_changed(name)` after a page is replaced."""

    page_changed = Signal(str)  # page name
    page_revealed = Signal(str)  # an undo/redo touched this page: show it
    project_reset = Signal()  # a new project (or none) was loaded
    fields_changed = Signal()  # an edit of the project's own fields (style, glossary): emitted by its command

    def __init__(self, parent=None):
        super().__init__(parent)
        self.project: Project | None = None

    def set_project(self, project: Project | None) -> None:
        self.project = project
        self.project_reset.emit()

    @property
    def source(self) -> str:
        return self.project.source if self.project else ""

    def page_names(self) -> list[str]:
        return [p.name for p in self.project.pages] if self.project else []

    def page(self, name: str) -> Page:
        assert self.project is not None
        return self.project.pages[self.project.page_index(name)]

    def has_page(self, name: str) -> bool:
        return self.project is not None and any(p.name == name for p in self.project.pages)

    def set_page(self, page: Page, reveal: bool = False) -> None:
        """Replace the page of the same name; `reveal` asks the window to show it."""
        assert self.project is not None
        self.project.pages[self.project.page_index(page.name)] = page
        self.page_changed.emit(page.name)
        if reveal:
            self.page_revealed.emit(page.name)
