"""Reading pages from the window: `ReadingController(window)` owns the reading worker's host,
submits runs, drawn-box reads and re-reads, shows loading and progress (pages, blocks, ETA) and
the device in use, applies results as undoable edits and drops stale ones.

The worker host keeps the one registry of live requests (`host.live`): results carry request
ids, and a result whose request is no longer wanted (cancelled, another source opened, window
closing) is dropped; progress and Cancel show while any request is live, and hide when the last
one finishes. The controller talks to the window through `EditorWindow` (app.ui.editor.port)
and the document model only; the window places its `progress` and `device_label` in the status
bar and forwards `run_finished`.
"""
from __future__ import annotations

import time
from dataclasses import replace

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel, QProgressBar

from app.core.document import edits
from app.ui.editor.port import EditorWindow
from app.ui.reading.device_status import status_text
from app.ui.reading.run_stats import RunStats
from app.ui.reading.worker import ReadingHost, WorkerConfig

NOTICE_OWNER = "reading"  # the notices a failed read showed: cleared when reading works or the models change


class ReadingController(QObject):
    """Pipeline runs, drawn-box reads, re-reads and the device status of the window."""

    run_finished = Signal(str)  # done | cancelled | failed: a `pages` run ended
    capabilities_found = Signal(dict)  # what this machine offers (for the toolbar's device choices)

    def __init__(self, window: EditorWindow, parent=None):
        super().__init__(parent)
        self.window = window
        self.run_id = 0
        self.run_started = 0.0
        self.run_stats = RunStats(0)  # counts and estimates of the current run (app.ui.reading.run_stats)
        self._preload_started = False
        self._models: tuple | None = None  # the models configured: a change clears their failure's notice
        self.adapter_path = ""  # the OCR adapter read with (app.ui.reading.adapt_control), "" = none
        self.adapted = True
        self.read_differently = (0, 0)  # Read again: blocks whose text changed, blocks read
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.hide()
        self.device_label = QLabel("Models not loaded")
        self.host = ReadingHost(self)
        worker = self.host.worker
        worker.models_loading.connect(self._on_models_loading)
        worker.models_ready.connect(self._on_models_ready)
        worker.device_fell_back.connect(self._on_device_fell_back)
        worker.capabilities.connect(self.capabilities_found)
        worker.preloaded.connect(self._on_preloaded)
        worker.page_read.connect(self._on_page_read)
        worker.region_read.connect(self._on_region_read)
        worker.blocks_read.connect(self._on_blocks_read)
        worker.progressed.connect(self._on_progress)
        worker.failed.connect(self._on_failed)
        self.host.request_finished.connect(self._on_finished)

    # --- the worker -----------------------------------------------------------------------------
    def configure(self, settings, overrides: dict) -> None:
        s = settings
        models = (s.model, s.detector, s.device, s.precision)
        if self._models is not None and self._models != models:
            self.window.clear_notice(NOTICE_OWNER)  # a failure of the models before: not of these
        self._models = models
        self.host.configure(WorkerConfig(model=s.model, detector=s.detector, device=s.device,
                                         precision=s.precision, patches=s.patches, order=s.order,
                                         overrides=dict(overrides), adapter=self.adapter_path,
                                         adapted=self.adapted))

    def preload_once(self) -> None:
        """At the window's first show: imports and model loads start in the worker at once."""
        if not self._preload_started:
            self._preload_started = True
            self.host.preload()

    def busy(self) -> bool:
        return self.host.busy()

    def cancel(self, quiet: bool = False) -> None:
        self.host.cancel(quiet=quiet)

    def stop(self, timeout_ms: int = 30000) -> bool:
        return self.host.stop(timeout_ms)

    # --- requests -------------------------------------------------------------------------------
    def read_box(self, page: str, box) -> None:
        """Read the text in a box drawn on `page`: a new block."""
        self.host.submit("region", self.window.doc.source, {"page": page}, names=(page,), box=tuple(box))
        self._set_busy(f"Reading the new box on {page}…")

    def reread(self, block_ids: list[str], page: str) -> None:
        blocks = tuple(b for b in self.window.doc.page(page).blocks if b.id in set(block_ids))
        if not blocks:
            return
        self.host.submit("blocks", self.window.doc.source, {"page": page}, names=(page,), blocks=blocks)
        self._set_busy(f"Re-reading {len(blocks)} block(s)…")

    def run_pages(self, names: list[str]) -> int:
        """Detect + read `names` in the worker; returns the request id (0 when nothing to do)."""
        doc = self.window.doc
        if not names or not doc.project:
            return 0
        self.window.flush_editors()
        rid = self.host.submit("pages", doc.source, {"pages": list(names)}, names=tuple(names))
        self.run_id, self.run_started = rid, time.monotonic()
        self.run_stats = RunStats(len(names))
        self.progress.setRange(0, len(names))
        self.progress.setValue(0)
        self._set_busy(f"Starting: {len(names)} page(s)…")
        return rid

    def read_again_pages(self, names: list[str]) -> int:
        """Read the boxes of `names` again with the OCR in use, the detector left out (the pages
        keep their blocks, order and translations; a hand edit stays); returns the request id (0
        when nothing to do)."""
        doc = self.window.doc
        if not names or not doc.project:
            return 0
        self.window.flush_editors()
        pages = tuple(doc.page(n) for n in names)
        rid = self.host.submit("read_again", doc.source, {"pages": list(names)}, names=tuple(names), pages=pages)
        self.run_id, self.run_started = rid, time.monotonic()
        self.run_stats = RunStats(len(names))
        self.read_differently = (0, 0)
        self.progress.setRange(0, len(names))
        self.progress.setValue(0)
        self._set_busy(f"Reading again the boxes of {len(names)} page(s)…")
        return rid

    def _set_busy(self, message: str) -> None:
        self.window.show_status(message)
        self.progress.show()
        self.window.update_cancel()

    # --- results --------------------------------------------------------------------------------
    def _stale(self, req_id: int, page_name: str) -> bool:
        """Cancelled, another source open now, the window closing, or the page gone."""
        return not self.host.wanted(req_id) or self.window.closing or not self.window.doc.has_page(page_name)

    def _on_models_loading(self, message: str) -> None:
        self.device_label.setText("Loading models…")
        if not self.host.busy():  # preloading at start-up: the status line stays the user's
            return
        self.window.show_status(message)
        self.progress.setRange(0, 0)  # busy indicator
        self.progress.show()

    def _on_progress(self, req_id: int, p) -> None:
        if req_id != self.run_id or not self.host.wanted(req_id):
            return
        self.progress.setRange(0, max(1, p.pages_total))
        self.progress.setValue(p.pages_done)
        self.run_stats.progressed(p.pages_done)
        eta = self.run_stats.eta_text(p.pages_done)  # models' loading left out
        blocks = f" · blocks {p.blocks_done}/{p.blocks_total}" if p.blocks_total else ""
        self.window.show_status(f"Reading pages {p.pages_done}/{p.pages_total}{blocks}{eta}", log=False)

    def _on_page_read(self, req_id: int, page) -> None:
        if self._stale(req_id, page.name):
            return
        if req_id == self.run_id:
            self.run_stats.page_read()
        old = self.window.doc.page(page.name)
        new = replace(old, error=page.error) if page.error else edits.read_again(
            old, replace(page, width=page.width or old.width, height=page.height or old.height))
        self.window.edit(lambda _p: new, f"read {page.name}", page=page.name)

    def _on_region_read(self, req_id: int, page_name: str, block, panels=()) -> None:
        if self._stale(req_id, page_name):
            return
        doc = self.window.doc
        page = doc.page(page_name)
        order = doc.project.order if doc.project else "rtl"
        new = edits.add_block_in_reading_order(page, block, order, panels or None)
        added = next(b.id for b in new.blocks if b.id not in {old.id for old in page.blocks})
        self.window.edit(lambda _p: new, "add block", page=page_name)
        if page_name == self.window.current:
            self.window.select_block(added)

    def _on_blocks_read(self, req_id: int, page_name: str, blocks) -> None:
        if self._stale(req_id, page_name):
            return
        page = self.window.doc.page(page_name)
        new = edits.take_reading(page, blocks)  # a block moved or deleted since: its result is stale
        if req_id == self.run_id:  # a page of Read again
            self.run_stats.page_read()
            changed, seen = self.read_differently
            self.read_differently = (changed + sum(a.display_text != b.display_text for a, b in
                                                   zip(page.blocks, new.blocks, strict=True)), seen + len(blocks))
        if new != page:
            self.window.edit(lambda _p: new, f"read {page_name} again" if req_id == self.run_id else "re-read block",
                             page=page_name)

    def _on_failed(self, req_id: int, message: str) -> None:
        if self.host.wanted(req_id) and not self.window.closing:
            self.window.record_error(message)
            if self.device_label.text() == "Loading models…":
                self.device_label.setText("Models not loaded")
            self.window.show_notice("error", message, owner="reading")  # cleared by the next run that ends done

    def _on_finished(self, req_id: int, status: str, ctx: dict) -> None:
        """From the host's registry, once the worker is done with `req_id` (wanted or not)."""
        if self.window.closing:
            return
        if not self.host.busy():
            self.progress.hide()
            self.window.update_cancel()
        if ctx.get("background"):
            return  # nobody asked for it: nothing to say
        done = {"done": "Done", "cancelled": "Cancelled", "failed": "Failed"}.get(status, status)
        if status == "done" and not ctx.get("quiet"):
            self.window.clear_notice("reading")  # what failed before (a model missing) works now
        if ctx["kind"] in ("pages", "read_again"):
            if not ctx.get("quiet"):  # quiet: a run of the source that was open before this one
                summary = (self.run_stats.summary(status) if req_id == self.run_id
                           else f"{done}: {len(ctx['pages'])} page(s)")
                if ctx["kind"] == "read_again" and req_id == self.run_id:
                    summary += "; boxes kept, {} of {} block(s) read differently".format(*self.read_differently)
                self.window.show_status(summary)
            self.run_finished.emit(status)
        elif not ctx.get("quiet"):
            self.window.show_status(done)

    # --- the device -----------------------------------------------------------------------------
    def _on_models_ready(self, info: dict) -> None:
        label, tip = status_text(info)
        self.device_label.setText(label)
        self.device_label.setToolTip(tip)

    def _on_device_fell_back(self, message: str) -> None:
        if not self.window.closing:
            self.window.show_notice("warning", message)

    def _on_preloaded(self, reason: str) -> None:
        """The start-up preload ended; on failure the label says so (a request will retry and
        report the error where the user asked for something)."""
        if reason and not self.window.closing and self.device_label.text() == "Loading models…":
            self.device_label.setText("Models not loaded")
            self.device_label.setToolTip(reason)
