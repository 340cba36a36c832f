"""The main window: page list, canvas, block panel, toolbar, worker, undo history.

Document changes go through undo commands (app.ui.editor.undo) over pure page edits
(app.core.document.edits); detection and OCR go through the worker (app.ui.reading.worker) which runs
app.core.reading.pipeline; files go through app.ui.shell.session (app.core.project.files / export).
"""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QImage, QUndoStack
from PySide6.QtWidgets import (
    QMainWindow,
    QVBoxLayout,
    QWidget,
)

from app.core.config.settings import AppSettings
from app.core.document import edits
from app.ui.common import error_text, log_bridge
from app.ui.common.dialogs import NoticeBar, Questions
from app.ui.common.messages import MessageLog, StatusLine
from app.ui.common.screens import install_dialog_fitter, place_window, scrollable_docks
from app.ui.common.widgets import breakable
from app.ui.editor.block_panel import BlockPanel
from app.ui.editor.canvas import Mode, PageView
from app.ui.editor.document_model import DocumentModel
from app.ui.editor.image_jobs import PageImages
from app.ui.editor.page_list import PageList
from app.ui.editor.undo import push_edit
from app.ui.editor.undo_keys import UndoKeyRouter
from app.ui.models.choice import ModelChoice
from app.ui.reading import device_status
from app.ui.reading.adapt_control import AdaptController
from app.ui.reading.controller import ReadingController
from app.ui.shell import actions, window_layout
from app.ui.shell.preferences import SettingsWriter
from app.ui.shell.reader_export import ReaderExporter
from app.ui.shell.session import SessionController
from app.ui.shell.window_actions import WindowActions


class MainWindow(QMainWindow):
    """Emits `run_finished(status)` when a detection/OCR run ends (tests, smoke test)."""

    run_finished = Signal(str)  # done | cancelled | failed
    page_shown = Signal(str)  # the page whose image is on the canvas

    def __init__(self, settings: AppSettings | None = None, settings_path=None):
        super().__init__()
        self._init_state(settings, settings_path)
        self._build_page_area()
        self._build_status_bar()
        self.slots = WindowActions(self)  # what each menu entry, button and shortcut does
        self.act = actions.build(self)
        self.session = SessionController(self, self.recent_menu)  # open, save, autosave, journal, lock
        self.models = ModelChoice(self, self.act.model, self.act.detector, self.banner)
        actions.update_enabled(self)
        self.doc.project_reset.connect(lambda: actions.update_enabled(self))
        self.sync_toolbar()
        window_layout.add_render(self)  # page views, style panel, mask brush, page exports
        window_layout.add_script(self)  # the Script dock, View > Messages, the order checks (F8)
        self.reader_exporter = ReaderExporter(self)  # File > Export > For mokuro readers, Reader page
        self.view.set_overlay(self.settings.overlay, self.settings.overlay_source)
        self._start_reading_worker()
        window_layout.add_translation(self)  # the Translate menu, the Memory and Consistency docks
        self._connect_editing()
        self.session.refresh_recent_menu()
        scrollable_docks(self)  # a wide dock scrolls rather than widen the window past a small screen
        place_window(self)  # run_gui restores the last geometry over this
        install_dialog_fitter()
        self.update_model_banner()

    def _init_state(self, settings: AppSettings | None, settings_path) -> None:
        """Settings, the document, the undo history, the page-image pool, run bookkeeping."""

        self.settings = settings or AppSettings()
        self.settings_path = settings_path
        self.settings_writer = SettingsWriter(self)
        self.settings_writer.failed.connect(lambda message: self.show_notice("warning", message))
        self.questions = Questions(self)  # asked over this window
        self.demo = False
        self.user_settings = None  # (settings, file) to return to when the demo opened from the menu
        self.pipeline_overrides: dict = {}  # other PipelineSettings values (tests, benchmarks)
        self.doc = DocumentModel(self)
        self.undo_stack = QUndoStack(self)
        self.current = ""  # name of the page shown
        self.images = PageImages(self)  # the pages the canvas shows, decoded off the GUI thread
        self.images.loaded.connect(self._on_image_loaded)
        self.images.failed.connect(self._on_image_failed)
        self._closing = False
        self._shut_down = False
        self.stop_timeout_ms = 30000  # at exit: the longest wait for background work (a model load)
        self.stopped_cleanly = True  # False when shutdown() left work running
        self.last_error = ""

    def _build_page_area(self) -> None:
        """The canvas under the two notice bars, the Pages and Blocks docks."""
        self.setWindowTitle("Hayai Desktop")
        self.setAcceptDrops(True)
        self.view = PageView()
        self.banner = NoticeBar()  # model / demo banner
        self.notice = NoticeBar()  # errors, re-read offers
        central = QWidget()
        lay = QVBoxLayout(central)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.banner)
        lay.addWidget(self.notice)
        lay.addWidget(self.view, 1)
        self.setCentralWidget(central)
        self.page_list = PageList()
        self.panel = BlockPanel()
        docks = [window_layout.dock(self, "Pages", self.page_list, "pages", Qt.DockWidgetArea.LeftDockWidgetArea),
                 window_layout.dock(self, "Blocks", self.panel, "blocks", Qt.DockWidgetArea.RightDockWidgetArea)]
        self.resizeDocks(docks, [210, 340], Qt.Orientation.Horizontal)
        # the Blocks dock keeps the window's full height when a dock opens at the bottom (the
        # Script view): at 1280x800 it was squeezed to three rows and wrapped its labels
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)

    def _build_status_bar(self) -> None:
        self.status_label = StatusLine("Open a folder or an archive of pages (Ctrl+O, or drop it here).")
        self.messages = MessageLog()  # every status line and notice, in full (View > Messages)
        self.messages_dock = window_layout.dock(self, "Messages", self.messages, "messages",
                                                Qt.DockWidgetArea.BottomDockWidgetArea, closable=True)
        self.messages_dock.hide()
        self.status_label.clicked.connect(self.show_messages)
        self.reading = ReadingController(self, self)  # runs, drawn boxes, re-reads, the device in use
        self.host = self.reading.host  # the reading worker's registry of live requests
        self.progress, self.device_label = self.reading.progress, self.reading.device_label
        self.adapting = AdaptController(self, self.reading, self)  # Series > Teach the OCR my corrections
        self.statusBar().addWidget(self.status_label, 1)
        self.warning_button = log_bridge.install(self)  # the app's warnings, from any thread
        self.statusBar().addPermanentWidget(self.progress)
        self.statusBar().addPermanentWidget(self.device_label)

    def _start_reading_worker(self) -> None:
        """The reading controller's run ends and findings to the window, its configuration."""
        self.reading.run_finished.connect(self.run_finished)
        self.reading.capabilities_found.connect(
            lambda caps: device_status.apply_capabilities(self.act.device, self.act.precision, caps,
                                                          self.settings.device))
        self.configure_worker()

    def jump_to_block(self, page: str, block_id: str) -> None:
        if self.doc.has_page(page):
            self.show_page(page)
            self.select_block(block_id)

    def _connect_editing(self) -> None:
        """Undo keys in the editors; the canvas, the block panel and the page list to the edits."""
        self.undo_keys = UndoKeyRouter(self)  # Ctrl+Z reaches the project's history from the editors too
        for editor in (self.panel.text_edit, self.panel.translation_edit):
            self.undo_keys.watch(editor, self.panel.typing)
        self.undo_keys.watch(self.view, self.view.inline_edit_pending)
        self.doc.page_changed.connect(self._on_page_changed)
        self.doc.page_revealed.connect(self.show_page)
        self.page_list.page_activated.connect(self.show_page)
        self.view.block_selected.connect(self._on_canvas_selection)
        self.view.box_drawn.connect(self._on_box_drawn)
        self.view.block_moved.connect(self._on_block_moved)
        self.view.text_edited.connect(lambda bid, t: self._edit_text(bid, t, self.view.overlay_source))
        self.view.reread_requested.connect(lambda bid: self.reread([bid]))
        self.view.delete_requested.connect(self.slots.action_delete)
        self.view.merge_requested.connect(self.slots.action_merge)
        self.view.kind_requested.connect(self.slots.action_set_kind)
        self.panel.block_selected.connect(lambda bid: self.view.select_block(bid) if bid else None)
        self.panel.blocks_selected.connect(self._on_panel_multi_selection)
        self.panel.text_edited.connect(lambda bid, t: self._edit_text(bid, t, "text"))
        self.panel.translation_edited.connect(lambda bid, t: self._edit_text(bid, t, "translation"))
        self.panel.restore_requested.connect(self._restore_text)
        self.panel.reorder_requested.connect(self._reorder)
        self.autosave_timer = QTimer(self, singleShot=True, interval=1500, timeout=self.autosave)
        self.undo_stack.indexChanged.connect(lambda _i: self._on_history_changed())
        self.undo_stack.cleanChanged.connect(lambda _c: None if self._closing else self.refresh_title())

    # --- settings and toolbar -------------------------------------------------------------------
    def sync_toolbar(self) -> None:
        """Show the current settings in the toolbar's boxes (after a change of settings)."""
        self.reading_settings.sync()
        self.models.fill_combos()

    def update_settings(self, **changes) -> None:
        """Change settings, store them (off the GUI thread), and reconfigure the worker."""
        self.settings = replace(self.settings, **changes).validated()
        self.settings_writer.save(self.settings, self.settings_path)
        self.configure_worker()

    def configure_worker(self) -> None:
        self.reading.configure(self.settings, self.pipeline_overrides)

    # --- reading (app.ui.reading.controller) ----------------------------------------------------
    def run_pages(self, names: list[str]) -> int:
        """Detect + read `names` in the worker; returns the request id (0 when nothing to do)."""
        return self.reading.run_pages(names)

    def _on_box_drawn(self, box) -> None:
        if self.current:
            self.reading.read_box(self.current, box)

    def reread(self, block_ids: list[str], page: str | None = None) -> None:
        page = page or self.current
        if page:
            self.reading.reread(block_ids, page)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.reading.preload_once()  # imports and model loads start in the worker at once

    # --- what the feature controllers use (app.ui.editor.port.EditorWindow) ---------------------
    @property
    def closing(self) -> bool:
        return self._closing

    def show_status(self, message: str, owner: str = "", log: bool = True) -> None:
        """The status line says `message` (in full in the Messages unless `log` is False: a
        progress count); `owner` (a key such as "export", "reading") may clear it with
        `clear_status` when it is no longer true."""
        self.status_label.setText(message)
        self.status_label.owner = owner
        if log:
            self.messages.add("status", message, owner)

    def clear_status(self, owner: str) -> None:
        """`owner`'s status line is no longer true: the line empties (another owner's stays)."""
        if self.status_label.owner == owner and owner:
            self.status_label.setText("")
            self.status_label.owner = ""

    def show_messages(self) -> None:
        """The Messages dock, open and on top, scrolled to the newest."""
        self.messages_dock.show()
        self.messages_dock.raise_()
        bar = self.messages.text.verticalScrollBar()
        bar.setValue(bar.maximum())

    def record_error(self, message: str) -> None:
        self.last_error = message

    def select_block(self, block_id: str) -> None:
        self.view.select_block(block_id)
        self.panel.select_block(block_id)

    def flush_editors(self) -> None:
        self.panel.flush()

    def update_cancel(self) -> None:
        self.act.cancel.setEnabled(self.view.mode is Mode.DRAW or self.reading.busy() or self.translation.busy())

    def update_model_banner(self) -> None:
        self.models.update_banner()

    def switch_settings(self, settings: AppSettings, settings_path, demo: bool) -> None:
        """Another settings file in use (the demo's, or back to the user's): shown and applied."""
        self.settings, self.settings_path, self.demo = settings, settings_path, demo
        self.sync_toolbar()
        self.act.overlay_actions[settings.overlay].setChecked(True)
        self.view.set_overlay(settings.overlay, settings.overlay_source)
        self.configure_worker()
        self.update_model_banner()

    # --- what the session uses (app.ui.shell.session.SessionWindow) -------------------------------
    @property
    def read_only(self) -> str | None:
        """Why the open project is not saved (another writer holds it, a newer file), or None."""
        return self.session.read_only

    def leave_project(self) -> None:
        self.reading.cancel(quiet=True)  # their results are dropped; progress hides when the last one ends
        self.translation.abandon()  # the same for a translation run
        self.undo_stack.clear()
        self.images.clear()
        self.current = ""
        self.notice.clear_all()

    def show_project(self, source: str) -> None:
        adapter_changed = self.adapting.source_opened()  # the volume's OCR adapter, if it has one
        self.configure_worker()
        if adapter_changed:
            self.reading.host.preload()  # loaded now, so the model box names it before any reading
        self.page_list.set_pages(source, self.doc.project.pages)
        self.show_page(self.doc.project.pages[0].name)

    def finish_editing(self) -> None:
        self.panel.flush()
        if self.view.inline_editor() is not None:
            self.view.inline_editor().finish(True)

    # --- pages ----------------------------------------------------------------------------------
    def show_page(self, name: str) -> None:
        """Show page `name`: its blocks at once, its image when decoded (off the GUI thread)."""
        if not self.doc.has_page(name):
            return
        if name != self.current:
            self.panel.flush()
            self.view.cancel_inline_edit()
            self.notice.clear("reread")
            self.notice.clear("page")
        self.current = name
        page = self.doc.page(name)
        self.page_list.select_page(name)
        image = self.images.get(name)
        self.view.set_image(image)
        self.view.show_page(page)
        self.panel.set_page(page)
        self.adapting.page_shown(page)
        if image is None:
            self.images.request(self.doc.source, name)
        else:
            self.page_shown.emit(name)
        self.refresh_title()

    def _on_image_loaded(self, name: str, image: QImage, w: int, h: int, latest: bool) -> None:
        if self.doc.has_page(name) and (self.doc.page(name).width, self.doc.page(name).height) != (w, h):
            self.doc.set_page_size(name, w, h)
        if name == self.current and latest:
            self.view.set_image(image)
            self.view.show_page(self.doc.page(name))
            self.page_shown.emit(name)

    def _on_image_failed(self, name: str, message: str) -> None:
        if name == self.current:
            self.show_notice("error", message, owner="page")

    def step_page(self, step: int) -> None:
        names = self.doc.page_names()
        if not names:
            return
        i = names.index(self.current) if self.current in names else 0
        self.show_page(names[max(0, min(len(names) - 1, i + step))])

    def _on_page_changed(self, name: str) -> None:
        page = self.doc.page(name)
        self.page_list.update_page(page)
        if name == self.current:
            self.view.show_page(page)
            self.panel.set_page(page)
            self.adapting.page_shown(page)
            if page.error:
                self.show_notice("error", f"{page.name}: {page.error}", owner="page")
            else:
                self.clear_notice("page")

    # --- selection --------------------------------------------------------------------------------
    def _on_canvas_selection(self, block_id: str) -> None:
        self.panel.select_block(block_id)

    def _on_panel_multi_selection(self, ids: list) -> None:
        if len(ids) > 1:
            self.view.select_block(ids[0])
            for bid in ids[1:]:
                item = self.view.block_item(bid)
                if item:
                    item.setSelected(True)

    def selected_ids(self) -> list[str]:
        ids = self.view.selected_ids() or self.panel.selected_ids()
        return ids or ([self.panel.current_id] if self.panel.current_id else [])

    def step_block(self, step: int) -> None:
        if not self.current:
            return
        blocks = self.doc.page(self.current).blocks
        if not blocks:
            return
        ids = [b.id for b in blocks]
        cur = self.panel.current_id
        i = (ids.index(cur) + step) % len(ids) if cur in ids else (0 if step > 0 else len(ids) - 1)
        self.view.select_block(ids[i])
        self.panel.select_block(ids[i])

    # --- edits (all undoable) -------------------------------------------------------------------
    def edit(self, edit, text: str, merge_key=None, page: str | None = None) -> bool:
        page = page or self.current
        if not page or not self.doc.has_page(page):
            return False
        return push_edit(self.undo_stack, self.doc, page, edit, text, merge_key)

    def _edit_text(self, block_id: str, text: str, field: str) -> None:
        if field == "translation":
            self.edit(lambda p: edits.set_translation(p, block_id, text), "edit translation",
                      ("translation", self.current, block_id))
        else:
            self.edit(lambda p: edits.set_text(p, block_id, text), "edit text", ("text", self.current, block_id))

    def _restore_text(self, block_id: str) -> None:
        self.edit(lambda p: edits.restore_text(p, block_id), "restore model text")

    def _reorder(self, ids: list) -> None:
        self.edit(lambda p: edits.reorder(p, ids), "renumber blocks")

    def _on_block_moved(self, block_id: str, box) -> None:
        name = self.current
        if self.edit(lambda p: edits.set_box(p, block_id, box), "move block"):
            order = self.doc.page(name).block(block_id).order
            self.show_notice("reread", f"Block {order} changed shape. Read it again from the page?",
                             [("Re-read block", lambda: (self.clear_notice("reread"), self.reread([block_id], name)))],
                             owner="reread")

    def show_notice(self, kind: str, message: str, buttons=(), owner: str = "") -> None:
        """Show a message over the page (and in the Messages). `owner` is who clears it when its
        cause is gone (`clear_notice(owner)`: "reading", "translation", "export", "save", ...); a new
        message of an owner replaces its last one, and a message without an owner stands until the
        next one without an owner or until closed. An error that names a terminal command to fetch
        a model offers the model manager on that model instead (app.ui.common.error_text)."""
        from html import escape

        if kind == "error":
            message, model = error_text.for_gui(message)
            if not buttons and (model or error_text.mentions_manager(message)):
                buttons = [("Open the model manager", lambda: self.models.open_manager(select=model))]
        self.messages.add(kind, message, owner)
        self.notice.post(owner, "warning" if kind == "reread" else kind, escape(breakable(message)), buttons)
        self.notice.kind = kind
        self.notice.owner = owner

    def clear_notice(self, owner: str) -> None:
        """`owner`'s notice is no longer true (its cause is gone): it goes, the one under it shows."""
        self.notice.clear(owner)

    # --- saving, autosave, closing --------------------------------------------------------------
    def is_dirty(self) -> bool:
        return self.session.is_dirty()

    def _on_history_changed(self) -> None:
        if self._closing:
            return
        self.refresh_title()
        if self.is_dirty():
            self.autosave_timer.start()

    def autosave(self) -> None:
        self.session.autosave()

    def refresh_title(self) -> None:
        src = self.doc.source
        name = src.rsplit("/", 1)[-1] if src else ""
        page = f" — {self.current}" if self.current else ""
        star = "*" if self.is_dirty() else ""
        ro = " [read-only]" if self.read_only else ""
        self.setWindowTitle(f"{star}{name}{ro}{page} — Hayai Desktop" if name else "Hayai Desktop")

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.session.open_path(paths[0])

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "act"):
            actions.refresh_icons(self)  # a light/dark switch: icons in the new text colour
        super().changeEvent(event)

    def closeEvent(self, event) -> None:
        if not self.session.confirm_close():
            event.ignore()
            return
        self.hide()  # gone at once; the wait for background work below is bounded
        self.shutdown()
        event.accept()

    def shutdown(self) -> bool:
        """At exit: stop all background work (cancel, quit, waits bounded by `stop_timeout_ms`);
        True when everything stopped. What did not (a step that cannot be interrupted) is logged,
        and `run_gui` then ends the process without waiting for it. Safe to call twice: the second
        call returns the first one's answer (waiting again would wait for every tracked thread of
        the process, another window's included)."""
        from app.ui.common.threads import stop_all
        from app.ui.shell.preferences import save_geometry

        if self._shut_down:
            return self.stopped_cleanly
        self._shut_down = True
        self._closing = True
        self.log_bridge.close()
        self.autosave_timer.stop()
        self.stopped_cleanly = stop_all(self.stop_timeout_ms, self.render_ctl.shutdown, self.reading.stop,
                                        self.translation.stop, self.page_list.stop, self.images.stop,
                                        self.reader_exporter.stop, self.script.stop,
                                        self.settings_writer.flush)
        save_geometry(self)
        self.session.close_writer()  # the journal closed, the project's lock released
        return self.stopped_cleanly
