"""Attaches the Script dock to the window: View > Script, a row shows its block on its page, the
lettering fit of the blocks (checked while the dock is shown, and on the page shown)."""
from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QLabel

from app.ui.editor.port import EditorWindow
from app.ui.script.find import FindBar
from app.ui.script.fit import FitChecker
from app.ui.script.model import ScriptModel
from app.ui.script.view import ScriptView

SHORTCUT = "Ctrl+Shift+L"
FIND, REPLACE = "Ctrl+F", "Ctrl+H"


class ScriptWindow(EditorWindow, Protocol):
    def show_page(self, name: str) -> None:
        """Show page `name` on the canvas."""


def attach(window: ScriptWindow) -> ScriptView:
    """The Script dock (bottom, hidden until View > Script); returns its view."""

    def edit(fn, text: str, merge_key=None, page: str | None = None) -> bool:
        window.flush_editors()  # what is being typed in the block panel first, as its own step
        return window.edit(fn, text, merge_key, page=page)

    fit = FitChecker(window.doc, lambda: window.settings, lambda: window.current, window)
    model = ScriptModel(window.doc, edit, window, fit=fit)
    view = ScriptView(model)
    view.fit, view.stop = fit, fit.stop
    dock = QDockWidget("Script", window)
    dock.setObjectName("dock_script")
    dock.setWidget(view)
    dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                     | QDockWidget.DockWidgetFeature.DockWidgetClosable)
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
    dock.hide()
    toggle = dock.toggleViewAction()
    toggle.setText("&Script (every block of the volume)")
    toggle.setShortcut(QKeySequence(SHORTCUT))

    def choose(name: str, block_id: str) -> None:
        if name != window.current:
            window.show_page(name)
        window.select_block(block_id)

    view.block_chosen.connect(choose)
    dock.visibilityChanged.connect(fit.set_active)
    window.page_shown.connect(fit.ensure)
    fit.progressed.connect(view.update_count)
    view.dock, view.toggle = dock, toggle

    def first_height(visible: bool) -> None:
        """The first time it opens, the dock takes half the window's height (a dozen
        rows at 1280x800 with the find bar open, not the four its own size hint gives)."""
        if visible and not getattr(dock, "sized", False):
            dock.sized = True
            window.resizeDocks([dock], [max(dock.height(), window.height() // 2)], Qt.Orientation.Vertical)

    dock.visibilityChanged.connect(first_height)
    bar = view.find_bar = FindBar(window, view)
    view.layout().insertWidget(0, bar)
    find = view.find_action = QAction("&Find in the volume…", window)
    find.setShortcut(QKeySequence(FIND))
    find.triggered.connect(lambda: bar.open(False))
    rep = view.replace_action = QAction("&Replace in the volume…", window)
    rep.setShortcut(QKeySequence(REPLACE))
    rep.triggered.connect(lambda: bar.open(True))
    window.addActions([find, rep])
    left = view.left_label = QLabel()
    left.setAccessibleName("Blocks left to translate")

    def count_left(*_args) -> None:
        n = model.left()
        left.setText(f"{n} block{'s' if n != 1 else ''} left to translate" if model.rowCount() else "")

    for signal in (model.modelReset, model.dataChanged):
        signal.connect(count_left)
    count_left()
    window.statusBar().addPermanentWidget(left)
    return view
