"""What the main window's actions do (menus, toolbar, shortcuts: wired in app.ui.shell.actions).

`WindowActions(window)` is held by the window as `slots`: each `action_<name>` is what the action
of that name does. The document changes go through the window's `edit` (undoable), files through
its SessionController (app.ui.shell.session), models through its ModelChoice (app.ui.models),
runs through its reading and translation controllers.
"""
from __future__ import annotations

from app.core.document import edits
from app.ui.common.dialogs import ShortcutsDialog
from app.ui.editor.canvas import HAND_KIND_LABELS, Mode
from app.ui.shell import actions

OVERLAY_CYCLE = ("text", "boxes", "none")


class WindowActions:
    """The action slots of the main window (the shell: it composes the rooms)."""

    def __init__(self, window):
        self.window = window

    def action_open_folder(self) -> None:
        self.window.session.choose_and_open(folder=True)

    def action_open_archive(self) -> None:
        self.window.session.choose_and_open(folder=False)

    def action_save(self) -> bool:
        if not self.window.session.save():
            return False
        self.window.adapting.look_ahead()  # the corrections looked at now, not when teaching
        return True

    def action_next_page(self) -> None:
        self.window.step_page(1)

    def action_prev_page(self) -> None:
        self.window.step_page(-1)

    def action_run_page(self) -> None:
        if self.window.current:
            self.window.run_pages([self.window.current])

    def action_run_all(self) -> None:
        """Read the pages not read yet (all of them when every page has been read: asks first,
        since that replaces corrected text; undo brings it back)."""
        if not self.window.doc.project:
            return
        todo = [p.name for p in self.window.doc.project.pages if not p.processed]
        if not todo:
            if not self.window.questions.reread_all():
                return
            todo = self.window.doc.page_names()
        self.window.run_pages(todo)

    def action_cancel(self) -> None:
        if self.window.view.mode is Mode.DRAW and not self.window.reading.busy():
            self.window.act.draw.setChecked(False)
            return
        self.window.reading.cancel()
        self.window.translation.cancel()
        self.window.show_status("Cancelling…")

    def action_draw(self, on: bool) -> None:
        self.window.view.set_mode(Mode.DRAW if on else Mode.SELECT)
        self.window.act.cancel.setEnabled(on or self.window.reading.busy())  # Esc also leaves draw mode
        if on:
            self.window.show_status("Draw mode: drag a box around text to read it (B or Esc to leave).")

    def action_next_block(self) -> None:
        self.window.step_block(1)

    def action_prev_block(self) -> None:
        self.window.step_block(-1)

    def action_edit_inline(self) -> None:
        ids = self.window.selected_ids()
        if ids:
            self.window.view.start_inline_edit(ids[0])

    def action_reread(self) -> None:
        self.window.reread(self.window.selected_ids())

    def action_delete(self) -> None:
        ids = self.window.selected_ids()
        if ids:
            self.window.edit(lambda p: edits.delete_blocks(p, ids), f"delete {len(ids)} block(s)")

    def action_set_kind(self, kind: str) -> None:
        """The selected blocks become bubbles, captions or sound effects (undoable)."""
        ids = self.window.selected_ids()
        if ids:
            self.window.edit(lambda p: edits.set_kind(p, ids, kind), f"{len(ids)} block(s) as {HAND_KIND_LABELS[kind].lower()}")

    def action_merge(self) -> None:
        ids = self.window.selected_ids()
        if len(ids) > 1:
            self.window.edit(lambda p: edits.merge_blocks(p, ids), f"merge {len(ids)} blocks")
            self.window.view.select_block(ids[0])
            self.window.panel.select_block(ids[0])

    def action_zoom_in(self) -> None:
        self.window.view.zoom_by(1.25)

    def action_zoom_out(self) -> None:
        self.window.view.zoom_by(0.8)

    def action_fit_page(self) -> None:
        self.window.view.fit_page()

    def action_fit_width(self) -> None:
        self.window.view.fit_width()

    def action_actual_size(self) -> None:
        self.window.view.actual_size()

    def action_toggle_overlay(self) -> None:
        i = OVERLAY_CYCLE.index(self.window.settings.overlay) if self.window.settings.overlay in OVERLAY_CYCLE else 0
        self.set_overlay(OVERLAY_CYCLE[(i + 1) % len(OVERLAY_CYCLE)])

    def set_overlay(self, overlay: str) -> None:
        self.window.act.overlay_actions[overlay].setChecked(True)
        self.window.view.set_overlay(overlay)
        self.window.update_settings(overlay=overlay)

    def set_overlay_source(self, translation: bool) -> None:
        source = "translation" if translation else "text"
        self.window.view.set_overlay(self.window.view.overlay, source)
        self.window.update_settings(overlay_source=source)

    def action_help(self) -> None:
        from app.ui.reading.order_check import SHORTCUTS as ORDER_SHORTCUTS
        from app.ui.translate.actions import SHORTCUTS as TRANSLATE_SHORTCUTS

        ShortcutsDialog(actions.SHORTCUTS + ORDER_SHORTCUTS + TRANSLATE_SHORTCUTS, self.window).exec()

    def action_open_demo(self) -> None:
        from app.ui.shell import demo

        demo.open_demo(self.window, self.window.session.open_path)

    def action_about(self) -> None:
        from app.ui.shell.about import AboutDialog

        loaded = self.window.device_label.text()
        device = (loaded if loaded not in ("", "Models not loaded", "Loading models…") else
                  f"models not loaded yet; the device setting is {self.window.settings.device} "
                  "(Auto: CUDA when a GPU is usable, else the CPU)")
        AboutDialog(device, self.window).exec()

    def action_export(self, fmt: str, scope: str, translations: bool) -> None:
        self.window.session.export_dialog(fmt, scope, translations)

    def action_import_txt(self, into: str) -> None:
        self.window.session.import_dialog(into)

    def action_export_script(self, fmt: str) -> None:
        self.window.session.export_script_dialog(fmt)

    def action_import_script(self) -> None:
        self.window.session.import_script_dialog()

    def action_model_manager(self) -> None:
        self.window.models.open_manager()

    def action_choose_model_folder(self) -> None:
        self.window.models.choose_model_folder()

    def action_choose_detector(self) -> None:
        self.window.models.choose_detector()
