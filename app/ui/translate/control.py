"""Machine translation in the window: the Translate menu and toolbar button, the settings and
glossary dialogs, runs on the translation worker with progress / cancel / resume, results
applied as undoable edits (and autosaved at once), the block panel's machine translation.

`TranslationControl(window)` owns all of it; the window only creates it and forwards Cancel.
Nothing is sent anywhere before the user chose a backend in Translation settings: the first
Translate opens that dialog.
"""
from __future__ import annotations

import time
from types import SimpleNamespace

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence, QUndoCommand
from PySide6.QtWidgets import QLabel, QMessageBox, QProgressBar, QStyle, QToolBar

from app.core import edits
from app.errors import UserError
from app.translate.base import GlossaryEntry
from app.ui.translate.worker import TranslateHost

SHORTCUTS = [
    ("translate_page", "Translate this page", "Ctrl+T"),
    ("translate_all", "Translate all pages (the ones not translated yet)", "Ctrl+Shift+T"),
]


class GlossaryCommand(QUndoCommand):
    """The project's glossary replaced (undoable like page edits)."""

    def __init__(self, doc, before: list, after: list):
        super().__init__("edit glossary")
        self.doc, self.project, self.before, self.after = doc, doc.project, list(before), list(after)

    def redo(self) -> None:
        if self.doc.project is self.project:
            self.doc.set_glossary(self.after)

    def undo(self) -> None:
        if self.doc.project is self.project:
            self.doc.set_glossary(self.before)


class TranslationControl(QObject):
    run_finished = Signal(str)  # done | cancelled | failed (tests)
    probe_finished = Signal(object)  # list of lines, or an error message

    def __init__(self, w):
        super().__init__(w)
        self.w = w
        self.host = TranslateHost(self)
        worker = self.host.worker
        worker.page_translated.connect(self._on_page)
        worker.progressed.connect(self._on_progress)
        worker.probed.connect(self._on_probed)
        worker.failed.connect(self._on_failed)
        self.host.request_finished.connect(self._on_finished)
        self.run_id = 0
        self._run: dict = {}
        self._dialog = None
        self.last_error = ""
        self.status = QLabel()
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(160)
        self.progress.setFormat("translating %v/%m")
        for widget in (self.status, self.progress):
            widget.hide()
            w.statusBar().addPermanentWidget(widget)
        self.act = self._build_actions()
        w.panel.translation_restore_requested.connect(self._restore)
        from app.ui.translate.series_control import SeriesControl

        self.series = SeriesControl(w, self)  # series file, translation memory, Memory and Consistency docks

    # --- menus ------------------------------------------------------------------------------
    def _build_actions(self) -> SimpleNamespace:
        w = self.w
        a = SimpleNamespace()
        for name, label, keys in SHORTCUTS:
            act = QAction(label, w)
            act.setShortcut(QKeySequence(keys))
            setattr(a, name, act)
        a.translate_page.setText("Translate page")
        a.translate_page.setToolTip("Machine-translate this page (Ctrl+T)")
        a.translate_page.setIcon(w.style().standardIcon(QStyle.StandardPixmap.SP_BrowserReload))
        a.translate_page.triggered.connect(self.translate_current)
        a.translate_all.triggered.connect(self.translate_all)
        a.retranslate_page = QAction("Translate page again, replacing my own translations", w)
        a.retranslate_page.triggered.connect(lambda: self.translate_current(replace_edited=True))
        a.cancel = QAction("Cancel translation", w)
        a.cancel.setEnabled(False)
        a.cancel.triggered.connect(self.cancel)
        a.settings = QAction("Translation settings…", w)
        a.settings.triggered.connect(self.open_settings)
        a.glossary = QAction("Glossary…", w)
        a.glossary.triggered.connect(self.open_glossary)
        a.add_term = QAction("Add the selected block to the glossary…", w)
        a.add_term.triggered.connect(lambda: self.open_glossary(from_block=True))
        menu = w.menuBar().addMenu("&Translate")
        w.menuBar().insertMenu(w.menuBar().actions()[-2], menu)  # before Models / Help
        menu.addActions([a.translate_page, a.translate_all, a.retranslate_page, a.cancel])
        menu.addSeparator()
        menu.addActions([a.glossary, a.add_term, a.settings])
        toolbar = w.findChild(QToolBar, "main_toolbar")
        if toolbar is not None:
            toolbar.insertAction(toolbar.actions()[toolbar.actions().index(w.act.draw) + 1], a.translate_page)
        return a

    # --- settings and glossary --------------------------------------------------------------
    def open_settings(self) -> bool:
        """The settings dialog; True when the user pressed OK."""
        from app.core import keys
        from app.ui.translate.settings_dialog import TranslationSettingsDialog

        dialog = TranslationSettingsDialog(self.w.settings, _key_state, self.w)
        dialog.test_button.clicked.connect(lambda: self.probe(dialog.translator_settings(), dialog.typed_key()))
        self._dialog = dialog
        self.probe_finished.connect(self._show_probe)
        try:
            if "translation_settings" in self.w.questions.answers:  # tests: (values, key) or None = Cancel
                answer = self.w.questions.answers["translation_settings"]
                ok = answer is not None
                values, key = answer if ok else ({}, None)
            else:
                ok = dialog.exec() == dialog.DialogCode.Accepted
                values, key = dialog.values(), dialog.typed_key()
        finally:
            self.probe_finished.disconnect(self._show_probe)
            self._dialog = None
        if not ok:
            return False
        self.w.update_settings(**values)
        if key:
            where = keys.store_key(values["translation_provider"], values["translation_base_url"], key)
            if where == "file":
                self.w.show_notice("warning", f"No system keyring is available: the API key was saved in "
                                   f"{keys.key_file()}, readable only by you.")
        self.host.worker.close_translator() if not self.host.busy() else None
        return True

    def probe(self, settings, key: str | None = None) -> int:
        """Test connection (on the worker): lists the models, or says why it failed."""
        rid = self.host.submit("probe", settings, key=key)
        if self._dialog is not None:
            self._dialog.test_result.setText("Connecting…")
        return rid

    def _on_probed(self, rid: int, lines: list) -> None:
        if self.host.wanted(rid):
            self.probe_finished.emit(list(lines))

    def _show_probe(self, result) -> None:
        if self._dialog is None:
            return
        if isinstance(result, list):
            self._dialog.show_models(result)
        else:
            self._dialog.show_error(str(result))

    def _file_glossary(self) -> tuple[list, str]:
        from app.translate.glossary import load_glossary

        path = self.w.settings.translation_glossary_file
        if not path:
            return [], ""
        try:
            entries = load_glossary(path)
        except UserError as exc:
            return [], f"Glossary file not used: {exc}"
        return entries, f"Also used: {path} ({len(entries)} term(s), set in Translation settings)."

    def open_glossary(self, from_block: bool = False) -> None:
        from app.ui.translate.glossary_dialog import GlossaryDialog

        w = self.w
        if w.doc.project is None:
            return
        block_text = ""
        ids = w.selected_ids()
        if ids and w.current:
            block = w.doc.page(w.current).block(ids[0])
            block_text = block.display_text if block else ""
        _entries, note = self._file_glossary()
        dialog = GlossaryDialog(w.doc.project.glossary, note, block_text, w)
        if from_block and block_text:
            dialog.add_row(GlossaryEntry(block_text, ""))
        self.glossary_dialog = dialog
        accepted = (dialog.exec() == dialog.DialogCode.Accepted) if "glossary" not in w.questions.answers \
            else w.questions.answers["glossary"](dialog)
        self.glossary_dialog = None
        if accepted:
            self.set_glossary(dialog.entries())

    def set_glossary(self, entries) -> None:
        project = self.w.doc.project
        if project is not None and list(entries) != list(project.glossary):
            self.w.undo_stack.push(GlossaryCommand(self.w.doc, project.glossary, list(entries)))

    # --- runs -------------------------------------------------------------------------------
    def busy(self) -> bool:
        return self.host.busy("pages")

    def translate_current(self, replace_edited: bool = False) -> int:
        w = self.w
        if not w.current:
            return 0
        page = w.doc.page(w.current)
        if not page.processed:
            w.show_notice("info", f"{page.name} has not been read yet: read it first (Ctrl+R), then translate.")
            return 0
        return self.start([w.current], retranslate=page.translated or replace_edited, replace_edited=replace_edited)

    def translate_all(self) -> int:
        from app.core.translation import pages_to_translate

        w = self.w
        if w.doc.project is None:
            return 0
        todo = pages_to_translate(w.doc.project)
        todo = [n for n in todo if w.doc.page(n).processed]
        if not todo:
            if not any(p.processed for p in w.doc.project.pages):
                w.show_notice("info", "No page has been read yet: read the pages first (Ctrl+Shift+R).")
                return 0
            if not self._ask_again():
                return 0
            return self.start([p.name for p in w.doc.project.pages if p.processed], retranslate=True)
        return self.start(todo)

    def _ask_again(self) -> bool:
        answers = self.w.questions.answers
        if "translate_again" in answers:
            return bool(answers["translate_again"])
        answer = QMessageBox.question(
            self.w, "Translate all pages again?",
            "Every page that has been read is translated already. Translate them all again? Translations "
            "you edited by hand are kept (Translate > Translate page again replaces them, page by page).",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def start(self, names: list[str], retranslate: bool = False, replace_edited: bool = False) -> int:
        """Translate `names` on the worker; returns the request id (0 when nothing started)."""
        from app.core.document import Project
        from app.core.translation import TranslateOptions, translator_settings_from
        from app.translate.glossary import merge

        w = self.w
        if not names or w.doc.project is None:
            return 0
        if self.busy():
            w.show_notice("info", "A translation is running: cancel it (Esc) or wait for it to finish.")
            return 0
        if not w.settings.translation_provider and not self.open_settings():
            return 0  # no backend chosen: nothing is sent anywhere
        w.panel.flush()
        project = w.doc.project
        snapshot = Project(source=project.source, pages=list(project.pages), order=project.order,
                           glossary=list(project.glossary))
        file_entries, note = self._file_glossary()
        if note.startswith("Glossary file not used"):
            w.show_notice("warning", note)
        settings = translator_settings_from(w.settings)
        options = TranslateOptions(context_pages=settings.context_pages, retranslate=retranslate,
                                   replace_edited=replace_edited)
        rid = self.host.submit("pages", settings, project=snapshot, names=tuple(names),
                               glossary=tuple(merge(project.glossary, file_entries)), options=options,
                               tm=self.series.run_memory())
        self.run_id = rid
        self._run = {"names": list(names), "started": time.monotonic(), "done": 0, "blocks": 0, "problems": [],
                     "replace_edited": replace_edited}
        self.progress.setRange(0, len(names))
        self.progress.setValue(0)
        self.progress.show()
        self.status.setText(f"Translating {len(names)} page(s)…")
        self.status.show()
        self.act.cancel.setEnabled(True)
        w.act.cancel.setEnabled(True)
        return rid

    def cancel(self) -> None:
        if self.busy():
            self.host.cancel()
            self.status.setText("Cancelling translation…")

    def abandon(self) -> None:
        """Another source is open: cancel the run, quietly. What it still sends is dropped (its
        pages are not this source's, even when their names match); its end only hides the progress."""
        if self.busy():
            self.host.cancel(quiet=True)

    def _live(self, rid: int) -> bool:
        """Results of `rid` are applied: the current run, still wanted (not cancelled, not a run
        of the source open before), the window open. Results that arrive after Cancel are dropped,
        as the reading worker's are."""
        return rid == self.run_id and self.host.wanted(rid) and not self.w._closing

    def _on_progress(self, rid: int, p) -> None:
        if not self._live(rid):
            return
        self.progress.setRange(0, max(1, p.pages_total))
        self.progress.setValue(p.pages_done)
        failed = f" · {p.failed} with problems" if p.failed else ""
        tokens = f" · page {p.current}: {p.tokens} tokens" if p.current and p.tokens else ""
        self.status.setText(f"Translating {p.pages_done}/{p.pages_total}{failed}{tokens}")

    def _on_page(self, rid: int, outcome) -> None:
        w = self.w
        if not self._live(rid) or not w.doc.has_page(outcome.name):
            return
        run = self._run
        run["done"] += 1
        if outcome.texts or outcome.untranslated:
            texts, name, rep = dict(outcome.texts), outcome.name, run["replace_edited"]
            echoes = dict(outcome.untranslated)
            from app.core.tm import LABEL

            filled = {k: v for k, v in texts.items()  # from the translation memory: marked so
                      if (b := outcome.page.block(k)) is not None and b.translator == LABEL}
            asked = {k: v for k, v in texts.items() if k not in filled}
            w.edit(lambda p: edits.apply_machine_translations(
                edits.apply_machine_translations(p, filled, LABEL, rep), asked, outcome.translator, rep,
                untranslated=echoes), f"translate {name}", page=name)
            run["blocks"] += len(texts)
            w.autosave()  # what arrived is on disk at once
        if outcome.problem:
            run["problems"].append(f"{outcome.name}: {outcome.summary()}")

    def _on_failed(self, rid: int, message: str) -> None:
        ctx = self.host.context(rid)
        if ctx is not None and ctx["kind"] == "probe":
            if self.host.wanted(rid):
                self.probe_finished.emit(message)
            return
        if self._live(rid):
            self.last_error = message
            w = self.w
            w.show_notice("error", message)

    def _on_finished(self, rid: int, status: str, ctx: dict) -> None:
        """From the host's registry, once the worker is done with `rid` (wanted or not)."""
        if rid != self.run_id or self.w._closing:
            return
        run = self._run
        self.progress.hide()
        self.act.cancel.setEnabled(False)
        self.w.act.cancel.setEnabled(self.w.host.busy())
        if ctx.get("quiet"):  # a run of the source that was open before this one
            self.status.hide()
            self.run_id = 0
            self.run_finished.emit(status)
            return
        secs = time.monotonic() - run.get("started", time.monotonic())
        label = {"done": "Translated", "cancelled": "Translation cancelled", "failed": "Translation failed"}[status]
        self.status.setText(f"{label}: {run.get('blocks', 0)} block(s) on {run.get('done', 0)} page(s) in {secs:.1f} s")
        problems = run.get("problems", [])
        if problems:
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            self.w.show_notice("warning", "Some blocks were not translated; Translate all resumes with them. "
                               + " · ".join(problems[:3]) + more)
        self.run_id = 0
        self.run_finished.emit(status)

    def _restore(self, block_id: str) -> None:
        self.w.edit(lambda p: edits.restore_translation(p, block_id), "restore machine translation")

    def stop(self, timeout_ms: int = 30000) -> bool:
        """At exit: cancel and stop the translation thread, waiting at most `timeout_ms`."""
        return self.host.stop(timeout_ms) and self.series.stop(timeout_ms)


def _key_state(provider: str, base_url: str) -> str:
    """Where the key for this server comes from now (never the key itself)."""
    from app.core import keys

    found = keys.find_key(provider, base_url)
    keyring_note = ("stored in the system keyring" if keys.keyring_available() else
                    f"no system keyring here: a key typed above is saved in {keys.key_file()}, readable only by you")
    if found.where.startswith("env:"):
        return f"Using the key in ${found.where[4:]} (the field above is ignored while it is set)."
    if found.where == "keyring":
        return "A key is stored in the system keyring; type a new one to replace it."
    if found.where == "file":
        return f"A key is stored in {keys.key_file()} (readable only by you); type a new one to replace it."
    var = keys.env_var_for(provider, base_url)
    env = f" or set ${var}" if var else ""
    return f"No key yet: type one{env} ({keyring_note}). Local servers need none."
