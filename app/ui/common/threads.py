"""A registry of the threads and pools the UI starts, so tests can prove none is left running,
and so that exit (`stop_all`) can wait for them, bounded, and say which did not stop."""
from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Callable

from PySide6.QtCore import QDeadlineTimer, QThread, QThreadPool

_threads: weakref.WeakSet = weakref.WeakSet()
_pools: weakref.WeakSet = weakref.WeakSet()


def track_thread(thread: QThread) -> QThread:
    _threads.add(thread)
    return thread


def worker_thread(worker, name: str) -> QThread:
    """A tracked QThread named `name` with `worker` (a QObject) moved onto it; not started."""
    thread = track_thread(QThread())
    thread.setObjectName(name)
    worker.moveToThread(thread)
    return thread


def track_pool(pool: QThreadPool) -> QThreadPool:
    _pools.add(pool)
    return pool


def running() -> list[str]:
    """Descriptions of tracked threads still running and pools still busy."""
    out = []
    for t in list(_threads):
        try:
            if t.isRunning():
                out.append(f"QThread {t.objectName() or t!r}")
        except RuntimeError:  # the C++ object is gone: not running
            continue
    for p in list(_pools):
        try:
            if p.activeThreadCount():
                out.append(f"QThreadPool {p.objectName() or p!r} ({p.activeThreadCount()} busy)")
        except RuntimeError:
            continue
    return out



def wait_for_running(timeout_ms: int) -> bool:
    """At exit: wait for every tracked thread still running (work cancelled but not waited for,
    such as a closed model manager's download), all together at most `timeout_ms`; True when
    none is left running."""
    deadline = time.monotonic() + timeout_ms / 1000
    for t in list(_threads):
        try:
            if t.isRunning():
                t.wait(QDeadlineTimer(max(0, int((deadline - time.monotonic()) * 1000))))
        except RuntimeError:  # the C++ object is gone: not running
            continue
    return not [d for d in running() if d.startswith("QThread")]


def stop_all(timeout_ms: int, *stops: Callable[[int], bool]) -> bool:
    """At exit: run each `stop(ms)` (cancel + a wait of at most ms, True when stopped), then wait
    for any other tracked thread still running, all within `timeout_ms` together; True when
    everything stopped. What did not is logged by name."""
    deadline = time.monotonic() + timeout_ms / 1000

    def left_ms() -> int:
        return max(0, int((deadline - time.monotonic()) * 1000))

    stopped = True
    for stop in stops:
        stopped = bool(stop(left_ms())) and stopped
    stopped = wait_for_running(left_ms()) and stopped
    if not stopped:
        logging.getLogger(__name__).warning(
            "background work did not stop within %.0f s at exit (%s); the app ends without it",
            timeout_ms / 1000, ", ".join(running()) or "a cancelled task")
    return stopped
