"""The one kind of host for a background worker: reading (app.ui.reading.worker) and translation
(app.ui.translate.worker) each subclass it and keep their own thread.

A worker is a QObject with a `handle(request)` slot, run on its own QThread, that emits
`finished(request id, status)` when it is done with a request; every request carries `req_id`,
`kind` and a `cancel` threading.Event that the work checks as it goes.

The host keeps the registry of live requests (`live`): a request is live from `submit` until
the worker reports it finished; then `request_finished(id, status, context)` is emitted.
Cancelling sets the request's Event and marks its results unwanted at once: whoever applies
results asks `wanted(id)` and drops the late ones. The entry stays until the worker is done with
it, so progress and Cancel show as long as anything runs. `stop` (at exit) cancels everything,
quits the thread and waits for it, bounded.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, Signal

from app.ui.common.threads import worker_thread


@dataclass
class LiveRequest:
    """A submitted request not finished yet: what the caller asked for (`context`, with the
    request's `kind`) and whether its results are still `wanted` (False once cancelled)."""

    request: object
    context: dict
    wanted: bool = True


class WorkerHost(QObject):
    """Owns a worker's QThread and the registry of its live requests: submit, cancel, stop."""

    submit_request = Signal(object)
    request_finished = Signal(int, str, object)  # request id, "done" | "cancelled" | "failed", context

    def __init__(self, worker: QObject, thread_name: str, on_thread_end: Callable[[], None], parent=None):
        """`on_thread_end` runs on the worker's thread as it ends (closes what the worker opened)."""
        super().__init__(parent)
        self.worker = worker
        self.thread = worker_thread(worker, thread_name)
        self.submit_request.connect(worker.handle, Qt.ConnectionType.QueuedConnection)
        self.thread.finished.connect(on_thread_end, Qt.ConnectionType.DirectConnection)
        worker.finished.connect(self._on_finished)
        self._next_id = 0
        self.live: dict[int, LiveRequest] = {}

    def start(self) -> None:
        self.thread.start()

    def submit_built(self, build: Callable[[int, threading.Event], object], context: dict | None = None) -> int:
        """Queue the request `build(id, cancel event)` makes; returns its id. `context` is the
        caller's, handed back (with the request's kind) when it finishes."""
        self._next_id += 1
        req = build(self._next_id, threading.Event())
        self.live[req.req_id] = LiveRequest(req, dict(context or {}, kind=req.kind))
        self.submit_request.emit(req)
        return req.req_id

    def cancel(self, req_id: int | None = None, quiet: bool = False) -> None:
        """Cancel one request, or all live ones: the worker stops at its next check and their
        results from now on are unwanted. `quiet`: their end is not reported to the user either
        (another source is open now); `context["quiet"]` says so to whoever handles the end."""
        for rid, live in self.live.items():
            if req_id is None or rid == req_id:
                live.request.cancel.set()
                live.wanted = False
                if quiet:
                    live.context["quiet"] = True

    def wanted(self, req_id: int) -> bool:
        """True while results of `req_id` should be applied (live, not cancelled)."""
        live = self.live.get(req_id)
        return live is not None and live.wanted

    def context(self, req_id: int) -> dict | None:
        live = self.live.get(req_id)
        return live.context if live is not None else None

    def busy(self, kind: str | None = None) -> bool:
        """True while any request (of `kind`) is live, also a cancelled one still winding down. A
        request submitted with `background` in its context (work the user did not ask for, which
        anything asked for cancels) counts only when its kind is named."""
        return any(live.context["kind"] == kind if kind is not None else not live.context.get("background")
                   for live in self.live.values())

    def cancel_background(self) -> None:
        """Cancel, quietly, the live requests submitted with `background` in their context."""
        for rid, live in list(self.live.items()):
            if live.context.get("background"):
                self.cancel(rid, quiet=True)

    def _on_finished(self, req_id: int, status: str) -> None:
        live = self.live.pop(req_id, None)
        if live is not None:
            self.request_finished.emit(req_id, status, live.context)

    def stop(self, timeout_ms: int = 30000) -> bool:
        """At exit: cancel everything, stop the thread and wait for it at most `timeout_ms`;
        True when it stopped (False: it is still inside a step that cannot be interrupted)."""
        self.cancel()
        self.thread.quit()
        return self.thread.wait(timeout_ms)
