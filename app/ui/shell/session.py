"""The window's file side: open a source, save, autosave and crash recovery, export and import.
`SessionController(window, recent_menu)` owns the open project's writer state (its lock, its
journal, why it is read-only, whether restored edits are unsaved) and talks to the window through
the document model and `SessionWindow`; the work itself is app.core's (sources, project.files,
exports).

Autosave (project.files.save_autosave, atomic) runs a moment after each edit; Save writes the
project file and discards the autosave. Every committed edit is also appended to the edit
journal (app.core.project.journal) at once, so a crash before the autosave loses nothing; the
autosave and Save fold the journal in. An autosave newer than the project, or a journal with
edits, means the app did not close normally: opening that source again offers to restore them.

One writer per project (app.core.project.lock): the window holds the lock of the open project.
When another process holds it, or the file is from a newer major version, the project opens
read-only (`read_only` says why): no journal, no autosave, Save refuses.
"""
from __future__ import annotations

from pathlib import Path
from typing import Protocol

from PySide6.QtWidgets import QFileDialog

from app.core.document.types import Page, Project
from app.errors import UserError
from app.ui.editor.port import EditorWindow
from app.ui.editor.undo import PageEditCommand
from app.ui.shell import demo

ARCHIVE_FILTER = "Archives and mokuro volumes (*.cbz *.zip *.mokuro);;All files (*)"


class SessionWindow(EditorWindow, Protocol):
    """What the session uses of the window besides the editor port."""

    undo_stack: object  # QUndoStack: cleared when a project opens, clean when saved
    questions: object  # app.ui.common.dialogs.Questions: restore? save changes? (tests answer them)

    def leave_project(self) -> None:
        """Drop the runs, history, page images and notices of the project shown so far."""

    def show_project(self, source: str) -> None:
        """Show the document model's (new) project: its page list, its first page."""

    def finish_editing(self) -> None:
        """Commit what is typed in the block panel and in the on-page editor."""

    def refresh_title(self) -> None:
        """The window title (source, page, unsaved star, read-only)."""


class SessionController:
    """The open project's files: open, save, autosave, journal, lock, export, import."""

    def __init__(self, window: SessionWindow, recent_menu):
        self.window, self.recent_menu = window, recent_menu
        self.read_only: str | None = None  # why the open project is not saved (another writer, newer file)
        self.lock = None  # app.core.project.lock.ProjectLock of the open project
        self.journal = None  # app.core.project.journal.EditJournal of the open project
        self.restored_unsaved = False  # edits restored after a crash, not saved yet
        window.doc.page_changed.connect(self.journal_page)
        window.doc.project_changed.connect(lambda _what: self.journal_fields())

    def is_dirty(self) -> bool:
        return self.window.doc.project is not None and (not self.window.undo_stack.isClean() or self.restored_unsaved)

    # --- opening ------------------------------------------------------------------------------------
    def choose_and_open(self, folder: bool) -> None:
        start = self.window.settings.last_dir or str(Path.home())
        if folder:
            path = QFileDialog.getExistingDirectory(self.window, "Open a folder of pages", start)
        else:
            path, _ = QFileDialog.getOpenFileName(self.window, "Open an archive of pages or a .mokuro volume", start, ARCHIVE_FILTER)
        if path:
            self.open_path(path)

    def open_path(self, path: str | Path) -> bool:
        """Open a folder or archive: its saved project, or the autosave after a crash, or a new one.
        A mokuro volume (a .mokuro file, its folder) opens as its page folder, its blocks from the .mokuro."""
        path = Path(path).expanduser().resolve()
        if self.window.doc.project is not None and not self._confirm_leave():
            return False
        listed = self._list_pages(path)
        if listed is None:
            return False
        path, names = listed
        self.close_writer()  # the project shown so far goes: its lock and journal with it
        project, restored, lock, held_by = self._load(path, names)
        self._present(path, project, restored, lock, held_by)
        return True

    def _list_pages(self, path: Path) -> tuple[Path, list[str]] | None:
        """The source's page folder and page names; None (and a notice) when it has none."""
        from app.core.sources.source import resolve_source_path
        from app.ui.editor.image_jobs import acquire_source, release_source

        try:
            path = resolve_source_path(path)  # a mokuro volume: its page folder
            source = acquire_source(str(path))  # listed once: the page and thumbnail jobs reuse it
            try:
                names = list(source.page_names)
            finally:
                release_source(source)
        except UserError as exc:
            self.window.show_notice("error", str(exc))
            return None
        except OSError as exc:
            self.window.show_notice("error", f"{path}: cannot be opened ({exc.strerror or exc}). Check that it exists.")
            return None
        if not names:
            self.window.show_notice("error", f"{path}: no page images found (png, jpg, webp, … or a CBZ/ZIP of them).")
            return None
        return path, names

    def _load(self, path: Path, names: list[str]):
        """The project of `path` (restored after a crash when its writer agrees, or saved, or new)
        and its lock: (project, restored, lock, who holds it when not us)."""
        from app.core.project.files import (
            discard_autosave,
            open_current,
            open_project,
            recoverable_autosave,
            recoverable_edits,
        )
        from app.core.project.lock import ProjectLock

        lock = ProjectLock(path, "Hayai Desktop")
        held_by = None if lock.acquire() else lock.message()
        project, restored = None, False
        if held_by is None and recoverable_edits(path):  # only the project's one writer restores
            if self.window.questions.restore_autosave(str(path)):
                try:
                    project = open_project(path, names, project_file=recoverable_autosave(path), replay_journal=True)
                    restored = True
                except UserError as exc:
                    self.window.show_notice("error", f"{exc} — the saved project is used instead.")
            else:
                discard_autosave(path)
        if project is None and held_by is not None:  # the writer's work so far, autosave and journal
            try:
                project = open_current(path, names)
            except UserError as exc:
                self.window.show_notice("error", f"{exc} — the saved project is shown instead.")
        if project is None:
            try:
                project = open_project(path, names)
            except UserError as exc:
                self.window.show_notice("error", f"{exc} — starting a fresh project; the damaged file is left as it "
                                   "is until you save.")
                project = Project(source=str(path), pages=[Page(name=n) for n in names], order=self.window.settings.order)
        return project, restored, lock, held_by

    def _present(self, path: Path, project, restored: bool, lock, held_by) -> None:
        """Make `project` the window's: the writer state, the journal, the pages, recent sources."""
        from app.core.project.paths import in_installation

        self.window.leave_project()  # runs' results dropped, history and page images cleared
        self.restored_unsaved = restored
        self.read_only = held_by or project.read_only
        self.lock = lock if held_by is None else None
        if not self.read_only:
            self.start_journal(path)
        self.window.doc.set_project(project)
        self.window.show_project(str(path))
        if self.read_only:
            self.window.show_notice("warning", f"{self.read_only} Opened read-only: edits here are not saved.")
        demo.leave_for(self.window, path)  # another volume than the demo's: back to the user's own settings
        self.window.update_model_banner()  # the demo notice follows the pages: samples or not
        self.window.update_settings(recent_sources=self.window.settings.with_recent(str(path)).recent_sources,
                               last_dir=self.window.settings.last_dir if in_installation(path) else str(path.parent))
        self.refresh_recent_menu()
        note = " (unsaved edits restored)" if restored else ""
        self.window.show_status(f"Opened {path.name}: {len(project.pages)} page(s){note}.")

    def refresh_recent_menu(self) -> None:
        menu = self.recent_menu
        menu.clear()
        for p in self.window.settings.recent_sources:
            menu.addAction(p, lambda path=p: self.open_path(path))
        menu.setEnabled(bool(self.window.settings.recent_sources))

    def reopen_after_crash(self) -> bool:
        """At start-up without a path: reopen the last source if it left an autosave or journal behind."""
        from app.core.project.files import recoverable_edits

        for src in self.window.settings.recent_sources[:1]:
            if Path(src).exists() and recoverable_edits(src):
                return self.open_path(src)
        return False

    # --- the one writer: lock and journal -----------------------------------------------------------
    def start_journal(self, path) -> None:
        from app.core.project.journal import EditJournal

        try:
            self.journal = EditJournal(path)
        except (UserError, OSError) as exc:
            self.journal = None
            self.window.show_notice("warning", f"The edit journal cannot be kept ({exc}); edits are autosaved a "
                               "moment after you make them.")

    def journal_page(self, name: str) -> None:
        """A committed edit of page `name`: into the journal at once (app.core.project.journal)."""
        if self.journal is not None and self.window.doc.has_page(name):
            self._journal(lambda j: j.record_page(self.window.doc.page(name)))

    def journal_fields(self) -> None:
        """A committed edit of the project's own fields (style, glossary, order)."""
        if self.journal is not None and self.window.doc.project is not None:
            self._journal(lambda j: j.record_project(self.window.doc.project))

    def _journal(self, write) -> None:
        try:
            write(self.journal)
        except UserError as exc:
            self.journal.close()
            self.journal = None
            self.window.show_notice("warning", str(exc))

    def _fold_journal(self) -> None:
        if self.journal is not None:
            self._journal(lambda j: j.folded())

    def close_writer(self) -> None:
        """Let go of the open project: close its journal (kept when edits are unsaved: a crash-free
        exit without saving still offers them next time) and release its lock."""
        if self.journal is not None:
            self.journal.close(delete=not self.is_dirty())
            self.journal = None
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    # --- saving ---------------------------------------------------------------------------------------
    def save(self) -> bool:
        """Save the project file (atomic); True on success."""
        from app.core.project.files import discard_autosave, save_project
        from app.core.project.paths import project_path_for

        if self.window.doc.project is None:
            return True
        self.window.flush_editors()
        if self.read_only:
            self.window.show_notice("error", f"Not saved: {self.read_only}", owner="save")
            return False
        try:
            target = save_project(self.window.doc.project)
        except (UserError, OSError) as exc:
            self.window.show_notice("error", f"Could not save {project_path_for(self.window.doc.source)}: {exc}",
                                    owner="save")
            return False
        discard_autosave(self.window.doc.source)
        self._fold_journal()
        self.restored_unsaved = False
        self.window.undo_stack.setClean()
        self.window.refresh_title()
        self.window.clear_notice("save")
        self.window.clear_notice("autosave")
        self.window.show_status(f"Saved {target}")
        return True

    def autosave(self) -> None:
        from app.core.project.files import save_autosave

        if self.window.doc.project is None or not self.is_dirty() or self.read_only:
            return
        try:
            save_autosave(self.window.doc.project)
        except (UserError, OSError) as exc:
            self.window.show_notice("warning", f"Autosave failed: {exc}", owner="autosave")
            return
        self.window.clear_notice("autosave")  # it works again
        self._fold_journal()  # the autosave holds every edit journaled so far

    def _confirm_leave(self) -> bool:
        """Before closing the project: ask about unsaved changes. False = stay."""
        from app.core.project.files import discard_autosave

        self.window.finish_editing()
        mine = self.window.doc.project is not None and not self.read_only  # a read-only project's files are its writer's
        if not self.is_dirty():
            if mine:
                discard_autosave(self.window.doc.source)
            return True
        answer = self.window.questions.unsaved_changes()
        if answer == "cancel":
            return False
        if answer == "save":
            return self.save()
        if mine:
            discard_autosave(self.window.doc.source)
        return True

    def confirm_close(self) -> bool:
        return self.window.doc.project is None or self._confirm_leave()

    # --- export / import ----------------------------------------------------------------------------
    def export_to(self, path: str | Path, fmt: str, scope: str, translations: bool = False) -> Path:
        """Write the page (scope "page") or volume as JSON or TXT through app.core.exports.json_txt."""
        from app.core.exports import json_txt

        self.window.flush_editors()
        pages = [self.window.current] if scope == "page" else None
        if fmt == "json":
            json_txt.export_json(self.window.doc.project, Path(path), pages=pages)
        else:
            json_txt.export_txt(self.window.doc.project, Path(path), pages=pages, translations=translations)
        return Path(path)

    def export_dialog(self, fmt: str, scope: str, translations: bool) -> None:
        if self.window.doc.project is None:
            return
        stem = Path(self.window.doc.source).stem + (f"-{Path(self.window.current).stem}" if scope == "page" else "")
        stem += "-translations" if translations else ""
        from app.core.config.settings import export_folder

        start = str(export_folder(self.window.settings, self.window.doc.source) / f"{stem}.{fmt}")
        flt = "JSON (*.json)" if fmt == "json" else "Text (*.txt)"
        path, _ = QFileDialog.getSaveFileName(self.window, "Export", start, flt)
        if path:
            try:
                self.export_to(path, fmt, scope, translations)
                self.window.update_settings(export_dir=str(Path(path).parent))
                self.window.show_status(f"Exported {path}")
                self.window.clear_notice("export")
            except (UserError, OSError) as exc:
                self.window.show_notice("error", f"Export to {path} failed: {exc}", owner="export")

    def import_from(self, path: str | Path, into: str) -> tuple[int, list[str]]:
        """Fill transcriptions or translations from a TXT file as one undoable step.

        Returns (pages changed, warnings from the import: unknown pages or blocks, stray lines)."""
        from app.core.exports.json_txt import import_txt

        self.window.flush_editors()
        result = import_txt(self.window.doc.project, Path(path), into=into)
        return self._push_import(result, f"import {into} from {Path(path).name}")

    def import_dialog(self, into: str) -> None:
        if self.window.doc.project is None:
            return
        path, _ = QFileDialog.getOpenFileName(self.window, "Import TXT", self.window.settings.last_dir, "Text (*.txt)")
        if path:
            try:
                n, warnings = self.import_from(path, into)
                self.window.show_status(f"Imported {into} for {n} page(s) from {path}")
                self._warn_unplaced("Some lines were not imported:", warnings)
            except (UserError, OSError) as exc:
                self.window.show_notice("error", f"Import of {path} failed: {exc}")

    def export_script_dialog(self, fmt: str) -> None:
        """File > Export > Script as CSV / TSV: every block of the volume, one row each."""
        if self.window.doc.project is None:
            return
        from app.core.config.settings import export_folder
        from app.core.exports.script_table import export_script

        self.window.flush_editors()
        start = str(export_folder(self.window.settings, self.window.doc.source) / f"{Path(self.window.doc.source).stem}-script.{fmt}")
        flt = "CSV (*.csv)" if fmt == "csv" else "TSV (*.tsv)"
        path, _ = QFileDialog.getSaveFileName(self.window, "Export the script", start, flt)
        if path:
            try:
                export_script(self.window.doc.project, path, fmt)
                self.window.update_settings(export_dir=str(Path(path).parent))
                self.window.show_status(f"Exported the script to {path}")
                self.window.clear_notice("export")
            except (UserError, OSError) as exc:
                self.window.show_notice("error", f"Export to {path} failed: {exc}", owner="export")

    def import_script_from(self, path: str | Path) -> tuple[int, list[str]]:
        """Fill sources and translations from a CSV / TSV script as one undoable step.

        Returns (pages changed, the rows that could not be placed)."""
        from app.core.exports.script_table import import_script

        self.window.flush_editors()
        result = import_script(self.window.doc.project, Path(path))
        return self._push_import(result, f"import the script from {Path(path).name}")

    def _push_import(self, result, text: str) -> tuple[int, list[str]]:
        """The pages an import changed, as one undoable step `text`; (pages changed, warnings)."""
        changed = [(old, new) for old, new in zip(self.window.doc.project.pages, result.project.pages) if old != new]
        if changed:
            self.window.undo_stack.beginMacro(text)
            for old, new in changed:
                self.window.undo_stack.push(PageEditCommand(self.window.doc, old, new, f"import {new.name}"))
            self.window.undo_stack.endMacro()
        return len(changed), list(result.warnings)

    def _warn_unplaced(self, what: str, warnings: list[str]) -> None:
        """A notice with the first five of an import's warnings; every one of them in the Messages."""
        if warnings:
            more = f" (and {len(warnings) - 5} more: View > Messages lists them)" if len(warnings) > 5 else ""
            for warning in warnings:
                self.window.messages.add("warning", f"{what} {warning}", "import")
            self.window.show_notice("warning", f"{what} " + " · ".join(warnings[:5]) + more, owner="import")

    def import_script_dialog(self) -> None:
        if self.window.doc.project is None:
            return
        path, _ = QFileDialog.getOpenFileName(self.window, "Import the script", self.window.settings.last_dir,
                                              "Script (*.csv *.tsv);;All files (*)")
        if path:
            try:
                n, warnings = self.import_script_from(path)
                self.window.show_status(f"Imported the script for {n} page(s) from {path}")
                self._warn_unplaced(f"{len(warnings)} row(s) were not imported:", warnings)
            except (UserError, OSError) as exc:
                self.window.show_notice("error", f"Import of {path} failed: {exc}")
