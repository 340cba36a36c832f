"""Machine translation in the window: the Translate menu and toolbar button, the settings and
glossary dialogs, runs on the translation worker with progress / cancel / resume, results
applied as undoable edits (and autosaved at once), the block panel's machine translation.

`TranslationController(window)` owns all of it. It talks to the window through the document model
and `TranslationWindow` (app.ui.editor.port's EditorWindow and the few things translation adds);
the window places its menu, toolbar button and status widgets, and forwards Cancel.
Nothing is sent anywhere before the user chose a backend in Translation settings: the first
Translate opens that dialog.
"""
from __future__ import annotations

import time
from typing import Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel, QProgressBar

from app.core.document import edits
from app.errors import UserError
from app.translate.base import GlossaryEntry
from app.ui.editor.port import EditorWindow
from app.ui.editor.undo import ProjectValueCommand
from app.ui.translate.actions import build_actions
from app.ui.translate.actions import key_state as _key_state
from app.ui.translate.report import ReportNotice
from app.ui.translate.undo import SelectionRunCommand
from app.ui.translate.worker import TranslateHost


class TranslationWindow(EditorWindow, Protocol):
    """What translation uses of the window besides EditorWindow."""

    questions: object  # app.ui.common.dialogs.Questions: the questions, asked over the window
    undo_stack: object  # QUndoStack: the glossary's undoable changes

    def update_settings(self, **changes) -> None: ...

    def selected_ids(self) -> list[str]: ...

    def autosave(self) -> None: ...

    def jump_to_block(self, page: str, block_id: str) -> None:
        """Show page `page` with `block_id` selected (a row of the translation report)."""


class TranslationController(QObject):
    run_finished = Signal(str)  # done | cancelled | failed (tests)
    probe_finished = Signal(object)  # list of lines, or an error message

    def __init__(self, w: TranslationWindow, parent=None):
        super().__init__(parent)
        self.window = w
        self._insecure_ok: set[str] = set()  # servers the user let a key reach over plain http://
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
        self.report = ReportNotice(w, self._parent_widget)  # the last run's blocks left untranslated
        self.status = QLabel()
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(160)
        self.progress.setFormat("translating %v/%m")
        for widget in (self.status, self.progress):
            widget.hide()
        self.status_widgets = (self.status, self.progress)  # the window puts them in its status bar
        self.act = build_actions(self)
        # the blocks chosen now, as (page name, block id): the window sets it (the Script view's
        # rows when the selection was made there); by default the page's selected blocks
        self.selection = lambda: [(w.current, bid) for bid in w.selected_ids()] if w.current else []
        from app.ui.translate.series_control import SeriesControl

        self.series = SeriesControl(w, self)  # series file, translation memory, Memory and Consistency docks

    # --- menus ------------------------------------------------------------------------------
    # --- settings and glossary --------------------------------------------------------------
    def open_settings(self) -> bool:
        """The settings dialog; True when the user pressed OK."""
        from app.core.config import api_keys
        from app.ui.translate.settings_dialog import TranslationSettingsDialog

        dialog = TranslationSettingsDialog(self.window.settings, _key_state, self._parent_widget())
        dialog.test_button.clicked.connect(lambda: self.probe(dialog.translator_settings(), dialog.typed_key()))
        self._dialog = dialog
        self.probe_finished.connect(self._show_probe)
        try:
            if "translation_settings" in self.window.questions.answers:  # tests: (values, key) or None = Cancel
                answer = self.window.questions.answers["translation_settings"]
                ok = answer is not None
                values, key = answer if ok else ({}, None)
            else:
                ok = dialog.exec() == dialog.DialogCode.Accepted
                values, key = dialog.values(), dialog.typed_key()
                tied = dialog.tied_env()
                if ok and tied is not None:
                    api_keys.tie_env_key(values["translation_provider"], values["translation_base_url"], tied)
        finally:
            self.probe_finished.disconnect(self._show_probe)
            self._dialog = None
        if not ok:
            return False
        self.window.update_settings(**values)
        if key:
            where = api_keys.store_key(values["translation_provider"], values["translation_base_url"], key)
            if where == "file":
                self.window.show_notice("warning", f"No system keyring is available: the API key was saved in "
                                   f"{api_keys.key_file()}, readable only by you.")
        self.host.worker.close_translator() if not self.host.busy() else None
        return True

    def key_may_go(self, settings, key: str | None = None) -> bool:
        """A key is never sent in clear to another machine without the user's yes (asked once per
        server while the app runs; app.core.config.api_keys.check_transport)."""
        from app.core.config import api_keys
        from app.translate.base import server_label

        if settings.provider == "offline":
            return True
        if key is None:
            key = api_keys.find_key(settings.provider, settings.base_url).key
        if not api_keys.insecure_url(settings.provider, settings.base_url, key):
            return True
        server = server_label(settings.base_url)
        if server in self._insecure_ok:
            return True
        if self.window.questions.insecure_key(server):
            self._insecure_ok.add(server)
            return True
        self.window.show_notice("warning", f"Nothing was sent to {server}: the API key would travel unencrypted "
                           "(http://). Use an https:// address in Translation settings.")
        return False

    def probe(self, settings, key: str | None = None) -> int:
        """Test connection (on the worker): lists the models, or says why it failed."""
        if not self.key_may_go(settings, key):
            return 0
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

        path = self.window.settings.translation_glossary_file
        if not path:
            return [], ""
        try:
            entries = load_glossary(path)
        except UserError as exc:
            return [], f"Glossary file not used: {exc}"
        return entries, f"Also used: {path} ({len(entries)} term(s), set in Translation settings)."

    def open_glossary(self, from_block: bool = False) -> None:
        from app.ui.translate.glossary_dialog import GlossaryDialog

        w = self.window
        if w.doc.project is None:
            return
        block_text = ""
        ids = w.selected_ids()
        if ids and w.current:
            block = w.doc.page(w.current).block(ids[0])
            block_text = block.display_text if block else ""
        _entries, note = self._file_glossary()
        dialog = GlossaryDialog(w.doc.project.glossary, note, block_text, self._parent_widget())
        if from_block and block_text:
            dialog.add_row(GlossaryEntry(block_text, ""))
        self.glossary_dialog = dialog
        accepted = (dialog.exec() == dialog.DialogCode.Accepted) if "glossary" not in w.questions.answers \
            else w.questions.answers["glossary"](dialog)
        self.glossary_dialog = None
        if accepted:
            self.set_glossary(dialog.entries())

    def set_memory(self, memory, text: str = "edit story memory") -> None:
        project = self.window.doc.project
        if project is not None and memory != project.memory:
            doc = self.window.doc
            self.window.undo_stack.push(ProjectValueCommand(doc, doc.set_memory, project.memory, memory, text))

    def set_glossary(self, entries) -> None:
        project = self.window.doc.project
        if project is not None and list(entries) != list(project.glossary):
            doc = self.window.doc
            self.window.undo_stack.push(ProjectValueCommand(doc, doc.set_glossary, list(project.glossary),
                                                            list(entries), "edit glossary"))

    # --- runs -------------------------------------------------------------------------------
    def busy(self) -> bool:
        return self.host.busy("pages")

    def translate_current(self, replace_edited: bool = False) -> int:
        w = self.window
        if not w.current:
            return 0
        page = w.doc.page(w.current)
        if not page.processed:
            w.show_notice("info", f"{page.name} has not been read yet: read it first (Ctrl+R), then translate.")
            return 0
        return self.start([w.current], retranslate=page.translated or replace_edited, replace_edited=replace_edited)

    def translate_all(self) -> int:
        from app.core.translation.run import pages_to_translate

        w = self.window
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

    def translate_blocks(self, keys=None, replace_edited: bool = False) -> int:
        """Translate only the chosen blocks ((page name, block id) pairs; default `selection()`),
        with the same stage, context and glossary as a page run; the other blocks of their pages
        stay as they are. Their translations are one undo step."""
        w = self.window
        if w.doc.project is None:
            return 0
        keys = list(self.selection() if keys is None else keys)
        chosen, unread = [], []
        for name, bid in keys:
            if not w.doc.has_page(name):
                continue
            page = w.doc.page(name)
            block = page.block(bid)
            if block is None or not block.display_text.strip():
                continue
            (chosen if page.processed else unread).append((name, block))
        if not chosen:
            w.show_notice("info", "Select the blocks to translate first: on the page, in the block list, or rows "
                          "of the Script view (View > Script)." if not unread else
                          f"{unread[0][0]} has not been read yet: read it first (Ctrl+R), then translate.")
            return 0
        if not replace_edited and all(b.translation_edited for _n, b in chosen):
            w.show_notice("info", "The selected block(s) have translations of your own, which a run keeps: use "
                          "Translate > Translate the selected blocks, replacing my own translations.")
            return 0
        order = {n: i for i, n in enumerate(w.doc.page_names())}
        names = sorted({n for n, _b in chosen}, key=order.get)
        return self.start(names, retranslate=True, replace_edited=replace_edited,
                          blocks=frozenset((n, b.id) for n, b in chosen))

    def translate_page_range(self, answer=None) -> int:
        """Translate > Translate pages…: a range of pages (3-7, 1,4,9-12), those not translated
        yet, or all of them again; `answer` (range text, again, replace) skips the dialog."""
        from app.core.translation.run import pages_to_translate

        w = self.window
        if w.doc.project is None or not w.doc.page_names():
            return 0
        names = w.doc.page_names()
        if answer is None:
            answer = self.window.questions.answers.get("translate_pages") if "translate_pages" in self.window.questions.answers \
                else self._ask_pages(names)
        if answer is None:
            return 0
        text, again, replace_edited = answer
        from app.core.translation.run import parse_page_range

        try:
            wanted = [names[n - 1] for n in parse_page_range(text, len(names))]
        except UserError as exc:
            w.show_notice("warning", f"Translate pages: {exc}")
            return 0
        read = [n for n in wanted if w.doc.page(n).processed]
        if not read:
            w.show_notice("info", f"Pages {text} have not been read yet: read them first (Ctrl+Shift+R).")
            return 0
        todo = read if again or replace_edited else pages_to_translate(w.doc.project, read)
        if not todo:
            w.show_notice("info", f"Pages {text} are translated already (tick \"Translate pages translated "
                          "already again\" to send them again).")
            return 0
        return self.start(todo, retranslate=bool(again or replace_edited), replace_edited=replace_edited)

    def _ask_pages(self, names: list[str]):
        from app.ui.translate.pages_dialog import PagesDialog

        current = names.index(self.window.current) + 1 if self.window.current in names else 1
        dialog = PagesDialog(len(names), current, self._parent_widget())
        if dialog.exec() != dialog.DialogCode.Accepted:
            return None
        return dialog.answer()

    def _parent_widget(self):
        """The dialogs' parent: the window the controller belongs to."""
        return self.parent()

    def _ask_again(self) -> bool:
        return self.window.questions.translate_again()

    def start(self, names: list[str], retranslate: bool = False, replace_edited: bool = False,
              blocks: frozenset | None = None) -> int:
        """Translate `names` on the worker (only `blocks`, (page, block id) pairs, when given);
        returns the request id (0 when nothing started)."""
        from app.core.document.types import Project
        from app.core.translation.run import TranslateOptions, translator_settings_from
        from app.translate.glossary import merge

        w = self.window
        if not names or w.doc.project is None:
            return 0
        if self.busy():
            w.show_notice("info", "A translation is running: cancel it (Esc) or wait for it to finish.")
            return 0
        if not w.settings.translation_provider and not self.open_settings():
            return 0  # no backend chosen: nothing is sent anywhere
        w.flush_editors()
        project = w.doc.project
        snapshot = Project(source=project.source, pages=list(project.pages), order=project.order,
                           glossary=list(project.glossary), memory=project.memory)
        file_entries, note = self._file_glossary()
        if note.startswith("Glossary file not used"):
            w.show_notice("warning", note)
        settings = translator_settings_from(w.settings)
        if not self.key_may_go(settings):
            return 0
        options = TranslateOptions(context_pages=settings.context_pages, retranslate=retranslate,
                                   replace_edited=replace_edited, memory=settings.memory, blocks=blocks)
        rid = self.host.submit("pages", settings, project=snapshot, names=tuple(names),
                               glossary=tuple(merge(project.glossary, file_entries)), options=options,
                               tm=self.series.run_memory())
        self.run_id = rid
        self._run = {"names": list(names), "started": time.monotonic(), "done": 0, "blocks": 0, "problems": [],
                     "replace_edited": replace_edited, "selection": blocks is not None}
        self.progress.setRange(0, len(names))
        self.progress.setValue(0)
        self.progress.show()
        self.status.setText(f"Translating {len(blocks)} block(s)…" if blocks is not None else
                            f"Translating {len(names)} page(s)…")
        self.status.show()
        self.act.cancel.setEnabled(True)
        w.update_cancel()
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
        return rid == self.run_id and self.host.wanted(rid) and not self.window.closing

    def _on_progress(self, rid: int, p) -> None:
        if not self._live(rid):
            return
        self.progress.setRange(0, max(1, p.pages_total))
        self.progress.setValue(p.pages_done)
        failed = f" · {p.failed} with problems" if p.failed else ""
        tokens = f" · page {p.current}: {p.tokens} tokens" if p.current and p.tokens else ""
        self.status.setText(f"Translating {p.pages_done}/{p.pages_total}{failed}{tokens}")

    def _on_page(self, rid: int, outcome) -> None:
        w = self.window
        if not self._live(rid) or not w.doc.has_page(outcome.name):
            return
        run = self._run
        run["done"] += 1
        # the page's translations and what they taught the story memory: one undo step (a
        # selection's: one for the whole run)
        macro = outcome.memory is not None and outcome.memory != w.doc.project.memory and not run["selection"]
        if macro:
            w.undo_stack.beginMacro(f"translate {outcome.name}")
        try:
            self._apply_page(outcome, run)
        finally:
            if macro:
                w.undo_stack.endMacro()
        if outcome.problem:
            from app.ui.translate.report import report_rows

            names = self.window.doc.page_names()
            number = names.index(outcome.name) + 1 if outcome.name in names else 0
            run["problems"].extend(report_rows(outcome, number))

    def _apply_page(self, outcome, run: dict) -> None:
        w = self.window
        if outcome.texts or outcome.untranslated or outcome.degenerate:
            texts, name, rep = dict(outcome.texts), outcome.name, run["replace_edited"]
            echoes, degenerate = dict(outcome.untranslated), dict(outcome.degenerate)
            from app.core.translation.translation_memory import LABEL

            filled = {k: v for k, v in texts.items()  # from the translation memory: marked so
                      if (b := outcome.page.block(k)) is not None and b.translator == LABEL}
            asked = {k: v for k, v in texts.items() if k not in filled}
            def apply(p):
                return edits.apply_machine_translations(edits.apply_machine_translations(p, filled, LABEL, rep),
                                                        asked, outcome.translator, rep, untranslated=echoes,
                                                        degenerate=degenerate)

            if run["selection"]:
                before = w.doc.page(name)
                memory = w.doc.project.memory
                learnt = outcome.memory if outcome.memory is not None and outcome.memory != memory else None
                after = apply(before)
                if after != before or learnt is not None:
                    w.undo_stack.push(SelectionRunCommand(w.doc, self.run_id, before, after,
                                                          (memory, learnt) if learnt is not None else None))
            else:
                w.edit(apply, f"translate {name}", page=name)
            run["blocks"] += len(texts)
            w.autosave()  # what arrived is on disk at once
        if run["selection"]:
            if outcome.memory is not None and outcome.memory != w.doc.project.memory and not outcome.texts:
                w.undo_stack.push(SelectionRunCommand(w.doc, self.run_id, None, None,
                                                      (w.doc.project.memory, outcome.memory)))
                w.autosave()
            return
        if outcome.memory is not None:
            self.set_memory(outcome.memory, f"story memory from {outcome.name}")
            w.autosave()

    def _on_failed(self, rid: int, message: str) -> None:
        ctx = self.host.context(rid)
        if ctx is not None and ctx["kind"] == "probe":
            if self.host.wanted(rid):
                self.probe_finished.emit(message)
            return
        if self._live(rid):
            self.last_error = message
            w = self.window
            w.show_notice("error", message, owner="translation")  # cleared by the next run that succeeds

    def _on_finished(self, rid: int, status: str, ctx: dict) -> None:
        """From the host's registry, once the worker is done with `rid` (wanted or not)."""
        if rid != self.run_id or self.window.closing:
            return
        run = self._run
        self.progress.hide()
        self.act.cancel.setEnabled(False)
        self.window.update_cancel()
        if ctx.get("quiet"):  # a run of the source that was open before this one
            self.status.hide()
            self.run_id = 0
            self.run_finished.emit(status)
            return
        secs = time.monotonic() - run.get("started", time.monotonic())
        label = {"done": "Translated", "cancelled": "Translation cancelled", "failed": "Translation failed"}[status]
        self.status.setText(f"{label}: {run.get('blocks', 0)} block(s) on {run.get('done', 0)} page(s) in {secs:.1f} s")
        self.status.setToolTip(self.status.text())
        self.window.messages.add("status", self.status.text(), "translation")
        problems = run.get("problems", [])
        if status == "done":
            self.window.clear_notice("translation")  # an earlier run's error (a server down) is over
        if problems:
            self.report.show(problems)
        elif status == "done":
            self.report.refresh()
        self.run_id = 0
        self.run_finished.emit(status)

    def restore(self, block_id: str) -> None:
        """The block panel's Restore: the machine translation back over a hand edit (undoable)."""
        self.window.edit(lambda p: edits.restore_translation(p, block_id), "restore machine translation")

    def stop(self, timeout_ms: int = 30000) -> bool:
        """At exit: cancel and stop the translation thread, waiting at most `timeout_ms`."""
        return self.host.stop(timeout_ms) and self.series.stop(timeout_ms)
