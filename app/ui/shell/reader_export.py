"""File > Export > For mokuro readers / Reader page: the volume as mokuro writes it (VOLUME.mokuro,
the page images, the reader page VOLUME.html) or the reader page alone (one HTML file), written by
app.core.exports.mokuro (what `hayai-desktop export --format mokuro|reader` runs) on a pool thread,
with a progress dialog and Cancel. The series' UUID the export gives readers is kept in the
project (saved with it), so a reader keeps its progress when the volume is exported again."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject, QThreadPool, Signal
from PySide6.QtWidgets import QFileDialog

from app.errors import UserError
from app.ui.common.background_export import BackgroundExport
from app.ui.common.threads import track_pool


class ReaderExporter(QObject):
    """File > Export > For mokuro readers… and Reader page…; one export at a time."""

    finished = Signal(str)  # "done" | "cancelled" | "failed" (tests)

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.pool = track_pool(QThreadPool(self))
        self.pool.setObjectName("reader-export")
        self.pool.setMaxThreadCount(1)
        self.export = BackgroundExport(window, self.pool, self._on_finished)
        self.export.finished.connect(self.finished)
        self.last_result = None
        menu = window.export_menu
        menu.addSeparator()
        self.mokuro_action = menu.addAction("For mokuro readers (.mokuro + pages + reader page)…",
                                            lambda: self.choose("mokuro"))
        self.reader_action = menu.addAction("Reader page (one HTML file)…", lambda: self.choose("reader"))

    def choose(self, kind: str) -> None:
        from app.core.config.settings import export_folder
        from app.core.exports.mokuro import default_names

        w = self.window
        if w.doc.project is None:
            return
        start = export_folder(w.settings, w.doc.source)
        if kind == "mokuro":
            path = QFileDialog.getExistingDirectory(
                w, "Folder of the series (VOLUME.mokuro, the VOLUME folder of pages and VOLUME.html go in it)",
                str(start))
        else:
            _title, volume = default_names(w.doc.project)
            path, _ = QFileDialog.getSaveFileName(w, "Export the reader page", str(Path(start) / f"{volume}.html"),
                                                  "Web page (*.html)")
        if path:
            self.start(kind, path)

    def start(self, kind: str, out: str) -> None:
        """Export the volume for mokuro readers into the folder `out` (kind "mokuro"), or its
        reader page as the one file `out` (kind "reader"), in the background."""
        w = self.window
        w.flush_editors()
        project = replace(w.doc.project, pages=list(w.doc.project.pages), glossary=list(w.doc.project.glossary))
        title = "Export for mokuro readers" if kind == "mokuro" else "Export the reader page"
        self.out, self.kind = out, kind

        def work(progress, cancel):
            from app.core.exports import mokuro

            export = mokuro.export_mokuro if kind == "mokuro" else mokuro.export_reader
            return export(project, out, progress=progress, cancel=cancel)

        self.export.start(title, "Writing pages…", len(project.pages), work)

    @property
    def dialog(self):
        """The progress dialog while an export runs (None when none does)."""
        return self.export.dialog

    def stop(self, timeout_ms: int) -> bool:
        """At exit: cancel a running export and wait for it, at most `timeout_ms`."""
        self.export.cancel.set()
        return self.pool.waitForDone(timeout_ms)

    def _keep_series_uuid(self, uuid: str) -> None:
        """The series' UUID goes into the open project: saved at once when nothing else is
        unsaved, else with the next save (and the autosave)."""
        from app.core.project.files import save_project

        w = self.window
        project = w.doc.project
        if project is None or not uuid or project.series_uuid == uuid:
            return
        w.doc.set_series_uuid(uuid)
        if project.read_only or w.is_dirty():
            return
        try:
            save_project(project)
        except (UserError, OSError) as exc:
            w.show_notice("warning", f"The series' UUID for mokuro readers could not be saved: {exc}")

    def _on_finished(self, result) -> None:
        self.last_result = result
        if self.kind == "mokuro":
            self._keep_series_uuid(result.project.series_uuid)
            what = f"{result.mokuro.name} and {result.pages} page(s)" + (
                f" and {result.html.name}" if result.html else "")
        else:
            what = f"the reader page of {result.pages} page(s)"
        note = ""
        if result.skipped:
            note = f"; {len(result.skipped)} page(s) skipped ({result.skipped[0][0]}: {result.skipped[0][1]})"
            self.window.show_notice("warning", f"Export: {len(result.skipped)} page(s) could not be read and were "
                                    f"skipped: {', '.join(n for n, _ in result.skipped)}", owner="export")
        else:
            self.window.clear_notice("export")  # an earlier export's failure is over
        self.window.show_status(f"Exported {what} to {self.out}{note}.")
        self.window.update_settings(export_dir=str(Path(self.out) if self.kind == "mokuro" else Path(self.out).parent))
