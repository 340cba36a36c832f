"""The window's file side: open a source, save, autosave and crash recovery, export and import,
model choices. Plain functions over MainWindow `w`; the work itself is app.core's
(sources, project_io, export).

Autosave (project_io.save_autosave, atomic) runs a moment after each edit; Save writes the
project file and discards the autosave. Every committed edit is also appended to the edit
journal (app.core.edit_journal) at once, so a crash before the autosave loses nothing; the
autosave and Save fold the journal in. An autosave newer than the project, or a journal with
edits, means the app did not close normally: opening that source again offers to restore them.

One writer per project (app.core.project_lock): the window holds the lock of the open project.
When another process holds it, or the file is from a newer major version, the project opens
read-only (`w.read_only` says why): no journal, no autosave, Save refuses.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from app.core.document import Page, Project
from app.errors import UserError
from app.ui.editor.undo import PageEditCommand
from app.ui.shell import demo

ARCHIVE_FILTER = "Archives and mokuro volumes (*.cbz *.zip *.mokuro);;All files (*)"


# --- opening ------------------------------------------------------------------------------------
def choose_and_open(w, folder: bool) -> None:
    start = w.settings.last_dir or str(Path.home())
    if folder:
        path = QFileDialog.getExistingDirectory(w, "Open a folder of pages", start)
    else:
        path, _ = QFileDialog.getOpenFileName(w, "Open an archive of pages or a .mokuro volume", start, ARCHIVE_FILTER)
    if path:
        open_path(w, path)


def open_path(w, path: str | Path) -> bool:
    """Open a folder or archive: its saved project, or the autosave after a crash, or a new one.
    A mokuro volume (a .mokuro file, its folder) opens as its page folder, its blocks from the .mokuro."""
    from app.core.sources import resolve_source_path
    from app.ui.editor.image_jobs import acquire_source, release_source

    path = Path(path).expanduser().resolve()
    if w.doc.project is not None and not _confirm_leave(w):
        return False
    try:
        path = resolve_source_path(path)  # a mokuro volume: its page folder
        source = acquire_source(str(path))  # listed once: the page and thumbnail jobs reuse it
        try:
            names = list(source.page_names)
        finally:
            release_source(source)
    except UserError as exc:
        w.show_notice("error", str(exc))
        return False
    except OSError as exc:
        w.show_notice("error", f"{path}: cannot be opened ({exc.strerror or exc}). Check that it exists.")
        return False
    if not names:
        w.show_notice("error", f"{path}: no page images found (png, jpg, webp, … or a CBZ/ZIP of them).")
        return False

    from app.core.project_io import discard_autosave, open_project, recoverable_autosave, recoverable_edits
    from app.core.project_lock import ProjectLock

    close_writer(w)  # the project shown so far goes: its lock and journal with it
    lock = ProjectLock(path, "Hayai Desktop")
    held_by = None if lock.acquire() else lock.message()
    project, restored = None, False
    if held_by is None and recoverable_edits(path):  # only the project's one writer restores
        if w.questions.restore_autosave(w, str(path)):
            try:
                project = open_project(path, names, project_file=recoverable_autosave(path), replay_journal=True)
                restored = True
            except UserError as exc:
                w.show_notice("error", f"{exc} — the saved project is used instead.")
        else:
            discard_autosave(path)
    if project is None:
        try:
            project = open_project(path, names)
        except UserError as exc:
            w.show_notice("error", f"{exc} — starting a fresh project; the damaged file is left as it is "
                          "until you save.")
            project = Project(source=str(path), pages=[Page(name=n) for n in names], order=w.settings.order)

    w.reading.cancel(quiet=True)  # their results are dropped; progress hides when the last one ends
    w.translation.abandon()  # the same for a translation run
    w.undo_stack.clear()
    w._images.clear()
    w.current = ""
    w._restored_unsaved = restored
    w.notice.dismiss()
    w.read_only = held_by or project.read_only
    w._lock = lock if held_by is None else None
    if not w.read_only:
        start_journal(w, path)
    w.doc.set_project(project)
    w.page_list.set_pages(str(path), project.pages)
    w.show_page(project.pages[0].name)
    if w.read_only:
        w.show_notice("warning", f"{w.read_only} Opened read-only: edits here are not saved.")
    from app.core.project_io import in_installation

    demo.leave_for(w, path)  # another volume than the demo's: back to the user's own settings
    w.update_settings(recent_sources=w.settings.with_recent(str(path)).recent_sources,
                      last_dir=w.settings.last_dir if in_installation(path) else str(path.parent))
    refresh_recent_menu(w)
    note = " (unsaved edits restored)" if restored else ""
    w.status_label.setText(f"Opened {path.name}: {len(project.pages)} page(s){note}.")
    return True


def refresh_recent_menu(w) -> None:
    menu = w.recent_menu
    menu.clear()
    for p in w.settings.recent_sources:
        menu.addAction(p, lambda path=p: open_path(w, path))
    menu.setEnabled(bool(w.settings.recent_sources))


def reopen_after_crash(w) -> bool:
    """At start-up without a path: reopen the last source if it left an autosave or journal behind."""
    from app.core.project_io import recoverable_edits

    for src in w.settings.recent_sources[:1]:
        if Path(src).exists() and recoverable_edits(src):
            return open_path(w, src)
    return False


# --- the one writer: lock and journal -----------------------------------------------------------
def start_journal(w, path) -> None:
    from app.core.edit_journal import EditJournal

    try:
        w._journal = EditJournal(path)
    except (UserError, OSError) as exc:
        w._journal = None
        w.show_notice("warning", f"The edit journal cannot be kept ({exc}); edits are autosaved a moment "
                      "after you make them.")


def journal_page(w, name: str) -> None:
    """A committed edit of page `name`: into the journal at once (app.core.edit_journal)."""
    if w._journal is not None and w.doc.has_page(name):
        _journal(w, lambda j: j.record_page(w.doc.page(name)))


def journal_fields(w) -> None:
    """A committed edit of the project's own fields (style, glossary, order)."""
    if w._journal is not None and w.doc.project is not None:
        _journal(w, lambda j: j.record_project(w.doc.project))


def _journal(w, write) -> None:
    try:
        write(w._journal)
    except UserError as exc:
        w._journal.close()
        w._journal = None
        w.show_notice("warning", str(exc))


def _fold_journal(w) -> None:
    if w._journal is not None:
        _journal(w, lambda j: j.folded())


def close_writer(w) -> None:
    """Let go of the open project: close its journal (kept when edits are unsaved: a crash-free
    exit without saving still offers them next time) and release its lock."""
    if w._journal is not None:
        w._journal.close(delete=not w.is_dirty())
        w._journal = None
    if w._lock is not None:
        w._lock.release()
        w._lock = None


# --- saving ---------------------------------------------------------------------------------------
def save(w) -> bool:
    """Save the project file (atomic); True on success."""
    from app.core.project_io import discard_autosave, project_path_for, save_project

    if w.doc.project is None:
        return True
    w.panel.flush()
    if w.read_only:
        w.show_notice("error", f"Not saved: {w.read_only}")
        return False
    try:
        target = save_project(w.doc.project)
    except (UserError, OSError) as exc:
        w.show_notice("error", f"Could not save {project_path_for(w.doc.source)}: {exc}")
        return False
    discard_autosave(w.doc.source)
    _fold_journal(w)
    w._restored_unsaved = False
    w.undo_stack.setClean()
    w._update_title()
    w.status_label.setText(f"Saved {target}")
    return True


def autosave(w) -> None:
    from app.core.project_io import save_autosave

    if w.doc.project is None or not w.is_dirty() or w.read_only:
        return
    try:
        save_autosave(w.doc.project)
    except (UserError, OSError) as exc:
        w.show_notice("warning", f"Autosave failed: {exc}")
        return
    _fold_journal(w)  # the autosave holds every edit journaled so far


def _confirm_leave(w) -> bool:
    """Before closing the project: ask about unsaved changes. False = stay."""
    from app.core.project_io import discard_autosave

    w.panel.flush()
    if w.view.inline_editor() is not None:
        w.view.inline_editor().finish(True)
    mine = w.doc.project is not None and not w.read_only  # a read-only project's files are its writer's
    if not w.is_dirty():
        if mine:
            discard_autosave(w.doc.source)
        return True
    answer = w.questions.unsaved_changes(w)
    if answer == "cancel":
        return False
    if answer == "save":
        return save(w)
    if mine:
        discard_autosave(w.doc.source)
    return True


def confirm_close(w) -> bool:
    return w.doc.project is None or _confirm_leave(w)


# --- export / import ----------------------------------------------------------------------------
def export_to(w, path: str | Path, fmt: str, scope: str, translations: bool = False) -> Path:
    """Write the page (scope "page") or volume as JSON or TXT through app.core.export."""
    from app.core import export

    w.panel.flush()
    pages = [w.current] if scope == "page" else None
    if fmt == "json":
        export.export_json(w.doc.project, Path(path), pages=pages)
    else:
        export.export_txt(w.doc.project, Path(path), pages=pages, translations=translations)
    return Path(path)


def export_dialog(w, fmt: str, scope: str, translations: bool) -> None:
    if w.doc.project is None:
        return
    stem = Path(w.doc.source).stem + (f"-{Path(w.current).stem}" if scope == "page" else "")
    stem += "-translations" if translations else ""
    from app.core.settings import export_folder

    start = str(export_folder(w.settings, w.doc.source) / f"{stem}.{fmt}")
    flt = "JSON (*.json)" if fmt == "json" else "Text (*.txt)"
    path, _ = QFileDialog.getSaveFileName(w, "Export", start, flt)
    if path:
        try:
            export_to(w, path, fmt, scope, translations)
            w.update_settings(export_dir=str(Path(path).parent))
            w.status_label.setText(f"Exported {path}")
        except (UserError, OSError) as exc:
            w.show_notice("error", f"Export to {path} failed: {exc}")


def import_from(w, path: str | Path, into: str) -> tuple[int, list[str]]:
    """Fill transcriptions or translations from a TXT file as one undoable step.

    Returns (pages changed, warnings from the import: unknown pages or blocks, stray lines)."""
    from app.core.export import import_txt

    w.panel.flush()
    result = import_txt(w.doc.project, Path(path), into=into)
    changed = [(old, new) for old, new in zip(w.doc.project.pages, result.project.pages) if old != new]
    if changed:
        w.undo_stack.beginMacro(f"import {into} from {Path(path).name}")
        for old, new in changed:
            w.undo_stack.push(PageEditCommand(w.doc, old, new, f"import {new.name}"))
        w.undo_stack.endMacro()
    return len(changed), list(result.warnings)


def import_dialog(w, into: str) -> None:
    if w.doc.project is None:
        return
    path, _ = QFileDialog.getOpenFileName(w, "Import TXT", w.settings.last_dir, "Text (*.txt)")
    if path:
        try:
            n, warnings = import_from(w, path, into)
            w.status_label.setText(f"Imported {into} for {n} page(s) from {path}")
            if warnings:
                more = f" (and {len(warnings) - 5} more)" if len(warnings) > 5 else ""
                w.show_notice("warning", "Some lines were not imported: " + " · ".join(warnings[:5]) + more)
        except (UserError, OSError) as exc:
            w.show_notice("error", f"Import of {path} failed: {exc}")


def export_script_dialog(w, fmt: str) -> None:
    """File > Export > Script as CSV / TSV: every block of the volume, one row each."""
    if w.doc.project is None:
        return
    from app.core.script_table import export_script
    from app.core.settings import export_folder

    w.panel.flush()
    start = str(export_folder(w.settings, w.doc.source) / f"{Path(w.doc.source).stem}-script.{fmt}")
    flt = "CSV (*.csv)" if fmt == "csv" else "TSV (*.tsv)"
    path, _ = QFileDialog.getSaveFileName(w, "Export the script", start, flt)
    if path:
        try:
            export_script(w.doc.project, path, fmt)
            w.update_settings(export_dir=str(Path(path).parent))
            w.status_label.setText(f"Exported the script to {path}")
        except (UserError, OSError) as exc:
            w.show_notice("error", f"Export to {path} failed: {exc}")


def import_script_from(w, path: str | Path) -> tuple[int, list[str]]:
    """Fill sources and translations from a CSV / TSV script as one undoable step.

    Returns (pages changed, the rows that could not be placed)."""
    from app.core.script_table import import_script

    w.panel.flush()
    result = import_script(w.doc.project, Path(path))
    changed = [(old, new) for old, new in zip(w.doc.project.pages, result.project.pages) if old != new]
    if changed:
        w.undo_stack.beginMacro(f"import the script from {Path(path).name}")
        for old, new in changed:
            w.undo_stack.push(PageEditCommand(w.doc, old, new, f"import {new.name}"))
        w.undo_stack.endMacro()
    return len(changed), list(result.warnings)


def import_script_dialog(w) -> None:
    if w.doc.project is None:
        return
    path, _ = QFileDialog.getOpenFileName(w, "Import the script", w.settings.last_dir,
                                          "Script (*.csv *.tsv);;All files (*)")
    if path:
        try:
            n, warnings = import_script_from(w, path)
            w.status_label.setText(f"Imported the script for {n} page(s) from {path}")
            if warnings:
                more = f" (and {len(warnings) - 5} more)" if len(warnings) > 5 else ""
                w.show_notice("warning", f"{len(warnings)} row(s) were not imported: "
                              + " · ".join(warnings[:5]) + more)
        except (UserError, OSError) as exc:
            w.show_notice("error", f"Import of {path} failed: {exc}")


# --- models -------------------------------------------------------------------------------------
def fill_model_combos(w) -> None:
    from app.ui.models import status as model_status

    a, s = w.act, w.settings
    a.model.blockSignals(True)
    a.model.clear()
    for label, spec in model_status.model_choices(s.model):
        a.model.addItem(label, spec)
    a.model.addItem("Choose folder…", "")
    a.model.setCurrentIndex(max(0, a.model.findData(s.model)))
    a.model.blockSignals(False)
    a.detector.blockSignals(True)
    a.detector.clear()
    for label, spec in model_status.detector_choices(s.detector):
        a.detector.addItem(label, spec)
    a.detector.addItem("Choose .pt file…", "")
    a.detector.setCurrentIndex(max(0, a.detector.findData(s.detector)))
    a.detector.blockSignals(False)


def on_model_combo(w) -> None:
    spec = w.act.model.currentData()
    if spec:
        w.update_settings(model=spec)
        update_model_banner(w)
    else:
        choose_model_folder(w)


def on_detector_combo(w) -> None:
    spec = w.act.detector.currentData()
    if spec:
        w.update_settings(detector=spec)
        update_model_banner(w)
    else:
        choose_detector(w)


def choose_model_folder(w) -> None:
    folder = QFileDialog.getExistingDirectory(w, "Choose an OCR model folder (config.json, model.safetensors…)",
                                              w.settings.last_dir)
    if folder:
        w.update_settings(model=folder)
    fill_model_combos(w)
    update_model_banner(w)


def choose_detector(w) -> None:
    path, _ = QFileDialog.getOpenFileName(w, "Choose a detector (ultralytics YOLO .pt)", w.settings.last_dir,
                                          "YOLO model (*.pt)")
    if path:
        w.update_settings(detector=path)
    fill_model_combos(w)
    update_model_banner(w)


def update_model_banner(w) -> None:
    from app.ui.models import status as model_status

    if w.demo:
        w.banner.show_message(
            "demo", "<b>Demo models</b>: they read <i>synthetic</i> sample text only, not real manga. "
            "For real pages, download Hayai v2.5 Nova and a detector in the model manager.",
            [("Model manager…", w.action_model_manager)])
        return
    missing = model_status.missing_models(w.settings.model, w.settings.detector)
    if not missing:
        w.banner.dismiss()
        return
    size = model_status.default_model_size_text()
    w.banner.show_message(
        "warning", f"<b>{' and '.join(missing)} not installed.</b> Hayai Desktop needs an OCR model and a "
        "text detector to read pages.",
        [(f"Download Hayai v2.5 Nova ({size})", lambda: open_model_manager(w, download=model_status.DEFAULT_MODEL)),
         ("Choose a local folder…", lambda: choose_model_folder(w)),
         ("Model manager…", lambda: open_model_manager(w))], closable=True)


def open_model_manager(w, download: str | None = None, select: str | None = None) -> None:
    """The model manager, optionally starting the download of `download` or showing `select`."""
    from app.ui.models.manager import ModelManagerDialog

    dialog = ModelManagerDialog(w)
    dialog.model_chosen.connect(lambda spec: (w.update_settings(model=spec), fill_model_combos(w)))
    dialog.detector_chosen.connect(lambda spec: (w.update_settings(detector=spec), fill_model_combos(w)))
    if select:
        dialog.select(select)
    if download:
        dialog.start_download(download)
    dialog.exec()
    dialog.dispose()  # closing never waits: a cancelled download ends on its own, then the dialog goes
    fill_model_combos(w)
    update_model_banner(w)
