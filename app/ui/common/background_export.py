"""What the window's exports share: the job that runs an export on a pool thread, and the modal
progress dialog with Cancel that closes however the export ends. Used by File > Export >
Translated pages (app.ui.render.export) and the mokuro / reader-page exports
(app.ui.shell.reader_export)."""
from __future__ import annotations

import threading

from PySide6.QtCore import QObject, QRunnable, Qt, Signal
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
