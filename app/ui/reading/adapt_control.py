"""The Series menu's OCR part: teach the OCR the user's corrections, read with the adapter or
without it, go back to the adapter before this one, read again the pages not edited by hand,
mark a page checked.

`AdaptController(window, reading)` owns the actions; the shell puts them in the Series menu.
Teaching runs in the reading worker (a request of kind "adapt": progress, time left and Cancel
like a reading run; the window stays usable; Series > Stop teaching ends the training where it
is and keeps the best epoch so far, where Cancel keeps nothing); the adapter it writes (app.core.reading.
corrections: beside the series file or the project) is then read with at once, and the model
box says "… + adapted to SERIES". The adapter of a volume opened later is found the same way.
After a save the worker looks, in the background, at the crops the next teaching will look at
(`look_ahead`), and anything the user asks for cancels that.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMessageBox

from app.core.document import edits
from app.ui.editor.port import EditorWindow


class AdaptWindow(EditorWindow, Protocol):
    """What teaching needs of the window beyond EditorWindow."""

    session: object  # app.ui.shell.session.SessionController: save() -> bool
    current: str

    def configure_worker(self) -> None: ...


class AdaptController(QObject):
    taught = Signal(object, str)  # app.ocr.adapt.AdaptResult, the adapter's path ("" = none kept)

    def __init__(self, window: AdaptWindow, reading, parent=None):
        super().__init__(parent)
        self.window = window
        self.reading = reading
        self.req_id = 0
        self._stage, self._stage_started = "", 0.0  # the stage being reported, since when
        self.last_report = ""
        self.teach = QAction("&Teach the OCR my corrections…", self)
        self.teach.setStatusTip("Adapt the OCR model to the text corrected by hand in this series' volumes")
        self.teach.triggered.connect(self.start_teaching)
        self._stop = threading.Event()
        self.stop_teaching = QAction("&Stop teaching and keep what it learned", self)
        self.stop_teaching.setStatusTip("End the training now: the best epoch so far is checked and kept if it reads "
                                        "better (Cancel keeps nothing)")
        self.stop_teaching.setEnabled(False)
        self.stop_teaching.triggered.connect(self._on_stop)
        self.use_adapter = QAction("Read with the &adapted OCR", self)
        self.use_adapter.setCheckable(True)
        self.use_adapter.setChecked(True)
        self.use_adapter.setEnabled(False)
        self.use_adapter.toggled.connect(self._on_toggled)
        self.step_back = QAction("Go &back to the adapter before this one", self)
        self.step_back.setStatusTip("Read with the adapter the last teaching replaced; the newer one is kept, and "
                                    "the same again goes forward to it")
        self.step_back.setEnabled(False)
        self.step_back.triggered.connect(self.go_back)
        self.read_unedited = QAction("Read &again the pages not edited by hand", self)
        self.read_unedited.setStatusTip("Their boxes are read again with the OCR in use, adapted or not: the detector "
                                        "is not run, and hand edits and checked pages are left as they are")
        self.read_unedited.triggered.connect(self.read_again_unedited)
        self.mark_checked = QAction("&Mark page checked", self)
        self.mark_checked.setShortcut(QKeySequence("Ctrl+Shift+Return"))
        self.mark_checked.setStatusTip("Its text is right: blocks left as read count as confirmed when teaching the OCR")
        self.mark_checked.setCheckable(True)
        self.mark_checked.triggered.connect(self._on_mark_checked)
        worker = reading.host.worker
        worker.adapt_progressed.connect(self._on_progress)
        worker.adapt_done.connect(self._on_done)
        self._ahead_id = 0
        self._ahead_of: tuple = ()  # what the last look ahead looked at (the saved corrections)
        reading.host.request_finished.connect(self._on_finished)

    def actions(self) -> list:
        return [self.teach, self.stop_teaching, self.use_adapter, self.step_back, self.read_unedited, None,
                self.mark_checked]

    # --- teaching -------------------------------------------------------------------------------
    def target(self) -> str:
        """What is taught: the series' folder when the volume has a series file, else the volume."""
        from app.core.reading.corrections import SERIES_FILE
        from app.core.translation.series import find_series_file

        source = self.window.doc.source
        series = find_series_file(source)
        return str(series) if series is not None and series.name == SERIES_FILE else source

    def start_teaching(self) -> None:
        doc = self.window.doc
        if not doc.project or self.reading.host.busy("adapt"):
            return
        self.window.flush_editors()
        if not self.window.session.save():  # it said why; the corrections are read from the saved project
            return
        self._stage = ""  # a new teaching: each stage's time counted from its own start
        self._stop = threading.Event()
        self.req_id = self.reading.host.submit("adapt", self.target(), {}, stop=self._stop)
        self.stop_teaching.setEnabled(True)
        self.step_back.setEnabled(False)  # the run may replace the adapter
        self.reading.progress.setRange(0, 0)
        self.reading.progress.show()
        self.window.show_status("Teaching the OCR your corrections…")
        self.window.update_cancel()

    def look_ahead(self) -> bool:
        """After a save: when nothing else runs and the volume has corrections not looked at yet,
        the worker looks at the crops the next teaching will look at, in the background (their
        features remembered, app.ocr.feature_cache), so that teaching starts learning at once.
        Anything the user asks for cancels it. True when it was started."""
        from app.ocr.feature_cache import default_cache

        doc = self.window.doc
        if not doc.project or self.reading.host.busy() or self.reading.host.busy("look_ahead"):
            return False
        corrected = tuple((p.name, b.id, b.text) for p in doc.project.pages for b in p.blocks if b.edited)
        if not corrected:
            return False
        key = (doc.source, corrected, tuple(p.name for p in doc.project.pages if p.checked))
        if key == self._ahead_of or default_cache() is None:
            return False
        self._ahead_of = key
        self._ahead_id = self.reading.host.submit("look_ahead", self.target(), {"background": True})
        self.window.show_status(f"Looking at {len(corrected)} corrected block{'s' if len(corrected) != 1 else ''} "
                                "for the next teaching", owner="look_ahead", log=False)  # a reading comes first
        return True

    def _on_progress(self, req_id: int, stage: str, done: int, total: int) -> None:
        if req_id != self.req_id or not self.reading.host.wanted(req_id) or self.window.closing:
            return
        if total <= 0:
            self.reading.progress.setRange(0, 0)
            self.window.show_status("Teaching the OCR: loading the model…")
            return
        if self._stop.is_set():
            return  # the status says it is stopping
        self.reading.progress.setRange(0, total)
        self.reading.progress.setValue(done)
        what = {"features": "looking at the corrected blocks and the drawn print", "training": "learning",
                "again": "learning again, the held-out too",
                "comparing": "weighing the new adapter against the one you had"}.get(stage, stage)
        if stage != self._stage:
            self._stage, self._stage_started = stage, time.monotonic()
        left = ""
        if stage in ("training", "again") and done:  # from this stage's start: the crops' features took their own time
            secs = (time.monotonic() - self._stage_started) * (total - done) / done
            # "at most" while learning: it stops when it stops improving; learning again runs its epochs
            bound = "at most" if stage == "training" else "about"
            left = f" · {bound} {max(1, round(secs / 60))} min left" if secs >= 60 else f" · {bound} {secs:.0f} s left"
        # a count, so not logged in the Messages at every step; short enough for the status line of a
        # 1400-pixel window beside the bar
        self.window.show_status(f"Teaching the OCR: {what} {done}/{total}{left}", log=False)

    def _on_done(self, req_id: int, result, path: str) -> None:
        if not self.reading.host.wanted(req_id) or self.window.closing:
            return
        self.last_report = result.summary()
        if path:
            self.reading.adapter_path, self.reading.adapted = path, True
            self.use_adapter.setEnabled(True)
            self.use_adapter.setChecked(True)
            self.window.configure_worker()
            self.reading.host.preload()  # loads it now: the model box says so
        self.taught.emit(result, path)
        box = QMessageBox(QMessageBox.Icon.Information if path else QMessageBox.Icon.Warning,
                          "Teach the OCR", self.last_report, parent=self.window)
        if path:
            kept = (f" The one it replaced is kept as {Path(result.replaced).name}: Series > Go back to the "
                    "adapter before this one reads with it again." if result.replaced else "")
            box.setInformativeText(f"The adapter is {path}; delete it to undo.{kept} Read again the pages not "
                                   "edited by hand to use it on them (Series menu).")
        box.open()

    def _on_stop(self) -> None:
        if self.reading.host.busy("adapt") and not self._stop.is_set():
            self._stop.set()
            self.stop_teaching.setEnabled(False)
            self.window.show_status("Teaching the OCR: stopping; reading what it learned so far…")

    def _on_finished(self, req_id: int, status: str, ctx: dict) -> None:
        if ctx.get("kind") == "look_ahead" and req_id == self._ahead_id:
            if not self.window.closing:
                self.window.clear_status("look_ahead")
            if status != "done":
                self._ahead_of = ()  # cut short: the next save looks again
        if ctx.get("kind") == "adapt" and req_id == self.req_id:
            self.stop_teaching.setEnabled(False)
            self._update_step_back()
        if ctx.get("kind") == "adapt" and status == "cancelled" and not self.window.closing:
            self.window.show_status("Teaching cancelled: nothing changed")

    # --- the adapter ----------------------------------------------------------------------------
    def source_opened(self) -> bool:
        """A volume opened: its adapter (if any) is read with. True when that changes the model the
        worker should have loaded (the caller configures the worker, then preloads it)."""
        from app.core.reading.corrections import find_adapter

        doc = self.window.doc
        before = (self.reading.adapter_path, self.reading.adapted)
        found = find_adapter(doc.source) if doc.source else None
        self.reading.adapter_path = str(found) if found else ""
        self.use_adapter.setEnabled(found is not None)
        self._update_step_back()
        self.reading.adapted = self.use_adapter.isChecked()
        return (self.reading.adapter_path, self.reading.adapted) != before and bool(found or before[0])

    def _update_step_back(self) -> None:
        from app.core.reading.corrections import previous_path

        path = self.reading.adapter_path
        self.step_back.setEnabled(bool(path) and previous_path(Path(path)).is_file()
                                  and not self.reading.host.busy("adapt"))

    def go_back(self) -> bool:
        """The adapter and the one the last teaching replaced change places; read with at once."""
        from app.core.reading.corrections import step_back
        from app.errors import UserError

        path = self.reading.adapter_path
        if not path or self.reading.host.busy("adapt"):
            return False
        try:
            other = step_back(path)
        except UserError as exc:
            QMessageBox.warning(self.window, "Go back to the adapter before this one", str(exc))
            self._update_step_back()
            return False
        self.window.configure_worker()
        self.reading.host.preload()  # the worker loads the file now at that path
        older = other.is_file() and Path(path).stat().st_mtime_ns <= other.stat().st_mtime_ns  # renames keep times
        self.window.show_status(("Reading with the adapter you had before (Go back again returns to the newer one)"
                                 if older else "Reading with the newer adapter again")
                                + ". Series > Read again… uses it on the unedited pages.")
        return True

    def _on_toggled(self, on: bool) -> None:
        self.reading.adapted = bool(on)
        self.window.configure_worker()
        if self.reading.adapter_path:
            self.reading.host.preload()  # switched at once (no reload): the model box says so

    def read_again_unedited(self) -> int:
        """Read again, with the OCR in use (adapted or not), the boxes of every read page none of
        whose blocks was edited by hand and that is not marked checked (its text, as read, is
        what the user confirmed: reading it again could only replace confirmed text, and the
        page's mark with it). The detector is not run: the pages keep their blocks (the boxes a
        user drew or moved too), their order and their translations."""
        doc = self.window.doc
        if not doc.project:
            return 0
        self.window.flush_editors()
        names = [p.name for p in doc.project.pages
                 if p.processed and not p.checked and not any(b.edited for b in p.blocks)]
        if not names:
            self.window.show_status("Every read page has text edited by hand or is marked checked: nothing read again")
            return 0
        return self.reading.read_again_pages(names)

    def _on_mark_checked(self, on: bool) -> None:
        page = self.window.current
        if page:
            self.window.edit(lambda p: edits.set_checked(p, on), "mark page checked" if on else "unmark page",
                             page=page)

    def page_shown(self, page) -> None:
        self.mark_checked.setChecked(bool(page is not None and page.checked))
