"""The small interface a feature controller (reading, translation, render) has to the window:
the document model, the page shown, undoable edits, messages. A controller is given an object
with these members (the main window) and uses nothing else of it; the window composes the
controllers and places their widgets."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from app.ui.editor.document_model import DocumentModel

if TYPE_CHECKING:
    from app.core.config.settings import AppSettings


class EditorWindow(Protocol):
    doc: DocumentModel  # every document change goes through it (or through `edit`)
    settings: AppSettings  # read only: changes go through update_settings
    current: str  # the page shown ("" when none)
    messages: object  # app.ui.common.messages.MessageLog: every status line and notice in full

    @property
    def closing(self) -> bool:
        """True once the window is closing: results that arrive now are dropped."""
        ...

    def edit(self, edit, text: str, merge_key=None, page: str | None = None) -> bool:
        """Apply `edit(page) -> page` to `page` (the current one by default) as one undoable step."""
        ...

    def show_notice(self, kind: str, message: str, buttons=(), owner: str = "") -> None:
        """A message over the page: info | warning | error | reread; `owner` clears it (clear_notice)."""

    def clear_notice(self, owner: str) -> None:
        """`owner`'s notice is no longer true: it goes."""

    def show_status(self, message: str, owner: str = "", log: bool = True) -> None:
        """The status bar's message; `owner` clears it (clear_status)."""

    def clear_status(self, owner: str) -> None:
        """`owner`'s status line is no longer true: it empties."""

    def record_error(self, message: str) -> None:
        """The last error a background task reported (the smoke test prints it)."""

    def select_block(self, block_id: str) -> None:
        """Select the block on the canvas and in the block panel."""

    def flush_editors(self) -> None:
        """Commit what is being typed in the block panel (before a run reads the document)."""

    def update_cancel(self) -> None:
        """Enable Cancel while anything can be cancelled (a run, a translation, draw mode)."""
