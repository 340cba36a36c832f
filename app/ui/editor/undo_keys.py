"""Ctrl+Z / Ctrl+Shift+Z (and Ctrl+Y) reach the project's undo history whatever has the focus.

A text editor claims the undo keys for itself (Qt's ShortcutOverride), even when its own history
is empty: after a page change the block editor's history is reset, and Ctrl+Z did nothing while
Edit > Undo worked. The router lets an editor keep the keys only while it has unfinished changes
of its own (typing not yet committed to the project, an open in-place edit with changes); then
the editor undoes first, and once its changes are in the project, the project's history does.
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeySequence


def is_undo_key(event) -> bool:
    """Undo or redo, as the platform spells them (Ctrl+Z, Ctrl+Shift+Z, Ctrl+Y on Linux/Windows)."""
    if event.matches(QKeySequence.StandardKey.Undo) or event.matches(QKeySequence.StandardKey.Redo):
        return True
    mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
    return event.key() == Qt.Key.Key_Y and mods == Qt.KeyboardModifier.ControlModifier


class UndoKeyRouter(QObject):
    """Event filter on the editors of the window: `watch(widget, owns_keys)`."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._owns: dict[int, Callable[[], bool]] = {}

    def watch(self, widget, owns_keys: Callable[[], bool]) -> None:
        """`owns_keys()` says whether `widget` has unfinished changes of its own to undo."""
        self._owns[id(widget)] = owns_keys
        widget.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.ShortcutOverride and is_undo_key(event):
            owns = self._owns.get(id(obj))
            if owns is not None and not owns():
                event.ignore()  # not claimed: the window's Undo / Redo shortcut fires
                return True
        return False
