"""Pages whose reading order may be wrong: stepping through them, and saying so on the page.

The pipeline marks a page "check the order" when the layout rules were not sure of its reading
order (app.core.document.Page.order_check, app.detect.confidence). The page list and the
Script view show the mark; the canvas draws the page's order numbers large. Here: View > Next
page to check the order (F8) and Previous (Shift+F8) go to the next marked page after the one
shown (round the volume), and the status bar says why the page shown is marked. Renumbering the
page's blocks by hand (the block list) clears its mark.
"""
from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence

from app.ui.common.widgets import ElidedLabel
from app.ui.editor.port import EditorWindow

NEXT, PREVIOUS = "F8", "Shift+F8"
# (name, label, keys) for the Keyboard shortcuts dialog
SHORTCUTS = [("next_order_check", "Next page to check the order", NEXT),
             ("prev_order_check", "Previous page to check the order", PREVIOUS)]


class OrderChecks:
    """View > Next / Previous page to check the order, and the status bar's note."""

    def __init__(self, window: EditorWindow):
        self.window = window
        self.next_action = QAction("Next page to check the &order", window)
        self.next_action.setShortcut(QKeySequence(NEXT))
        self.next_action.triggered.connect(lambda: self.step(1))
        self.previous_action = QAction("Previous page to check the order", window)
        self.previous_action.setShortcut(QKeySequence(PREVIOUS))
        self.previous_action.triggered.connect(lambda: self.step(-1))
        window.addActions([self.next_action, self.previous_action])
        # shares the status bar's room with the status line (both elide, the whole text in the
        # tooltip): at its full width it left "Done: 4 page(s) in 30 s" as "Don…"
        self.note = ElidedLabel()
        self.note.setAccessibleName("Why the reading order of this page is to be checked")
        self.note.setStyleSheet("color: #b35900; font-weight: bold")
        self.note.hide()
        window.statusBar().addPermanentWidget(self.note, 1)
        window.doc.project_reset.connect(self.refresh)
        window.doc.page_changed.connect(lambda _name: self.refresh())
        window.page_shown.connect(lambda _name: self.refresh())

    def marked(self) -> list[str]:
        """The names of the pages marked "check the order", in the volume's order."""
        project = self.window.doc.project
        return [p.name for p in project.pages if p.order_check] if project is not None else []

    def step(self, direction: int) -> str | None:
        """Show the next (1) or previous (-1) marked page after the one shown, round the volume;
        the page shown, None (and a status message) when no page is marked."""
        names = self.window.doc.page_names()
        marked = set(self.marked())
        if not marked:
            self.window.show_status("No page is marked 'check the order'")
            return None
        here = names.index(self.window.current) if self.window.current in names else (-1 if direction > 0 else 0)
        for k in range(1, len(names) + 1):
            name = names[(here + direction * k) % len(names)]
            if name in marked:
                self.window.show_page(name)
                return name
        return None

    def refresh(self) -> None:
        """The note for the page shown, the actions' state."""
        window = self.window
        marked = self.marked()
        page = window.doc.page(window.current) if window.current and window.doc.has_page(window.current) else None
        if page is not None and page.order_check:
            others = len(marked) - 1
            self.note.setText(f"Check the reading order: {page.order_check}"
                              + (f" · {others} more page{'s' if others != 1 else ''} (F8)" if others else ""))
            self.note.setToolTip("The numbers on the page are the order the blocks will be read in. "
                                 "Renumber them in the block list to fix the order: the mark goes.")
            self.note.show()
        else:
            self.note.hide()
        for action in (self.next_action, self.previous_action):
            action.setEnabled(bool(marked))


def attach(window) -> OrderChecks:
    """The order checks of `window` (the main window: an EditorWindow with `show_page`,
    `page_shown` and a status bar)."""
    return OrderChecks(window)
