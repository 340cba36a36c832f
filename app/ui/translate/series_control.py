"""Series, translation memory, story memory and the consistency check in the window.

`SeriesControl(window)`: when a volume opens, its series file (app.core.translation.series: beside the
volume or up to two folders above, or chosen with Translate > Series file…) is read; a new
volume takes the series' glossary, memory and style as one undoable step. The translation
memory (the series' approved translations and the volume's own) fills exact repeats in
translation runs and gives the block panel its suggestions; Approve accepts a machine
translation into it. Each time the project is saved, what the volume learned is written back
to the series file. It owns the Memory and Consistency panels (the window docks them).
"""
from __future__ import annotations

import logging
from dataclasses import replace

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog

from app.core.document import edits
from app.errors import UserError
from app.ui.editor.undo import ProjectValueCommand
from app.ui.translate.check_panel import CheckPanel
from app.ui.translate.memory_panel import MemoryPanel

log = logging.getLogger(__name__)


class SeriesControl(QObject):
    """`jump(page, block id)`: a consistency row was clicked (the window shows the block).
    The window places `memory_panel` and `check_panel` in docks, `act.menu` in the Translate
    menu, and gives the block panel `suggestions` and `approve`."""

    jump = Signal(str, str)

    def __init__(self, w, translation):
        super().__init__(w)
        self.window = w
        self.translation = translation
        self.series = None  # app.core.translation.series.Series of the open volume, or None
        self._tm = None
        self._tm_stale = True
        self._generation = 0  # counts the changes that make the memory stale
        self._without = None  # the memory without the block shown (its suggestions), and for which block
        self._without_key: tuple | None = None
        self.memory_panel = MemoryPanel(w.doc, w.undo_stack)
        self.check_panel = CheckPanel(w.doc)
        self.check_dock = None  # set by the window (shown when a check starts)
        self.memory_panel.glossary_accepted.connect(self._accept_glossary)
        self.check_panel.jump.connect(self.jump)
        w.doc.project_reset.connect(self._on_project)
        w.doc.page_changed.connect(self._stale)
        w.doc.project_changed.connect(self._stale)
        w.undo_stack.cleanChanged.connect(lambda clean: self.learn() if clean else None)
        self.act_check = QAction("Check consistency", self)
        self.act_check.triggered.connect(self.open_check)
        self.act_series = QAction("Series file…", self)
        self.act_series.triggered.connect(self.choose_series)
        self.menu = [self.act_check, self.act_series]

    # --- the series -------------------------------------------------------------------------
    def _on_project(self) -> None:
        from app.core.translation.series import find_series_file

        self.series = None
        self._stale()
        project = self.window.doc.project
        if project is None or project.read_only:
            return
        found = find_series_file(project.source)
        if found is not None:
            self.use_series(found)

    def use_series(self, path) -> bool:
        """Read the series file at `path` for the open volume (a new volume takes what it knows)."""
        from app.core.document.types import Project
        from app.core.translation.series import load_series, start_volume

        project = self.window.doc.project
        if project is None:
            return False
        try:
            series = load_series(path)
        except UserError as exc:
            self.window.show_notice("warning", f"Series file not used: {exc}")
            return False
        self.series = series
        self._stale()
        probe = Project(source=project.source, glossary=list(project.glossary), memory=project.memory,
                        style=project.style)
        if start_volume(probe, series):
            stack, doc = self.window.undo_stack, self.window.doc
            stack.beginMacro("take what the series knows")
            if probe.glossary != project.glossary:
                stack.push(ProjectValueCommand(doc, doc.set_glossary, list(project.glossary), list(probe.glossary),
                                               "series glossary"))
            if probe.memory != project.memory:
                stack.push(ProjectValueCommand(doc, doc.set_memory, project.memory, probe.memory, "series memory"))
            if probe.style != project.style:
                stack.push(ProjectValueCommand(doc, doc.set_style, project.style, probe.style, "series style"))
            stack.endMacro()
            self.window.show_status(f"A new volume of the series {series.path}: its glossary ({len(probe.glossary)} "
                               "term(s)), story memory and style were taken.")
        else:
            self.window.show_status(f"Series file: {series.path}")
        return True

    def choose_series(self) -> None:
        from app.core.translation.series import SERIES_FILE, series_path_for

        if self.window.doc.project is None:
            return
        start = str(self.series.path if self.series else series_path_for(self.window.doc.source))
        path = self.window.questions.answers.get("series_file") if "series_file" in self.window.questions.answers else \
            QFileDialog.getSaveFileName(self.window, "Series file (shared by the volumes of a series)", start,
                                        f"Series file ({SERIES_FILE} *.json)",
                                        options=QFileDialog.Option.DontConfirmOverwrite)[0]
        if path and self.use_series(path):
            self.learn()

    def learn(self) -> bool:
        """Write what the volume learned to its series file (after each save)."""
        from app.core.translation.series import learn_from

        if self.series is None or self.window.doc.project is None or self.series.read_only:
            return False
        try:
            self.series = learn_from(self.series.path, self.window.doc.project)
        except UserError as exc:
            self.window.show_notice("warning", f"The series file was not updated: {exc}")
            return False
        self._stale()
        return True

    # --- the translation memory ---------------------------------------------------------------
    def _stale(self, *_args) -> None:
        self._tm_stale = True
        self._generation += 1

    def memory(self):
        """The translation memory now: the series' approved translations and the volume's own
        (a fresh object: a run on the worker thread keeps its own)."""
        from app.core.translation.translation_memory import memory_of

        if self._tm_stale or self._tm is None:
            project = self.window.doc.project
            self._tm = memory_of(project, self.series.tm if self.series else ()) if project else None
            self._tm_stale = False
        return self._tm

    def run_memory(self):
        from app.core.translation.translation_memory import TranslationMemory

        tm = self.memory()
        return TranslationMemory(tm.pairs()) if tm is not None else None

    def suggestions(self, block) -> list:
        """What the translation memory offers `block` (a Block of the page shown): never the
        block's own translation. The memory is built without the block's own pair (the user's
        typed translation is in the memory at once: offered back at 100 %, it read as a match),
        and a suggestion equal to what the block holds already is left out (the series file may
        hold the block's pair from the last save)."""
        project = self.window.doc.project
        source = block.display_text
        if project is None or not source.strip():
            return []
        tm = self._memory_without(block.id)
        exact = tm.exact(source)
        found = ([(source, exact, 100.0)] if exact else []) + tm.similar(source, limit=3)
        own = block.translation.strip()
        return [(s, t, score) for s, t, score in found if t.strip() != own]

    def _memory_without(self, block_id: str):
        """The memory now without block `block_id` of the page shown (kept until the next change)."""
        from app.core.translation.translation_memory import TranslationMemory, approved_pairs

        key = (self.window.current, block_id, self._generation)
        if self._without is None or self._without_key != key:
            project = self.window.doc.project
            pages = [p if p.name != key[0] else replace(p, blocks=tuple(b for b in p.blocks if b.id != block_id))
                     for p in project.pages]
            self._without = TranslationMemory(self.series.tm if self.series else ())
            self._without.add_all(approved_pairs(pages))
            self._without_key = key
        return self._without

    def approve(self, block_id: str) -> None:
        self.window.edit(lambda p: edits.approve_translation(p, block_id), "approve translation")

    # --- glossary proposals, the check ---------------------------------------------------------
    def _accept_glossary(self, entries) -> None:
        from app.translate.glossary import merge

        project = self.window.doc.project
        if project is not None:
            self.translation.set_glossary(merge(project.glossary, entries))

    def open_check(self) -> None:
        if self.check_dock is not None:
            self.check_dock.show()
            self.check_dock.raise_()
        self.check_panel.run_check()

    def stop(self, timeout_ms: int = 30000) -> bool:
        return self.check_panel.stop(timeout_ms)
