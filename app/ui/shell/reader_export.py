"""File > Export > For mokuro readers / Reader page: the volume as mokuro writes it (VOLUME.mokuro,
the page images, the reader page VOLUME.html) or the reader page alone (one HTML file), written by
app.core.mokuro (what `hayai-desktop export --format mokuro|reader` runs) on a pool thread,
with a progress dialog and Cancel. The series' UUID the export gives readers is kept in the
project (saved with it), so a reader keeps its progress when the volume is exported again."""
from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal
from PySide6.QtWidgets import QFileDialog, QProgressDialog

from app.errors import Cancelled, UserError
from app.ui.common.threads import track_pool


class _Signals(QObject):
    progressed = Signal(int, int, str)
    finished = Signal(object)  # app.core.mokuro.MokuroExport
    failed = Signal(str)


class _Job(QRunnable):
    def __init__(self, signals: _Signals, project, kind: str, out: str, cancel: threading.Event):
        super().__init__()
        self.signals, self.project, self.kind, self.out, self.cancel = signals, project, kind, out, cancel

    def run(self) -> None:
        from app.core import mokuro

        progress = lambda d, t, n: self.signals.progressed.emit(d, t, n)  # noqa: E731
        try:
            if self.kind == "mokuro":
                result = mokuro.export_mokuro(self.project, self.out, progress=progress, cancel=self.cancel.is_set)
            else:
                result = mokuro.export_reader(self.project, self.out, progress=progress, cancel=self.cancel.is_set)
            self.signals.finished.emit(result)
        except Cancelled:
            self.signals.failed.emit("cancelled")
        except (UserError, OSError) as exc:
            self.signals.failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - thread boundary: report to the window
            self.signals.failed.emit(f"{type(exc).__name__}: {exc}")


class ReaderExporter(QObject):
    """File > Export > For mokuro readers… and Reader page…; one export at a time."""

    finished = Signal(str)  # "done" | "cancelled" | "failed" (tests)

    def __init__(self, window):
        super().__init__(window)
        self.w = window
        self.pool = track_pool(QThreadPool(self))
        self.pool.setObjectName("reader-export")
        self.pool.setMaxThreadCount(1)
        self.signals = _Signals(self)
        self.signals.progressed.connect(self._on_progress)
        self.signals.finished.connect(self._on_finished)
        self.signals.failed.connect(self._on_failed)
        self.cancel = threading.Event()
        self.dialog: QProgressDialog | None = None
        self.last_result = None
        menu = window.export_menu
        menu.addSeparator()
        self.mokuro_action = menu.addAction("For mokuro readers (.mokuro + pages + reader page)…",
                                            lambda: self.choose("mokuro"))
        self.reader_action = menu.addAction("Reader page (one HTML file)…", lambda: self.choose("reader"))

    def choose(self, kind: str) -> None:
        from app.core.mokuro import default_names
        from app.core.settings import export_folder

        w = self.w
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
        w = self.w
        w.panel.flush()
        project = replace(w.doc.project, pages=list(w.doc.project.pages), glossary=list(w.doc.project.glossary))
        self.cancel.clear()
        title = "Export for mokuro readers" if kind == "mokuro" else "Export the reader page"
        self.dialog = QProgressDialog("Writing pages…", "Cancel", 0, max(1, len(project.pages)), w)
        self.dialog.setWindowTitle(title)
        self.dialog.setWindowModality(Qt.WindowModality.WindowModal)
        self.dialog.setMinimumDuration(300)
        self.dialog.setAutoReset(False)
        self.dialog.setAutoClose(False)
        self.dialog.canceled.connect(self.cancel.set)
        self.out, self.kind = out, kind
        self.pool.start(_Job(self.signals, project, kind, out, self.cancel))

    def stop(self, timeout_ms: int) -> bool:
        """At exit: cancel a running export and wait for it, at most `timeout_ms`."""
        self.cancel.set()
        return self.pool.waitForDone(timeout_ms)

    def _on_progress(self, done: int, total: int, name: str) -> None:
        dialog = self.dialog
        if dialog is not None:
            dialog.setMaximum(total)
            dialog.setLabelText(f"Page {done} of {total}: {name}")
            dialog.setValue(done)  # may process events (a modal dialog): keep this last

    def _close(self) -> None:
        """Close the progress dialog (reset() alone leaves it on screen, auto-close being off)."""
        dialog, self.dialog = self.dialog, None
        if dialog is not None:
            try:
                dialog.canceled.disconnect()  # closing it is not a Cancel
            except (RuntimeError, TypeError):
                pass
            dialog.reset()
            dialog.hide()
            dialog.deleteLater()

    def _keep_series_uuid(self, uuid: str) -> None:
        """The series' UUID goes into the open project: saved at once when nothing else is
        unsaved, else with the next save (and the autosave)."""
        from app.core.project_io import save_project

        w = self.w
        project = w.doc.project
        if project is None or not uuid or project.series_uuid == uuid:
            return
        project.series_uuid = uuid
        if project.read_only or w.is_dirty():
            return
        try:
            save_project(project)
        except (UserError, OSError) as exc:
            w.show_notice("warning", f"The series' UUID for mokuro readers could not be saved: {exc}")

    def _on_finished(self, result) -> None:
        self._close()
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
            self.w.show_notice("warning", f"Export: {len(result.skipped)} page(s) could not be read and were "
                               f"skipped: {', '.join(n for n, _ in result.skipped[:5])}")
        self.w.status_label.setText(f"Exported {what} to {self.out}{note}.")
        self.w.update_settings(export_dir=str(Path(self.out) if self.kind == "mokuro" else Path(self.out).parent))
        self.finished.emit("done")

    def _on_failed(self, message: str) -> None:
        self._close()
        if message == "cancelled":
            self.w.status_label.setText("Export cancelled; files already written were kept.")
            self.finished.emit("cancelled")
            return
        self.w.show_notice("error", f"Export failed: {message}")
        self.finished.emit("failed")
