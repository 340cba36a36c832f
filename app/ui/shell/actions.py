"""Menus, toolbar and shortcuts of the main window (built once, wired to its methods)."""
from __future__ import annotations

from types import SimpleNamespace

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QComboBox, QLabel, QToolBar

from app.core.document.edits import HAND_KINDS
from app.ui.common import icons
from app.ui.common.log_bridge import open_log_folder
from app.ui.reading.settings_bar import ReadingSettings

# (action name, label, shortcut) for the help dialog and the menus
SHORTCUTS = [
    ("open_folder", "Open folder…", "Ctrl+O"),
    ("open_archive", "Open archive or .mokuro…", "Ctrl+Shift+O"),
    ("save", "Save project", "Ctrl+S"),
    ("next_page", "Next page", "PgDown"),
    ("prev_page", "Previous page", "PgUp"),
    ("run_page", "Detect + read this page", "Ctrl+R"),
    ("run_all", "Detect + read all pages", "Ctrl+Shift+R"),
    ("cancel", "Cancel the running job", "Esc"),
    ("draw", "Draw a box (read it at once)", "B"),
    ("next_block", "Next block", "Tab"),
    ("prev_block", "Previous block", "Shift+Tab"),
    ("edit_inline", "Edit the block's text on the page", "F2"),
    ("reread", "Re-read the selected blocks", "Ctrl+Shift+E"),
    ("delete", "Delete the selected blocks", "Del"),
    ("merge", "Merge the selected blocks", "Ctrl+M"),
    ("kind_bubble", "Selected blocks are bubbles (lettered in place)", "Ctrl+Alt+B"),
    ("kind_caption", "Selected blocks are captions (free text)", "Ctrl+Alt+C"),
    ("kind_sfx", "Selected blocks are sound effects", "Ctrl+Alt+X"),
    ("undo", "Undo", "Ctrl+Z"),
    ("redo", "Redo", "Ctrl+Shift+Z"),
    ("zoom_in", "Zoom in", "Ctrl++"),
    ("zoom_out", "Zoom out", "Ctrl+-"),
    ("fit_page", "Fit page", "Ctrl+0"),
    ("fit_width", "Fit width", "Ctrl+9"),
    ("actual_size", "100%", "Ctrl+1"),
    ("toggle_overlay", "Cycle overlay: text / boxes / none", "T"),
    ("view_mode", "Cycle page view: original / cleaned / translated (Alt+1/2/3)", "V"),
    ("mask_brush", "Mask brush: paint text to clean (right button or Shift erases)", "M"),
    ("help", "Keyboard shortcuts", "F1"),
]
# Keys without a modifier act only while the page (canvas) has the focus: typed into anything
# else, they are text, never a command (typing a "t" in a text field once switched the overlay).
CANVAS_KEYS = ("draw", "toggle_overlay", "view_mode", "mask_brush")
# Need an open volume: disabled (greyed) while nothing is open.
NEEDS_PROJECT = ("save", "next_page", "prev_page", "run_page", "run_all", "draw", "next_block", "prev_block",
                 "edit_inline", "reread", "delete", "merge", "kind_bubble", "kind_caption", "kind_sfx", "zoom_in",
                 "zoom_out", "fit_page", "fit_width", "actual_size")

TRANSLATION_NEEDS_PROJECT = ("translate_page", "translate_selected", "translate_pages", "translate_all",
                             "retranslate_page", "retranslate_selected", "add_term")


def build(w) -> SimpleNamespace:
    """Create actions, menus and the toolbar of MainWindow `w`; returns the actions by name."""
    a = _make_actions(w)
    _connect_actions(w, a)
    mb = w.menuBar()
    _file_menu(w, a, mb)
    w.edit_menu = _edit_menu(a, mb)
    _view_menu(w, a, mb)
    _run_models_help_menus(w, a, mb)
    _toolbars(w, a)
    return a


def _make_actions(w) -> SimpleNamespace:
    """The actions of SHORTCUTS, with their keys; the canvas-only keys act on the page only."""
    a = SimpleNamespace()
    for name, label, keys in SHORTCUTS:
        act = QAction(label, w)
        act.setShortcut(QKeySequence(keys))
        if name in CANVAS_KEYS:
            act.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            w.view.addAction(act)
        setattr(a, name, act)
    refresh_icons(w, a)
    a.redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
    a.zoom_in.setShortcuts([QKeySequence("Ctrl++"), QKeySequence("Ctrl+=")])
    a.draw.setCheckable(True)
    a.draw.setText("Draw box")
    a.run_page.setText("Read page")
    a.run_all.setText("Read all")
    a.cancel.setEnabled(False)
    return a


def _connect_actions(w, a: SimpleNamespace) -> None:
    """Each action to what it does (`WindowActions`, held as `w.slots`); undo / redo to the undo stack."""
    s = w.slots
    for action, slot in ((a.open_folder, s.action_open_folder), (a.open_archive, s.action_open_archive),
                         (a.save, s.action_save), (a.next_page, s.action_next_page), (a.prev_page, s.action_prev_page),
                         (a.run_page, s.action_run_page), (a.run_all, s.action_run_all), (a.cancel, s.action_cancel),
                         (a.next_block, s.action_next_block), (a.prev_block, s.action_prev_block),
                         (a.edit_inline, s.action_edit_inline), (a.reread, s.action_reread),
                         (a.delete, s.action_delete), (a.merge, s.action_merge), (a.zoom_in, s.action_zoom_in),
                         (a.zoom_out, s.action_zoom_out), (a.fit_page, s.action_fit_page),
                         (a.fit_width, s.action_fit_width), (a.actual_size, s.action_actual_size),
                         (a.toggle_overlay, s.action_toggle_overlay), (a.help, s.action_help)):
        action.triggered.connect(slot)
    kind_actions = {"bubble": a.kind_bubble, "caption": a.kind_caption, "sfx": a.kind_sfx}
    for kind in HAND_KINDS:  # a kind settable by hand without its action fails here, at start-up
        kind_actions[kind].triggered.connect(lambda _c=False, k=kind: s.action_set_kind(k))
    a.draw.toggled.connect(w.slots.action_draw)
    a.undo.triggered.connect(w.undo_stack.undo)
    a.redo.triggered.connect(w.undo_stack.redo)
    w.undo_stack.canUndoChanged.connect(a.undo.setEnabled)
    w.undo_stack.canRedoChanged.connect(a.redo.setEnabled)
    w.undo_stack.undoTextChanged.connect(lambda t: a.undo.setText(f"Undo {t}".strip()))
    w.undo_stack.redoTextChanged.connect(lambda t: a.redo.setText(f"Redo {t}".strip()))
    a.undo.setEnabled(False)
    a.redo.setEnabled(False)


def _file_menu(w, a: SimpleNamespace, mb) -> None:
    m = mb.addMenu("&File")
    m.addActions([a.open_folder, a.open_archive])
    w.recent_menu = m.addMenu("Open &recent")
    m.addSeparator()
    m.addAction(a.save)
    ex = w.export_menu = m.addMenu("&Export")
    for label, fmt, scope, tr in (("Page as JSON…", "json", "page", False), ("Page as TXT…", "txt", "page", False),
                                  ("Volume as JSON…", "json", "volume", False),
                                  ("Volume as TXT…", "txt", "volume", False),
                                  ("Volume as TXT with translations…", "txt", "volume", True)):
        ex.addAction(label, lambda f=fmt, s=scope, t=tr: w.slots.action_export(f, s, t))
    ex.addSeparator()
    ex.addAction("Script as CSV…", lambda: w.slots.action_export_script("csv"))
    ex.addAction("Script as TSV…", lambda: w.slots.action_export_script("tsv"))
    im = m.addMenu("&Import")
    im.addAction("Transcriptions from TXT…", lambda: w.slots.action_import_txt("text"))
    im.addAction("Translations from TXT…", lambda: w.slots.action_import_txt("translation"))
    im.addAction("Script from CSV / TSV…", w.slots.action_import_script)
    a.project_menus = [ex, im]
    m.addSeparator()
    m.addAction("&Quit", QKeySequence.StandardKey.Quit, w.close)


def _edit_menu(a: SimpleNamespace, mb):
    m = mb.addMenu("&Edit")
    m.addActions([a.undo, a.redo])
    m.addSeparator()
    m.addActions([a.edit_inline, a.reread, a.delete, a.merge])
    kinds = m.addMenu("Block &kind")
    kinds.addActions([a.kind_bubble, a.kind_caption, a.kind_sfx])
    m.addSeparator()
    m.addActions([a.next_block, a.prev_block])
    return m


def _view_menu(w, a: SimpleNamespace, mb) -> None:
    m = w.view_menu = mb.addMenu("&View")
    group = QActionGroup(w)
    a.overlay_actions = {}
    for key, label in (("text", "Boxes and text"), ("boxes", "Boxes only"), ("none", "Page only")):
        act = m.addAction(label)
        act.setCheckable(True)
        act.setChecked(w.settings.overlay == key)
        act.triggered.connect(lambda _=False, k=key: w.slots.set_overlay(k))
        group.addAction(act)
        a.overlay_actions[key] = act
    m.addAction(a.toggle_overlay)
    a.show_translation = m.addAction("Show translations on the page")
    a.show_translation.setCheckable(True)
    a.show_translation.setChecked(w.settings.overlay_source == "translation")
    a.show_translation.toggled.connect(w.slots.set_overlay_source)
    m.addSeparator()
    m.addActions([a.zoom_in, a.zoom_out, a.fit_page, a.fit_width, a.actual_size])
    m.addSeparator()
    m.addActions([a.next_page, a.prev_page])


def _run_models_help_menus(w, a: SimpleNamespace, mb) -> None:
    m = mb.addMenu("&Run")
    m.addActions([a.run_page, a.run_all, a.cancel, a.draw])

    m = mb.addMenu("&Series")
    for action in w.adapting.actions():
        m.addSeparator() if action is None else m.addAction(action)

    m = mb.addMenu("&Models")
    m.addAction("Model manager…", w.slots.action_model_manager)
    m.addAction("Choose OCR model folder…", w.slots.action_choose_model_folder)
    m.addAction("Choose detector file…", w.slots.action_choose_detector)

    m = mb.addMenu("&Help")
    m.addAction(a.help)
    a.open_demo = m.addAction("Open the demo pages", w.slots.action_open_demo)
    a.open_demo.setToolTip("Synthetic sample pages, read by small demo models that come with the app")
    m.addSeparator()
    a.open_log_folder = m.addAction("Open log folder", open_log_folder)
    m.addAction("About Hayai Desktop", w.slots.action_about)


def _toolbars(w, a: SimpleNamespace) -> None:
    """The main toolbar (actions) and, on a row of its own, the reading settings' boxes."""
    tb = QToolBar("Main", w)
    tb.setObjectName("main_toolbar")
    w.addToolBar(tb)
    tb.addActions([a.open_folder, a.save])
    tb.addSeparator()
    tb.addActions([a.prev_page, a.next_page])
    tb.addSeparator()
    tb.addActions([a.run_page, a.run_all, a.cancel, a.draw])
    tb.addSeparator()
    bar = w.reading_settings = ReadingSettings(w, w)  # budget, device, precision, order
    a.patches, a.device, a.precision, a.order = bar.patches, bar.device, bar.precision, bar.order
    a.model = QComboBox()
    a.model.setToolTip("OCR model")
    a.model.setMinimumContentsLength(14)
    a.detector = QComboBox()
    a.detector.setToolTip("Text / bubble detector")
    a.detector.setMinimumContentsLength(14)
    # the reading settings get a row of their own: beside the actions they overflowed a 1280 px
    # screen and hid the detector, the reading order and the page-view toggle behind "»"
    settings_tb = QToolBar("Reading settings", w)
    settings_tb.setObjectName("settings_toolbar")
    w.addToolBarBreak()
    w.addToolBar(settings_tb)
    for label, combo in (("Budget", a.patches), ("Device", a.device), ("Precision", a.precision), ("OCR", a.model),
                         ("Detector", a.detector), ("Order", a.order)):
        settings_tb.addWidget(QLabel(f" {label} "))
        settings_tb.addWidget(combo)


def refresh_icons(w, a: SimpleNamespace | None = None) -> None:
    """(Re)paint the toolbar icons in the window's current palette (light or dark)."""
    a = a or w.act
    for name in icons.ICON_NAMES:
        if hasattr(a, name):
            getattr(a, name).setIcon(icons.icon(name, w.palette()))
    if getattr(w, "translation", None) is not None:  # the Translate button, once the controller is there
        w.translation.act.toolbar.setIcon(icons.icon("translate", w.palette()))


def update_enabled(w) -> None:
    """Grey out what needs an open volume while none is open."""
    has_project = w.doc.project is not None
    for name in NEEDS_PROJECT:
        getattr(w.act, name).setEnabled(has_project)
    translation = getattr(w, "translation", None)  # built after the window's own actions
    for name in TRANSLATION_NEEDS_PROJECT if translation is not None else ():
        getattr(translation.act, name).setEnabled(has_project)
    for menu in w.act.project_menus:
        menu.setEnabled(has_project)
