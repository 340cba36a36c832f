"""File > Export > Translated pages: images, CBZ, PDF, layered PSD, written by
app.core.rendering.export_translated (what `hayai-desktop render` runs) on a thread-pool
thread, with a progress dialog and Cancel."""
from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QObject, QRunnable, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMenu, QProgressDialog

from app.errors import Cancelled, UserError

IMAGE_CHOICES = (("PNG", "png"), ("JPEG", "jpg"), ("WebP (lossless)", "webp"))


class _Signals(QObject):
    progressed = Signal(int, int, str)
    finished = Signal(object)  # ExportReport
    failed = Signal(str)


class ExportJob(QRunnable):
    def __init__(self, signals: _Signals, project, fmt: str, out: str, engine_name: str, engines: dict,
                 cancel: threading.Event, options=None):
        super().__init__()
        self.options = options
        self.signals, self.project, self.fmt, self.out = signals, project, fmt, out
        self.engine_name, self.engines, self.cancel = engine_name, engines, cancel

    def run(self) -> None:
        from app.core.rendering import export_translated
        from app.render.inpaint import load_inpainter

        try:
            engine = self.engines.get(self.engine_name) or load_inpainter(self.engine_name)
            self.engines[self.engine_name] = engine
            report = export_translated(self.project, self.fmt, self.out, engine, self.options,
                                       progress=lambda d, t, n: self.signals.progressed.emit(d, t, n),
                                       cancel=self.cancel.is_set)
            self.signals.finished.emit(report)
        except Cancelled:
            self.signals.failed.emit("cancelled")
        except (UserError, OSError) as exc:
            self.signals.failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - thread boundary: report to the window
            self.signals.failed.emit(f"{type(exc).__name__}: {exc}")


class PageExporter(QObject):
    """The menu entries and the running export (one at a time). The progress dialog closes when
    the export ends, however it ends; the file dialogs start where the last export went."""

    finished = Signal(str)  # "done" | "cancelled" | "failed" (tests)
    MIN_DURATION_MS = 300  # the progress dialog shows when an export takes longer than this

    def __init__(self, window, controller):
        super().__init__(window)
        self.w, self.ctl = window, controller
        self.signals = _Signals(self)
        self.signals.progressed.connect(self._on_progress)
        self.signals.finished.connect(self._on_finished)
        self.signals.failed.connect(self._on_failed)
        self.cancel = threading.Event()
        self.dialog: QProgressDialog | None = None
        self.last_report = None
        menu = QMenu("&Translated pages")  # File > Export places it (the window's shell)
        menu.addAction("As images (PNG, JPEG, WebP)…", lambda: self.choose("images"))
        menu.addAction("As CBZ…", lambda: self.choose("cbz"))
        menu.addAction("As PDF…", lambda: self.choose("pdf"))
        menu.addAction("As layered PSD…", lambda: self.choose("psd"))
        self.menu = menu

    def choose(self, kind: str) -> None:
        w = self.w
        if w.doc.project is None:
            return
        from app.core.settings import export_folder

        start = str(export_folder(w.settings, w.doc.source))
        stem = Path(w.doc.source).stem + "-translated"
        if kind in ("cbz", "pdf"):
            flt = "Comic book archive (*.cbz)" if kind == "cbz" else "PDF (*.pdf)"
            path, _ = QFileDialog.getSaveFileName(w, "Export translated pages", str(Path(start) / f"{stem}.{kind}"), flt)
            fmt = kind
        else:
            fmt = "psd"
            if kind == "images":
                labels = [label for label, _ in IMAGE_CHOICES]
                label, ok = QInputDialog.getItem(w, "Export translated pages", "Image format:", labels, 0, False)
                if not ok:
                    return
                fmt = dict(IMAGE_CHOICES)[label]
            path = QFileDialog.getExistingDirectory(w, "Folder for the translated pages (one file per page)", start)
        if path:
            self.start(fmt, path)

    def start(self, fmt: str, out: str) -> None:
        """Export every page of the project as `fmt` to `out` in the background."""
        from dataclasses import replace

        w = self.w
        w.flush_editors()
        project = replace(w.doc.project, pages=list(w.doc.project.pages))  # a snapshot: edits go on
        self.cancel.clear()
        self.dialog = QProgressDialog("Rendering pages…", "Cancel", 0, max(1, len(project.pages)), w)
        self.dialog.setWindowTitle("Export translated pages")
        self.dialog.setWindowModality(Qt.WindowModality.WindowModal)
        self.dialog.setMinimumDuration(self.MIN_DURATION_MS)
        self.dialog.setAutoReset(False)
        self.dialog.setAutoClose(False)
        self.dialog.canceled.connect(self.cancel.set)
        self.out, self.fmt = out, fmt
        from app.ui.render.view import options_for

        self.ctl.pool.start(ExportJob(self.signals, project, fmt, out, self.ctl.engine_name(), self.ctl._engines,
                                      self.cancel, options_for("translated", w.settings)))

    def _on_progress(self, done: int, total: int, name: str) -> None:
        dialog = self.dialog
        if dialog is not None:
            dialog.setMaximum(total)
            dialog.setLabelText(f"Page {done} of {total}: {name}")
            dialog.setValue(done)  # may process events (a modal dialog): keep this last

    def _close(self) -> None:
        """Close the progress dialog (reset() alone leaves it on screen: auto-close is off so
        that the last page's progress does not close it before the files are complete)."""
        dialog, self.dialog = self.dialog, None
        if dialog is not None:
            dialog.canceled.disconnect(self.cancel.set)  # closing it is not a Cancel
            dialog.reset()
            dialog.hide()
            dialog.deleteLater()

    def _on_finished(self, report) -> None:
        self._close()
        self.last_report = report
        note = ""
        if report.skipped:
            note += f"; {len(report.skipped)} page(s) skipped ({report.skipped[0][0]}: {report.skipped[0][1]})"
        if report.below_min:
            note += f"; {report.below_min} block(s) set below their minimum size ({report.below_min_text()})"
        self.w.show_status(f"Exported {len(report.written)} file(s) to {self.out}{note}.")
        folder = Path(self.out) if self.fmt not in ("cbz", "pdf") else Path(self.out).parent
        self.w.update_settings(export_dir=str(folder))
        if report.skipped:
            self.w.show_notice("warning", f"Export: {len(report.skipped)} page(s) could not be read and were "
                               f"skipped: {', '.join(n for n, _ in report.skipped[:5])}")
        self.finished.emit("done")

    def _on_failed(self, message: str) -> None:
        self._close()
        if message == "cancelled":
            self.w.show_status("Export cancelled; files already written were kept.")
            self.finished.emit("cancelled")
            return
        self.w.show_notice("error", f"Export failed: {message}")
        self.finished.emit("failed")
