"""Page images decoded off the GUI thread (QThreadPool): thumbnails and full pages.

A job opens its own Source (archives are not shared across threads), decodes the named pages
and emits QImages (safe to pass between threads; QPixmaps are made on the GUI thread).
"""
from __future__ import annotations

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
        from app.core.sources import open_source

        try:
            source = open_source(self.source_path)
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
            source.close()
