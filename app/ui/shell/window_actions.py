"""The main window's action slots (menus, toolbar, shortcuts: wired in app.ui.shell.actions).

A mixin of MainWindow: each `action_<name>` is what the action of that name does; the document
changes go through MainWindow.edit (undoable), files through app.ui.shell.session.
"""
from __future__ import annotations

from app.core import edits
from app.ui.common.dialogs import ShortcutsDialog
from app.ui.editor.canvas import Mode
from app.ui.shell import actions, session

OVERLAY_CYCLE = ("text", "boxes", "none")


class ActionsMixin:
    """Action slots of MainWindow."""

    def action_open_folder(self) -> None:
        session.choose_and_open(self, folder=True)

    def action_open_archive(self) -> None:
        session.choose_and_open(self, folder=False)

    def action_save(self) -> bool:
        return session.save(self)

    def action_next_page(self) -> None:
        self._step_page(1)

    def action_prev_page(self) -> None:
        self._step_page(-1)

    def action_run_page(self) -> None:
        if self.current:
            self.run_pages([self.current])

    def action_run_all(self) -> None:
        """Read the pages not read yet (all of them when every page has been read: asks first,
        since that replaces corrected text; undo brings it back)."""
        if not self.doc.project:
            return
        todo = [p.name for p in self.doc.project.pages if not p.processed]
        if not todo:
            if not self.questions.reread_all(self):
                return
            todo = self.doc.page_names()
        self.run_pages(todo)

    def action_cancel(self) -> None:
        if self.view.mode is Mode.DRAW and not self.reading.busy():
            self.act.draw.setChecked(False)
            return
        self.reading.cancel()
        self.translation.cancel()
        self.status_label.setText("Cancelling…")

    def action_draw(self, on: bool) -> None:
        self.view.set_mode(Mode.DRAW if on else Mode.SELECT)
        self.act.cancel.setEnabled(on or self.reading.busy())  # Esc also leaves draw mode
        if on:
            self.status_label.setText("Draw mode: drag a box around text to read it (B or Esc to leave).")

    def action_next_block(self) -> None:
        self._step_block(1)

    def action_prev_block(self) -> None:
        self._step_block(-1)

    def action_edit_inline(self) -> None:
        ids = self.selected_ids()
        if ids:
            self.view.start_inline_edit(ids[0])

    def action_reread(self) -> None:
        self.reread(self.selected_ids())

    def action_delete(self) -> None:
        ids = self.selected_ids()
        if ids:
            self.edit(lambda p: edits.delete_blocks(p, ids), f"delete {len(ids)} block(s)")

    def action_merge(self) -> None:
        ids = self.selected_ids()
        if len(ids) > 1:
            self.edit(lambda p: edits.merge_blocks(p, ids), f"merge {len(ids)} blocks")
            self.view.select_block(ids[0])
            self.panel.select_block(ids[0])

    def action_zoom_in(self) -> None:
        self.view.zoom_by(1.25)

    def action_zoom_out(self) -> None:
        self.view.zoom_by(0.8)

    def action_fit_page(self) -> None:
        self.view.fit_page()

    def action_fit_width(self) -> None:
        self.view.fit_width()

    def action_actual_size(self) -> None:
        self.view.actual_size()

    def action_toggle_overlay(self) -> None:
        i = OVERLAY_CYCLE.index(self.settings.overlay) if self.settings.overlay in OVERLAY_CYCLE else 0
        self.set_overlay(OVERLAY_CYCLE[(i + 1) % len(OVERLAY_CYCLE)])

    def set_overlay(self, overlay: str) -> None:
        self.act.overlay_actions[overlay].setChecked(True)
        self.view.set_overlay(overlay)
        self.update_settings(overlay=overlay)

    def set_overlay_source(self, translation: bool) -> None:
        source = "translation" if translation else "text"
        self.view.set_overlay(self.view.overlay, source)
        self.update_settings(overlay_source=source)

    def action_help(self) -> None:
        from app.ui.translate.control import SHORTCUTS as TRANSLATE_SHORTCUTS

        ShortcutsDialog(actions.SHORTCUTS + TRANSLATE_SHORTCUTS, self).exec()

    def action_open_demo(self) -> None:
        from app.ui.shell import demo

        demo.open_demo(self, session.open_path)

    def action_about(self) -> None:
        from app.ui.shell.about import AboutDialog

        loaded = self.device_label.text()
        device = (loaded if loaded not in ("", "Models not loaded", "Loading models…") else
                  f"models not loaded yet; the device setting is {self.settings.device} "
                  "(Auto: CUDA when a GPU is usable, else the CPU)")
        AboutDialog(device, self).exec()

    def action_export(self, fmt: str, scope: str, translations: bool) -> None:
        session.export_dialog(self, fmt, scope, translations)

    def action_import_txt(self, into: str) -> None:
        session.import_dialog(self, into)

    def action_export_script(self, fmt: str) -> None:
        session.export_script_dialog(self, fmt)

    def action_import_script(self) -> None:
        session.import_script_dialog(self)

    def action_model_manager(self) -> None:
        session.open_model_manager(self)

    def action_choose_model_folder(self) -> None:
        session.choose_model_folder(self)

    def action_choose_detector(self) -> None:
        session.choose_detector(self)
