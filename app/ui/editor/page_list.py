"""The page list: one row per page with a thumbnail made in the background and a status mark
(read, translated, an error; "check the order" when the layout rules were not sure of the
page's reading order, app.core.document.Page.order_check).

Thumbnails are made for the rows in view (and a screenful around them) as they come into view,
so a 10,000-page archive opens at once and holds only the thumbnails looked at.
"""
from __future__ import annotations

import threading

from PySide6.QtCore import QSize, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QColor, QIcon, QImage, QPainter, QPixmap
from PySide6.QtWidgets import QListWidget, QListWidgetItem

from app.core.document.types import Page
from app.ui.common.threads import track_pool
from app.ui.editor.image_jobs import ImageJob, ImageJobSignals

THUMB = 96  # thumbnail longest side, pixels
AHEAD = 30  # rows beyond the visible ones whose thumbnails are made too
NAME_ROLE = Qt.ItemDataRole.UserRole
CHECK_MARK = "⚑ check the order"  # a page whose reading order the layout rules were not sure of
CHECK_COLOR = "#b35900"


def _placeholder() -> QIcon:
    pm = QPixmap(THUMB * 3 // 4, THUMB)
    pm.fill(QColor(200, 200, 200))
    return QIcon(pm)


class PageList(QListWidget):
    """Emits `page_activated(name)` when the user picks a page."""

    page_activated = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setIconSize(QSize(THUMB, THUMB))
        self.setUniformItemSizes(True)
        self.setSpacing(2)
        self.setWordWrap(True)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setMinimumWidth(190)
        self.pool = track_pool(QThreadPool(self))
        self.pool.setObjectName("thumbnails")
        self.pool.setMaxThreadCount(1)
        self.signals = ImageJobSignals(self)
        self.signals.loaded.connect(self._on_thumb)
        self.signals.failed.connect(self._on_thumb_failed)
        self._cancel = threading.Event()
        self._req = 0
        self._syncing = False
        self._items: dict[str, QListWidgetItem] = {}
        self._source = ""
        self._requested: set[str] = set()  # pages whose thumbnail was asked for (this source)
        self._more = QTimer(self, singleShot=True, interval=0, timeout=self._request_visible)
        self.currentItemChanged.connect(self._on_current)
        self.verticalScrollBar().valueChanged.connect(lambda _v: self._more.start())

    def set_pages(self, source_path: str, pages: list[Page]) -> None:
        """Fill the list and start making thumbnails. The previous job is cancelled, not waited
        for: it stops after the page it is decoding, and its late thumbnails are dropped (their
        request id is old); the new job starts after it on the pool's one thread."""
        self._cancel.set()
        self.pool.clear()  # jobs not started yet
        self._syncing = True
        self.setUpdatesEnabled(False)
        self.clear()
        self._items = {}
        icon = _placeholder()
        for row, page in enumerate(pages):
            item = QListWidgetItem(icon, "")
            item.setData(NAME_ROLE, page.name)
            self.addItem(item)
            self._items[page.name] = item
            self._label(page, item, row)
        self.setUpdatesEnabled(True)
        self._syncing = False
        self._source = source_path
        self._requested = set()
        self._req += 1
        self._cancel = threading.Event()
        self._request_visible(first=min(len(pages), AHEAD * 2))

    def _request_visible(self, first: int = 0) -> None:
        """Thumbnails for the rows in view and AHEAD rows around them not asked for yet (at least
        the `first` rows: the list may not be laid out yet)."""
        if not self.count():
            return
        top = self.indexAt(self.viewport().rect().topLeft()).row()
        bottom = self.indexAt(self.viewport().rect().bottomLeft()).row()
        top = 0 if top < 0 else top
        bottom = max(first - 1, bottom if bottom >= 0 else top + AHEAD)
        rows = range(max(0, top - AHEAD), min(self.count(), bottom + AHEAD + 1))
        names = [self.item(r).data(NAME_ROLE) for r in rows]
        names = [n for n in names if n not in self._requested]
        if names:
            self._requested.update(names)
            self.pool.start(ImageJob(self.signals, self._req, self._source, names, max_side=THUMB,
                                     cancel=self._cancel))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override: more rows may be in view
        super().resizeEvent(event)
        self._more.start()

    def _item(self, name: str) -> QListWidgetItem | None:
        return self._items.get(name)

    def update_page(self, page: Page, item: QListWidgetItem | None = None) -> None:
        """Refresh the label: index, name, block count, done / error marks."""
        item = item or self._item(page.name)
        if item is None:
            return
        self._label(page, item, self.row(item))

    def _label(self, page: Page, item: QListWidgetItem, row: int) -> None:
        if page.error:
            state = "⚠ error"
        elif page.processed:
            state = f"✓ {len(page.blocks)} block{'s' if len(page.blocks) != 1 else ''}"
            with_text = [b for b in page.blocks if b.display_text.strip()]
            done = sum(1 for b in with_text if not b.needs_translation)
            if with_text:  # what is left to translate, at a glance
                state += (" · translated" if done == len(with_text) else
                          f" · {done} of {len(with_text)} translated" if done else " · not translated")
        else:
            state = "not read yet"
        if page.order_check and not page.error:
            state = f"{CHECK_MARK} · {state}"
        item.setText(f"{row + 1}  {page.name}\n{state}")
        item.setForeground(QColor(CHECK_COLOR) if page.order_check and not page.error else self.palette().text().color())
        tip = page.error or page.name
        if page.order_check and not page.error:
            tip = f"{page.name}\nCheck the reading order: {page.order_check}.\nRenumber its blocks to clear the mark (F8: the next page to check)."
        item.setToolTip(tip)

    def select_page(self, name: str) -> None:
        item = self._item(name)
        if item is not None and item is not self.currentItem():
            self._syncing = True
            self.setCurrentItem(item)
            self.scrollToItem(item)
            self._syncing = False

    def _on_current(self, item, _previous) -> None:
        if item is not None and not self._syncing:
            self.page_activated.emit(item.data(NAME_ROLE))

    def _on_thumb(self, req_id: int, name: str, image: QImage, _w: int, _h: int) -> None:
        if req_id != self._req:
            return
        item = self._item(name)
        if item is None:
            return
        pm = QPixmap(THUMB * 3 // 4, THUMB)
        pm.fill(Qt.GlobalColor.transparent)
        scaled = QPixmap.fromImage(image).scaled(pm.size(), Qt.AspectRatioMode.KeepAspectRatio,
                                                 Qt.TransformationMode.SmoothTransformation)
        x, y = (pm.width() - scaled.width()) // 2, (pm.height() - scaled.height()) // 2
        with_frame = QPainter(pm)
        with_frame.drawPixmap(x, y, scaled)
        with_frame.setPen(QColor(120, 120, 120))
        with_frame.drawRect(x, y, scaled.width() - 1, scaled.height() - 1)
        with_frame.end()
        item.setIcon(QIcon(pm))

    def _on_thumb_failed(self, req_id: int, name: str, message: str) -> None:
        item = self._item(name) if req_id == self._req else None
        if item is not None:
            item.setIcon(self.style().standardIcon(self.style().StandardPixmap.SP_MessageBoxWarning))
            item.setToolTip(message)
            item.setText(item.text().split("\n")[0] + "\n⚠ cannot be read")

    def thumbnails_done(self) -> bool:
        return self.pool.activeThreadCount() == 0

    def stop(self, timeout_ms: int = 5000) -> bool:
        """At exit: cancel thumbnail work and wait for the pool at most `timeout_ms` (a job stops
        after the page it is decoding); True when it is idle."""
        self._cancel.set()
        self.pool.clear()
        return self.pool.waitForDone(timeout_ms)
