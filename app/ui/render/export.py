"""File > Export > Translated pages: images, CBZ, PDF, layered PSD, written by
app.core.exports.translated_pages.export_translated (what `hayai-desktop render` runs) on a thread-pool
thread, with a progress dialog and Cancel."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMenu

from app.ui.common.background_export import BackgroundExport

IMAGE_CHOICES = (("PNG", "png"), ("JPEG", "jpg"), ("WebP (lossless)", "webp"))


class PageExporter(QObject):
    """The menu entries and the running export (one at a time). The progress dialog closes when
    the export ends, however it ends; the file dialogs start where the last export went."""

    finished = Signal(str)  # "done" | "cancelled" | "failed" (tests)
    MIN_DURATION_MS = 300  # the progress dialog shows when an export takes longer than this

    def __init__(self, window, controller):
        super().__init__(window)
        self.window, self.ctl = window, controller
        self.export = BackgroundExport(window, controller.pool, self._on_finished, self.MIN_DURATION_MS)
        self.export.finished.connect(self.finished)
        self.signals = self.export.signals
        self.last_report = None
        menu = QMenu("&Translated pages")  # File > Export places it (the window's shell)
        menu.addAction("As images (PNG, JPEG, WebP)…", lambda: self.choose("images"))
        menu.addAction("As CBZ…", lambda: self.choose("cbz"))
        menu.addAction("As PDF…", lambda: self.choose("pdf"))
        menu.addAction("As layered PSD…", lambda: self.choose("psd"))
        self.menu = menu

    def choose(self, kind: str) -> None:
        w = self.window
        if w.doc.project is None:
            return
        from app.core.config.settings import export_folder

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

        w = self.window
        w.flush_editors()
        project = replace(w.doc.project, pages=list(w.doc.project.pages))  # a snapshot: edits go on
        self.out, self.fmt = out, fmt
        from app.ui.render.view import options_for

        engine_name, engines, options = self.ctl.engine_name(), self.ctl._engines, options_for("translated", w.settings)

        def work(progress, cancel):
            from app.core.exports.translated_pages import export_translated
            from app.render.inpaint import load_inpainter

            engine = engines.get(engine_name) or load_inpainter(engine_name)
            engines[engine_name] = engine
            return export_translated(project, fmt, out, engine, options, progress=progress, cancel=cancel)

        self.export.start("Export translated pages", "Rendering pages…", len(project.pages), work)

    @property
    def dialog(self):
        """The progress dialog while an export runs (None when none does)."""
        return self.export.dialog

    def _on_finished(self, report) -> None:
        self.last_report = report
        note = ""
        if report.skipped:
            note += f"; {len(report.skipped)} page(s) skipped ({report.skipped[0][0]}: {report.skipped[0][1]})"
        if report.below_min:
            note += f"; {report.below_min} block(s) set below their minimum size ({report.below_min_text()})"
        self.window.show_status(f"Exported {len(report.written)} file(s) to {self.out}{note}.")
        folder = Path(self.out) if self.fmt not in ("cbz", "pdf") else Path(self.out).parent
        self.window.update_settings(export_dir=str(folder))
        if report.skipped:
            self.window.show_notice("warning", f"Export: {len(report.skipped)} page(s) could not be read and were "
                                    f"skipped: {', '.join(n for n, _ in report.skipped)}", owner="export")
        else:
            self.window.clear_notice("export")  # an earlier export's failure is over
