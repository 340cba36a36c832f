"""What the window's exports share: `BackgroundExport`, one export at a time run on a pool thread
with a modal progress dialog and Cancel that closes however the export ends, the failure or the
cancel said in the window. Used by File > Export > Translated pages (app.ui.render.export) and the
mokuro / reader-page exports (app.ui.shell.reader_export); each says only what it writes and what
the window shows when it is done."""
from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal
from PySide6.QtWidgets import QProgressDialog

from app.errors import Cancelled, UserError


class ExportSignals(QObject):
    progressed = Signal(int, int, str)  # pages done, pages in all, the page's name
    finished = Signal(object)  # what the export returned (its report)
    failed = Signal(str)  # "cancelled", or the error's message


class ExportJob(QRunnable):
    """Runs `work(progress, cancel) -> report` on a pool thread; the report, "cancelled" or the
    error's message come back through `signals`."""

    def __init__(self, signals: ExportSignals, work, cancel: threading.Event):
        super().__init__()
        self.signals, self.work, self.cancel = signals, work, cancel

    def run(self) -> None:
        progress = lambda d, t, n: self.signals.progressed.emit(d, t, n)  # noqa: E731
        try:
            self.signals.finished.emit(self.work(progress, self.cancel.is_set))
        except Cancelled:
            self.signals.failed.emit("cancelled")
        except (UserError, OSError) as exc:
            self.signals.failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - thread boundary: report to the window
            self.signals.failed.emit(f"{type(exc).__name__}: {exc}")


class ExportProgress:
    """The progress dialog of one export: shown after `min_ms`, Cancel sets `cancel`; `close()`
    takes it off the screen (auto-close is off, so that the last page's progress does not close
    it before the files are complete)."""

    def __init__(self, cancel: threading.Event):
        self.cancel = cancel
        self.dialog: QProgressDialog | None = None

    def open(self, parent, title: str, label: str, maximum: int, min_ms: int) -> None:
        dialog = self.dialog = QProgressDialog(label, "Cancel", 0, max(1, maximum), parent)
        dialog.setWindowTitle(title)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setMinimumDuration(min_ms)
        dialog.setAutoReset(False)
        dialog.setAutoClose(False)
        dialog.canceled.connect(self.cancel.set)

    def update(self, done: int, total: int, name: str) -> None:
        dialog = self.dialog
        if dialog is not None:
            dialog.setMaximum(total)
            dialog.setLabelText(f"Page {done} of {total}: {name}")
            dialog.setValue(done)  # may process events (a modal dialog): keep this last

    def close(self) -> None:
        dialog, self.dialog = self.dialog, None
        if dialog is not None:
            try:
                dialog.canceled.disconnect(self.cancel.set)  # closing it is not a Cancel
            except (RuntimeError, TypeError):
                pass
            dialog.reset()
            dialog.hide()
            dialog.deleteLater()


class BackgroundExport(QObject):
    """Runs exports for `window` on `pool`, one at a time: `start(title, label, pages, work)` opens
    the progress dialog (shown after `min_ms`) and runs `work(progress, cancel) -> report` on the
    pool; `on_done(report)` says in the window what was written. A cancel or a failure is said
    in the status bar or a notice here. `finished` says how each export ended: "done" |
    "cancelled" | "failed"."""

    finished = Signal(str)

    def __init__(self, window, pool: QThreadPool, on_done: Callable[[object], None], min_ms: int = 300):
        super().__init__(window)
        self.window, self.pool, self.on_done, self.min_ms = window, pool, on_done, min_ms
        self.signals = ExportSignals(self)
        self.signals.progressed.connect(self._on_progress)
        self.signals.finished.connect(self._on_finished)
        self.signals.failed.connect(self._on_failed)
        self.cancel = threading.Event()
        self.progress = ExportProgress(self.cancel)

    @property
    def dialog(self) -> QProgressDialog | None:
        """The progress dialog while an export runs (None when none does)."""
        return self.progress.dialog

    def start(self, title: str, label: str, pages: int, work) -> None:
        self.cancel.clear()
        self.progress.open(self.window, title, label, pages, self.min_ms)
        self.pool.start(ExportJob(self.signals, work, self.cancel))

    def _on_progress(self, done: int, total: int, name: str) -> None:
        self.progress.update(done, total, name)

    def _on_finished(self, report) -> None:
        self.progress.close()
        self.on_done(report)
        self.finished.emit("done")

    def _on_failed(self, message: str) -> None:
        self.progress.close()
        if message == "cancelled":
            self.window.show_status("Export cancelled; files already written were kept.")
            self.finished.emit("cancelled")
            return
        self.window.show_notice("error", f"Export failed: {message}", owner="export")
        self.finished.emit("failed")
