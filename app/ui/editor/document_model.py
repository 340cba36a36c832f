"""The open document on the GUI side: the Project, its Source path, and change signals.

Every change to the document goes through this model: a page through `set_page`, called by undo
commands (app.ui.editor.undo) so that each edit is undoable; the project's glossary, default
text style, size harmonisation, story memory, dismissed glossary proposals and the policies for
text outside bubbles through `set_glossary` / `set_style` / `set_sizes` / `set_memory` /
`set_dismissed` / `set_outside` (called by their undo
commands); a page's pixel
size, learned when its image is decoded, through `set_page_size`. Pages are frozen values; the
model swaps whole pages.
"""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QObject, Signal

from app.core.document.types import Page, Project


class DocumentModel(QObject):
    """Holds the project; emits `page_changed(name)` after a page is replaced."""

    page_changed = Signal(str)  # page name
    page_revealed = Signal(str)  # an undo/redo touched this page: show it
    project_reset = Signal()  # a new project (or none) was loaded
    project_changed = Signal(str)  # "glossary" | "style" | "sizes" | "memory" | "dismissed" | "outside": a project-wide value was replaced

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

    def set_page_size(self, name: str, width: int, height: int) -> None:
        """The page's pixel size, as its decoded image has it: not an edit (no undo, no
        page_changed), the page as read from the source."""
        if self.has_page(name):
            index = self.project.page_index(name)
            self.project.pages[index] = replace(self.project.pages[index], width=width, height=height)

    def set_glossary(self, entries) -> None:
        """Replace the project's glossary (called by its undo command)."""
        assert self.project is not None
        self.project.glossary = list(entries)
        self.project_changed.emit("glossary")

    def set_memory(self, memory) -> None:
        """Replace the project's story memory (called by its undo command)."""
        assert self.project is not None
        self.project.memory = memory
        self.project_changed.emit("memory")

    def set_style(self, style) -> None:
        """Replace the project's default text style (called by its undo command)."""
        assert self.project is not None
        self.project.style = style
        self.project_changed.emit("style")

    def set_sizes(self, sizes: str) -> None:
        """Replace the project's size harmonisation (called by its undo command)."""
        assert self.project is not None
        self.project.sizes = sizes
        self.project_changed.emit("sizes")

    def set_series_uuid(self, uuid: str) -> None:
        """The identity the mokuro export gives the series (kept so that readers keep their progress)."""
        assert self.project is not None
        self.project.series_uuid = uuid
        self.project_changed.emit("series_uuid")

    def set_dismissed(self, sources) -> None:
        """Replace the glossary proposals the user dismissed (called by its undo command)."""
        assert self.project is not None
        self.project.dismissed_proposals = list(sources)
        self.project_changed.emit("dismissed")

    def set_outside(self, outside) -> None:
        """Replace the project's policies for text outside bubbles (called by their undo command)."""
        assert self.project is not None
        self.project.outside = dict(outside)
        self.project_changed.emit("outside")
