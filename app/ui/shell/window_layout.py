"""Where the main window's parts go: its docks, the render controller's Style dock, View
entries, toolbar and export menu, the Script dock and the order checks' View entries, the
Translate menu and the Memory and Consistency docks.
Functions of the window (app.ui.shell.main_window), called once while it is built."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget

from app.ui.render.controller import RenderController
from app.ui.shell import actions


def add_render(window) -> None:
    """The render controller: its Style dock tabbed with Blocks, its View entries, its toolbar
    on the first row (the reading settings keep row two), File > Export > Translated pages."""
    from PySide6.QtWidgets import QMenu, QToolBar

    ctl = window.render_ctl = RenderController(window, window.act.view_mode, window.act.mask_brush)
    blocks = window.findChild(QDockWidget, "dock_blocks")
    window.tabifyDockWidget(blocks, dock(window, "Style", ctl.style_panel, "style", Qt.DockWidgetArea.RightDockWidgetArea))
    blocks.raise_()
    for entry in ctl.view_entries:
        if entry is None:
            window.view_menu.addSeparator()
        elif isinstance(entry, QMenu):
            window.view_menu.addMenu(entry)
        else:
            window.view_menu.addAction(entry)
    settings_bar = window.findChild(QToolBar, "settings_toolbar")
    window.removeToolBarBreak(settings_bar)
    window.insertToolBar(settings_bar, ctl.toolbar)
    window.insertToolBarBreak(settings_bar)
    window.export_menu.addMenu(ctl.exporter.menu)


def add_script(window) -> None:
    """The Script dock (every block of the volume: find, replace, the lettering's fit), View >
    Messages, and the pages marked "check the order" (F8 steps through them)."""
    from app.ui.reading import order_check as order_check_ui
    from app.ui.script import controller as script_ui

    w = window
    w.script = script_ui.attach(w)
    w.view_menu.addSeparator()
    w.view_menu.addAction(w.script.toggle)
    messages = w.messages_dock.toggleViewAction()
    messages.setText("Messages (everything the status bar and notices said)")
    w.view_menu.addAction(messages)
    w.order_checks = order_check_ui.attach(w)
    w.view_menu.addActions([w.order_checks.next_action, w.order_checks.previous_action])
    w.edit_menu.addSeparator()
    w.edit_menu.addActions([w.script.find_action, w.script.replace_action])
    w.view.block_selected.connect(lambda bid: w.script.show_block(w.current, bid) if bid else None)
    w.panel.fit_status = w.script.fit.status  # the block list's tints: the lettering's fit too
    w.script.fit.changed.connect(lambda name: w.panel.recolour() if name == w.current else None)


def dock(window, title: str, widget, name: str, area, closable: bool = False) -> QDockWidget:
    """A dock `dock_<name>` holding `widget` in `area` (movable, floatable; closable if asked)."""
    made = QDockWidget(title, window)
    made.setObjectName(f"dock_{name}")
    made.setWidget(widget)
    features = QDockWidget.DockWidgetFeature.DockWidgetMovable | QDockWidget.DockWidgetFeature.DockWidgetFloatable
    made.setFeatures(features | QDockWidget.DockWidgetFeature.DockWidgetClosable if closable else features)
    window.addDockWidget(area, made)
    return made


def add_translation(window) -> None:
    """The translation controller; its menu before Help, its button after Draw box, its status
    widgets, the block panel's Restore of a machine translation."""
    from PySide6.QtWidgets import QToolBar

    from app.ui.translate.control import TranslationController

    window.translation = tr = TranslationController(window, window)
    menu = window.menuBar().addMenu("&Translate")
    window.menuBar().insertMenu(window.menuBar().actions()[-2], menu)  # before Help
    for action in tr.act.menu:
        menu.addSeparator() if action is None else menu.addAction(action)
    toolbar = window.findChild(QToolBar, "main_toolbar")
    toolbar.insertAction(toolbar.actions()[toolbar.actions().index(window.act.draw) + 1], tr.act.toolbar)
    for widget in tr.status_widgets:
        window.statusBar().addPermanentWidget(widget)
    window.panel.translation_restore_requested.connect(tr.restore)
    # Translate the selected blocks: the Script view's rows when chosen there, else the page's
    tr.selection = lambda: window.script.chosen_keys() or [(window.current, b) for b in window.selected_ids()]
    window.script.add_row_actions([tr.act.translate_selected, tr.act.retranslate_selected])
    _add_series(window, tr.series, menu)
    actions.update_enabled(window)  # nothing to translate while no volume is open


def _add_series(window, series, menu) -> None:
    """The Memory and Consistency docks (tabbed with Blocks), their menu entries, the block
    panel's translation-memory suggestions and Approve, a consistency row's jump."""
    blocks = window.findChild(QDockWidget, "dock_blocks")
    docks = []
    for title, widget, name in (("Memory", series.memory_panel, "memory"),
                                ("Consistency", series.check_panel, "consistency")):
        made = dock(window, title, widget, name, Qt.DockWidgetArea.RightDockWidgetArea, closable=True)
        window.tabifyDockWidget(blocks, made)
        docks.append(made)
    blocks.raise_()
    series.memory_dock, series.check_dock = docks
    memory_action = docks[0].toggleViewAction()
    memory_action.setText("Story memory")
    menu.addSeparator()
    menu.addActions([memory_action, *series.menu])
    window.panel.suggest = series.suggestions
    window.panel.approve_requested.connect(series.approve)
    series.jump.connect(window.jump_to_block)
