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
_waited_at_exit: weakref.WeakSet = weakref.WeakSet()  # threads no stop callback of a window owns


def track_thread(thread: QThread, wait_at_exit: bool = False) -> QThread:
    """Track `thread` (for `running`). `wait_at_exit`: work nothing stops at exit (a closed
    dialog's download): `stop_all` waits for it. A window's own workers are stopped and waited
    for by the window's stop callbacks instead, so that one window's exit never waits for
    another window's workers."""
    _threads.add(thread)
    if wait_at_exit:
        _waited_at_exit.add(thread)
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
    """At exit: wait for every thread tracked with `wait_at_exit` still running (work cancelled
    but not waited for, such as a closed model manager's download), all together at most
    `timeout_ms`; True when none of them is left running."""
    deadline = time.monotonic() + timeout_ms / 1000
    left = []
    for t in list(_waited_at_exit):
        try:
            if t.isRunning():
                if not t.wait(QDeadlineTimer(max(0, int((deadline - time.monotonic()) * 1000)))):
                    left.append(t)
        except RuntimeError:  # the C++ object is gone: not running
            continue
    return not left


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
