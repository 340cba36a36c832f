"""Running the pipeline from the main window: submit requests to the worker, show loading and
progress (pages, blocks, ETA), apply results as undoable edits, drop stale ones.

A mixin of MainWindow (which owns `host`, `doc`, the status widgets). The worker host keeps the
one registry of live requests (`host.live`): results carry request ids, and a result whose
request is no longer wanted (cancelled, another source opened, window closing) is dropped;
progress and Cancel show while any request is live, and hide when the last one finishes.
"""
from __future__ import annotations

import time
from dataclasses import replace

from app.core import edits
from app.ui.editor.canvas import Mode
from app.ui.reading.run_stats import RunStats


class RunMixin:
    """Pipeline runs, drawn-box reads and re-reads for MainWindow."""

    def _on_box_drawn(self, box) -> None:
        if not self.current:
            return
        self.host.submit("region", self.doc.source, {"page": self.current}, names=(self.current,), box=tuple(box))
        self._set_busy(f"Reading the new box on {self.current}…")

    def reread(self, block_ids: list[str], page: str | None = None) -> None:
        page = page or self.current
        if not page:
            return
        blocks = tuple(b for b in self.doc.page(page).blocks if b.id in set(block_ids))
        if not blocks:
            return
        self.host.submit("blocks", self.doc.source, {"page": page}, names=(page,), blocks=blocks)
        self._set_busy(f"Re-reading {len(blocks)} block(s)…")

    # --- running the pipeline ---------------------------------------------------------------------
    def run_pages(self, names: list[str]) -> int:
        """Detect + read `names` in the worker; returns the request id (0 when nothing to do)."""
        if not names or not self.doc.project:
            return 0
        self.panel.flush()
        rid = self.host.submit("pages", self.doc.source, {"pages": list(names)}, names=tuple(names))
        self._run_id, self._run_started = rid, time.monotonic()
        self.run_stats = RunStats(len(names))
        self.progress.setRange(0, len(names))
        self.progress.setValue(0)
        self._set_busy(f"Starting: {len(names)} page(s)…")
        return rid

    def _set_busy(self, message: str) -> None:
        self.status_label.setText(message)
        self.progress.show()
        self.act.cancel.setEnabled(True)

    def _on_models_loading(self, message: str) -> None:
        self.device_label.setText("Loading models…")
        if not self.host.busy():  # preloading at start-up (app.ui.reading.device_status): the status line stays the user's
            return
        self.status_label.setText(message)
        self.progress.setRange(0, 0)  # busy indicator
        self.progress.show()

    def _on_progress(self, req_id: int, p) -> None:
        if req_id != self._run_id or not self.host.wanted(req_id):
            return
        self.progress.setRange(0, max(1, p.pages_total))
        self.progress.setValue(p.pages_done)
        self.run_stats.progressed(p.pages_done)
        eta = self.run_stats.eta_text(p.pages_done)  # models' loading left out
        blocks = f" · blocks {p.blocks_done}/{p.blocks_total}" if p.blocks_total else ""
        self.status_label.setText(f"Reading pages {p.pages_done}/{p.pages_total}{blocks}{eta}")

    def _on_page_read(self, req_id: int, page) -> None:
        if not self.host.wanted(req_id) or self._closing or not self.doc.has_page(page.name):
            return  # stale: cancelled, or another source is open now
        if req_id == self._run_id:
            self.run_stats.page_read()
        old = self.doc.page(page.name)
        new = replace(old, error=page.error) if page.error else edits.read_again(
            old, replace(page, width=page.width or old.width, height=page.height or old.height))
        self.edit(lambda _p: new, f"read {page.name}", page=page.name)

    def _on_region_read(self, req_id: int, page_name: str, block, panels=()) -> None:
        if not self.host.wanted(req_id) or self._closing or not self.doc.has_page(page_name):
            return
        page = self.doc.page(page_name)
        order = self.doc.project.order if self.doc.project else "rtl"
        new = edits.add_block_in_reading_order(page, block, order, panels or None)
        added = next(b.id for b in new.blocks if b.id not in {old.id for old in page.blocks})
        self.edit(lambda _p: new, "add block", page=page_name)
        if page_name == self.current:
            self.view.select_block(added)
            self.panel.select_block(added)

    def _on_blocks_read(self, req_id: int, page_name: str, blocks) -> None:
        if not self.host.wanted(req_id) or self._closing or not self.doc.has_page(page_name):
            return
        page = self.doc.page(page_name)
        fresh = [b for b in blocks if (old := page.block(b.id)) is not None and old.box == b.box]
        if fresh:  # a block moved again or deleted since the request: that result is stale
            new = page
            for b in fresh:
                new = edits.replace_block(new, b)
            self.edit(lambda _p: new, "re-read block", page=page_name)

    def _on_failed(self, req_id: int, message: str) -> None:
        if self.host.wanted(req_id) and not self._closing:
            self.last_error = message
            if self.device_label.text() == "Loading models…":
                self.device_label.setText("Models not loaded")
            self.show_notice("error", message)

    def _on_finished(self, req_id: int, status: str, ctx: dict) -> None:
        """From the host's registry, once the worker is done with `req_id` (wanted or not)."""
        if self._closing:
            return
        if not self.host.busy():
            self.progress.hide()
            self.act.cancel.setEnabled(self.view.mode is Mode.DRAW or self.translation.busy())
        done = {"done": "Done", "cancelled": "Cancelled", "failed": "Failed"}.get(status, status)
        if ctx["kind"] == "pages":
            if not ctx.get("quiet"):  # quiet: a run of the source that was open before this one
                self.status_label.setText(self.run_stats.summary(status) if req_id == self._run_id
                                          else f"{done}: {len(ctx['pages'])} page(s)")
            self.run_finished.emit(status)
        elif not ctx.get("quiet"):
            self.status_label.setText(done)
