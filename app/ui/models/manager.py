"""The model manager: installed and available models (app.models.store), download with byte progress
and Cancel, verify, remove, import a folder, where the files live.

Downloads, verification and imports (hashing hundreds of MB) run on the dialog's own QThread, and
Cancel stops each of them between chunks. Closing the dialog cancels the running task and never
waits for it: the hidden dialog and its thread live on until the task has noticed the cancel (the
next chunk of a download, at most the network's read timeout), then the thread ends and
`dispose()` deletes the dialog. At exit the main window waits for such threads, bounded.
"""
from __future__ import annotations

import threading

from PySide6.QtCore import QDeadlineTimer, QObject, Qt, QThread, QUrl, Signal, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from app.errors import Cancelled, UserError
from app.ui.common.screens import fit_dialog
from app.ui.common.threads import track_thread
from app.ui.common.widgets import WrappedLabel
from app.ui.models import guide as model_guide
from app.ui.models import status as model_status
from app.ui.models.status import human_size


class TaskRunner(QObject):
    """Runs one callable at a time on its thread; `fn(progress, cancel)` -> result."""

    progressed = Signal(str, object, object)  # file, bytes done, bytes total (ints; object avoids 32-bit overflow)
    succeeded = Signal(str, object)  # task label, result
    failed = Signal(str, str)  # task label, message ("" message = cancelled)

    @Slot(str, object, object)
    def run(self, label: str, fn, cancel: threading.Event) -> None:
        try:
            result = fn(lambda f, done, total: self.progressed.emit(f, done, total), cancel.is_set)
        except Cancelled:
            self.failed.emit(label, "")
        except UserError as exc:
            self.failed.emit(label, str(exc))
        except Exception as exc:  # noqa: BLE001 - thread boundary: shown to the user
            self.failed.emit(label, f"{type(exc).__name__}: {exc}")
        else:
            self.succeeded.emit(label, result)


class ModelManagerDialog(QDialog):
    model_chosen = Signal(str)  # an OCR model name or folder to use
    detector_chosen = Signal(str)
    task_done = Signal(str, str)  # label, "ok" | "cancelled" | error message (tests)
    _submit = Signal(str, object, object)

    COLUMNS = ("Model", "Kind", "Size", "Status", "Location")

    def __init__(self, parent=None):
        super().__init__(parent)
        from app.models import store

        self.store = store
        self.trust_answer: bool | None = None  # tests: answer the "trust an unpinned file" question
        self.setWindowTitle("Models")
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setHorizontalHeaderLabels(self.COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        for column in (0, 1, 2):  # name, kind (what a detector finds), size: whole
            self.table.horizontalHeader().setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.info = QLabel()
        self.info.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.hide()
        self.progress_label = WrappedLabel()  # errors name files and folders: they wrap
        self.buttons = {}
        row = QHBoxLayout()
        for key, label, slot in (("download", "Download", self._on_download), ("cancel", "Cancel", self._on_cancel),
                                 ("verify", "Verify", self._on_verify), ("remove", "Remove", self._on_remove),
                                 ("import", "Import folder…", self._on_import), ("use", "Use this model", self._on_use),
                                 ("show", "Show files", self._on_show)):
            b = QPushButton(label)
            b.clicked.connect(slot)
            row.addWidget(b)
            self.buttons[key] = b
        row.addStretch(1)
        close = QPushButton("Close")
        close.clicked.connect(self.accept)
        row.addWidget(close)
        lay = QVBoxLayout(self)
        lay.addWidget(WrappedLabel(f"Models are stored in {store.models_dir()} "
                                   f"(models in the Hugging Face cache {store.hf_cache_dir()} are found too)."))
        self.guide = QLabel(model_guide.CHOOSING)
        self.guide.setWordWrap(True)
        lay.addWidget(self.guide)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.info)
        lay.addWidget(self.progress_label)
        lay.addWidget(self.progress)
        lay.addLayout(row)

        self._thread = track_thread(QThread(), wait_at_exit=True)
        self._thread.setObjectName("model-manager")
        self._runner = TaskRunner()
        self._runner.moveToThread(self._thread)
        self._submit.connect(self._runner.run, Qt.ConnectionType.QueuedConnection)
        self._runner.progressed.connect(self._on_progress)
        self._runner.succeeded.connect(self._on_succeeded)
        self._runner.failed.connect(self._on_failed)
        self._thread.start()
        self._cancel = threading.Event()
        self._busy = ""
        self.bundled: dict[str, tuple[str, object]] = {}  # name -> (kind, path) of the demo models
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.refresh()
        self.resize(920, 420)

    # --- table ---------------------------------------------------------------------------------
    def refresh(self) -> None:
        installed = self.store.installed_models()
        current = self.selected_name()
        self.table.setRowCount(0)
        by_kind = sorted(self.store.MODELS.items(), key=lambda kv: self.store.KINDS.index(kv[1].kind))
        for name, entry in by_kind:
            r = self.table.rowCount()
            self.table.insertRow(r)
            where = installed.get(name)
            status = ("installed" + (" (Hugging Face cache)" if where[1] == "hf-cache" else "")) if where \
                else "not installed"
            kind = self.store.KIND_LABELS[entry.kind]
            if model_guide.finds(name):
                kind = f"Detector: {model_guide.finds(name)}" + (
                    " (recommended)" if name == model_guide.RECOMMENDED_DETECTOR else "")
            values = (name, kind,
                      human_size(entry.size) if entry.size else ("about 620 MB" if entry.kind == "ocr" else
                                                                 model_guide.size_text(name) or "not listed"),
                      status, str(where[0]) if where else "")
            for c, v in enumerate(values):
                item = QTableWidgetItem(v)
                item.setToolTip(f"{entry.description}\n{entry.repo_id}@{entry.revision[:12]}"
                                + ("" if entry.pinned else "\nno pinned sha256: trusted on first download"))
                self.table.setItem(r, c, item)
            if name == current:
                self.table.selectRow(r)
        self._add_bundled(current)
        if self.table.currentRow() < 0 and self.table.rowCount():
            self.table.selectRow(0)
        self._update_buttons()

    def _add_bundled(self, current: str) -> None:
        """The demo models that come with the app: a choice like the others (Use this model),
        nothing to download, verify or remove."""
        for kind, path in model_status.demo_models().items():
            name = path.stem if kind == "detector" else path.name
            self.bundled[name] = (kind, path)
            r = self.table.rowCount()
            self.table.insertRow(r)
            size = sum(f.stat().st_size for f in ([path] if path.is_file() else path.rglob("*")) if f.is_file())
            values = (name, f"{'OCR' if kind == 'ocr' else 'Detector'} ({model_status.DEMO_LABEL})", human_size(size),
                      "bundled", str(path))
            for c, v in enumerate(values):
                item = QTableWidgetItem(v)
                item.setToolTip("A small demo model trained on synthetic text only: it reads the sample pages, "
                                "not real manga")
                self.table.setItem(r, c, item)
            if name == current:
                self.table.selectRow(r)

    def selected_name(self) -> str:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        return self.table.item(rows[0].row(), 0).text() if rows else ""

    def select(self, name: str) -> None:
        for r in range(self.table.rowCount()):
            if self.table.item(r, 0).text() == name:
                self.table.selectRow(r)

    def _update_buttons(self) -> None:
        name = self.selected_name()
        if name in self.bundled:
            for key, button in self.buttons.items():
                button.setEnabled(key in ("use", "show") and not self._busy)
            self.info.setText(f"<b>{name}</b>: bundled demo model ({model_status.DEMO_LABEL}). It reads the "
                              "synthetic sample pages (Help > Open the demo pages); on real manga it misreads.")
            return
        installed = bool(name) and name in self.store.installed_models()
        busy = bool(self._busy)
        self.buttons["download"].setEnabled(bool(name) and not busy)
        self.buttons["cancel"].setEnabled(busy)
        for key in ("verify", "remove", "use", "show"):
            self.buttons[key].setEnabled(installed and not busy)
        if name and self.store.MODELS[name].kind not in ("ocr", "detector"):
            self.buttons["use"].setEnabled(False)  # translation / inpainting models are used where they apply
        self.buttons["import"].setEnabled(bool(name) and not busy)
        if name:
            e = self.store.MODELS[name]
            advice = f" {model_guide.advice(name)}" if model_guide.advice(name) else ""
            self.info.setText(f"<b>{name}</b>: {e.description}.{advice} {e.repo_id} at {e.revision[:12]}; "
                              f"license {e.license or 'not stated'}.")

    # --- actions ------------------------------------------------------------------------------
    def _start(self, label: str, fn) -> None:
        self._busy = label
        self._cancel = threading.Event()
        self.progress.setRange(0, 0)
        self.progress.show()
        self.progress_label.setText(f"{label}…")
        self._update_buttons()
        self._submit.emit(label, fn, self._cancel)

    def start_download(self, name: str) -> None:
        """Download `name` into the store (asks before trusting an unpinned detector file)."""
        self.select(name)
        entry = self.store.MODELS[name]
        trust = entry.pinned or self._confirm_trust(entry)
        if not trust:
            return
        store = self.store
        self._start(f"Downloading {name}",
                    lambda progress, cancel: store.download(name, progress, cancel, trust_unpinned=not entry.pinned))

    def _confirm_trust(self, entry) -> bool:
        if self.trust_answer is not None:
            return self.trust_answer
        return QMessageBox.question(
            self, "Download an unverified file?",
            f"{entry.name} ({entry.repo_id}) has no checksum pinned by Hayai Desktop, and a detector .pt file "
            "can run code when loaded. Download it only if you trust that repository.\n\nDownload it?",
        ) == QMessageBox.StandardButton.Yes

    def _on_download(self) -> None:
        if self.selected_name():
            self.start_download(self.selected_name())

    def _on_cancel(self) -> None:
        self._cancel.set()
        self.progress_label.setText("Cancelling…")

    def _on_verify(self) -> None:
        name, store = self.selected_name(), self.store
        self._start(f"Verifying {name}", lambda progress, cancel: store.verify(name, progress, cancel))

    def _on_remove(self) -> None:
        name = self.selected_name()
        if QMessageBox.question(self, "Remove model", f"Delete {name} from {self.store.models_dir()}?") \
                == QMessageBox.StandardButton.Yes:
            self.remove(name)

    def remove(self, name: str) -> None:
        try:
            removed = self.store.remove(name)
        except (UserError, OSError) as exc:
            self.progress_label.setText(f"Could not remove {name}: {exc}")
        else:
            self.progress_label.setText(f"Removed {name}." if removed else
                                        f"{name} is not in the app's store (the Hugging Face cache is left alone).")
        self.refresh()

    def _on_import(self) -> None:
        name = self.selected_name()
        entry = self.store.MODELS[name]
        if entry.kind == "detector":
            path, _ = QFileDialog.getOpenFileName(self, f"Import {name}", "", "YOLO model (*.pt)")
        else:
            path = QFileDialog.getExistingDirectory(self, f"Import a folder as {name}")
        if path:
            self.import_path(name, path)

    def import_path(self, name: str, path: str) -> None:
        store = self.store
        self._start(f"Importing {name}",
                    lambda progress, cancel: store.import_folder(path, name, progress, cancel))

    def _on_use(self) -> None:
        name = self.selected_name()
        if name in self.bundled:
            kind, path = self.bundled[name]
            (self.model_chosen if kind == "ocr" else self.detector_chosen).emit(str(path))
            self.progress_label.setText(f"Using {name} ({model_status.DEMO_LABEL}).")
            return
        entry = self.store.MODELS[name]
        if entry.kind not in ("ocr", "detector"):
            return
        (self.model_chosen if entry.kind == "ocr" else self.detector_chosen).emit(name)
        self.progress_label.setText(f"Using {name}.")

    def _on_show(self) -> None:
        bundled = self.bundled.get(self.selected_name())
        where = (bundled[1],) if bundled else self.store.installed_models().get(self.selected_name())
        if where:
            folder = where[0] if where[0].is_dir() else where[0].parent
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

    # --- results --------------------------------------------------------------------------------
    def _on_progress(self, file: str, done, total) -> None:
        if total:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * done / total))
        self.progress_label.setText(f"{self._busy}: {file} {human_size(done)} of {human_size(total)}")

    def _on_succeeded(self, label: str, result) -> None:
        self._busy = ""
        self.progress.hide()
        if isinstance(result, list):  # verify rows
            bad = [f"{f}: {why}" for f, ok, why in result if not ok]
            self.progress_label.setText("All files verified." if not bad else "Problems: " + "; ".join(bad))
        else:
            self.progress_label.setText(f"{label}: done ({result}).")
        self.refresh()
        self.task_done.emit(label, "ok")

    def _on_failed(self, label: str, message: str) -> None:
        self._busy = ""
        self.progress.hide()
        self.progress_label.setText(f"{label}: cancelled." if not message else f"{label} failed: {message}")
        self.refresh()
        self.task_done.emit(label, message or "cancelled")

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        fit_dialog(self)  # 920 px wide by default: narrower on a small screen
        super().showEvent(event)

    def done(self, result: int) -> None:
        self.stop()
        super().done(result)

    def stop(self) -> bool:
        """Cancel the running task and stop the thread without waiting for a busy one: an idle
        thread ends at once (True); a busy one ends by itself once its task has noticed the
        cancel (False now)."""
        self._cancel.set()
        self._thread.quit()
        if self._busy:
            return False
        return self._thread.wait(QDeadlineTimer(2000))  # an idle event loop quits at once

    def winding_down(self) -> bool:
        """True while a cancelled task still runs on the dialog's thread."""
        return self._thread.isRunning()

    def dispose(self) -> None:
        """Delete the dialog once its thread has ended (now, or when the cancelled task ends)."""
        if self._thread.isRunning():
            self._thread.finished.connect(self.deleteLater)
        else:
            self.deleteLater()
