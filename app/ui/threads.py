"""A registry of the threads and pools the UI starts, so tests can prove none is left running."""
from __future__ import annotations

import weakref

from PySide6.QtCore import QThread, QThreadPool

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
