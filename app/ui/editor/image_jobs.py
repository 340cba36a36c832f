"""Page images decoded off the GUI thread (QThreadPool): thumbnails and full pages.

The jobs share one opened Source per path while it is unchanged on disk (an archive's reads are
serialised by its lock), decode the named pages and emit QImages (safe to pass between
threads; QPixmaps are made on the GUI thread).
"""
from __future__ import annotations

import os
import threading

from PySide6.QtCore import QObject, QRunnable, Signal
from PySide6.QtGui import QImage

from app.errors import UserError


def pil_to_qimage(image) -> QImage:
    """A deep-copied QImage of a PIL image (RGB888; other modes converted to RGB)."""
    if image.mode != "RGB":
        image = image.convert("RGB")
    data = image.tobytes("raw", "RGB")
    return QImage(data, image.width, image.height, 3 * image.width, QImage.Format.Format_RGB888).copy()


class ImageJobSignals(QObject):
    """Lives on the GUI thread; jobs emit through it (queued across threads)."""

    loaded = Signal(int, str, QImage, int, int)  # request id, page name, image, source width, height
    failed = Signal(int, str, str)  # request id, page name, message


_shared_lock = threading.Lock()
_current: dict = {}  # "key": (path, stat), "source": the Source the jobs share while it is unchanged
_users: dict[int, list] = {}  # id(source) -> [source, jobs using it]


def _stat_key(path: str):
    st = os.stat(path)
    return (path, st.st_mtime_ns, st.st_size, st.st_ino)


def acquire_source(path: str):
    """The source at `path`, opened once and shared by the jobs while it is unchanged on disk
    (listing a 10,000-page archive takes a second, which every page view and thumbnail batch
    would pay again). Archive reads are serialised by the source's own lock."""
    from app.core.sources.source import open_source

    with _shared_lock:
        try:
            key = _stat_key(path)
        except OSError:
            key = None  # gone: open_source says so, naming it
        source = _current.get("source")
        if source is None or key is None or _current.get("key") != key:
            old = _current.get("source")
            source = open_source(path)
            _current.update(key=key, source=source)
            if old is not None and _users.get(id(old), [None, 0])[1] == 0:
                _users.pop(id(old), None)
                old.close()
        _users.setdefault(id(source), [source, 0])[1] += 1
        return source


def release_source(source) -> None:
    with _shared_lock:
        entry = _users.get(id(source))
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] == 0 and _current.get("source") is not source:
            _users.pop(id(source))
            source.close()  # replaced by a newer source while in use: its last user closes it


class ImageJob(QRunnable):
    """Decode `names` from the source at `source_path`; `max_side` > 0 makes thumbnails."""

    def __init__(self, signals: ImageJobSignals, req_id: int, source_path: str, names: list[str],
                 max_side: int = 0, cancel: threading.Event | None = None):
        super().__init__()
        self.signals = signals
        self.req_id = req_id
        self.source_path = source_path
        self.names = list(names)
        self.max_side = max_side
        self.cancel = cancel or threading.Event()

    def run(self) -> None:
        try:
            source = acquire_source(self.source_path)
        except Exception as exc:  # noqa: BLE001 - thread boundary: report, never crash the pool
            for name in self.names:
                self.signals.failed.emit(self.req_id, name, str(exc))
            return
        try:
            for name in self.names:
                if self.cancel.is_set():
                    return
                try:
                    image = source.load(name)
                    w, h = image.size
                    if self.max_side:
                        image.thumbnail((self.max_side, self.max_side))
                    self.signals.loaded.emit(self.req_id, name, pil_to_qimage(image), w, h)
                except UserError as exc:
                    self.signals.failed.emit(self.req_id, name, str(exc))
                except Exception as exc:  # noqa: BLE001 - thread boundary
                    self.signals.failed.emit(self.req_id, name, f"{name}: {type(exc).__name__}: {exc}")
        finally:
            release_source(source)


class PageImages(QObject):
    """The full page images the canvas shows: decoded on a pool thread of their own, the last
    `KEEP` kept. `request(source, name)` starts a decode; `loaded(name, image, width, height,
    latest)` comes for each (latest: it answers the last request), `failed(name, message)` when
    the page cannot be read."""

    loaded = Signal(str, QImage, int, int, bool)
    failed = Signal(str, str)
    KEEP = 4

    def __init__(self, parent=None):
        from PySide6.QtCore import QThreadPool

        from app.ui.common.threads import track_pool

        super().__init__(parent)
        self._images: dict[str, QImage] = {}
        self._req = 0
        self.pool = track_pool(QThreadPool(self))
        self.pool.setObjectName("page-images")
        self.pool.setMaxThreadCount(1)
        self._signals = ImageJobSignals(self)
        self._signals.loaded.connect(self._on_loaded)
        self._signals.failed.connect(lambda _req, name, message: self.failed.emit(name, message))

    def get(self, name: str) -> QImage | None:
        return self._images.get(name)

    def request(self, source: str, name: str) -> None:
        self._req += 1
        self.pool.start(ImageJob(self._signals, self._req, source, [name]))

    def clear(self) -> None:
        self._images.clear()

    def stop(self, timeout_ms: int) -> bool:
        """At exit: drop queued decodes and wait for the running one at most `timeout_ms`."""
        self.pool.clear()
        return self.pool.waitForDone(timeout_ms)

    def _on_loaded(self, req_id: int, name: str, image: QImage, w: int, h: int) -> None:
        self._images[name] = image
        while len(self._images) > self.KEEP:
            self._images.pop(next(iter(self._images)))
        self.loaded.emit(name, image, w, h, req_id == self._req)
