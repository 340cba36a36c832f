"""The page canvas: the page image, one item per block, zoom and pan, select and draw modes.

Scene units are source-image pixels. The view reports user actions as signals (a drawn box, a
moved block, an edited text) and never edits the document itself.
"""
from __future__ import annotations

import enum

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QGraphicsPixmapItem, QGraphicsRectItem, QGraphicsScene, QGraphicsView, QMenu

from app.core.document.edits import HAND_KINDS
from app.core.document.types import Page
from app.ui.editor.block_panel import KIND_NAMES
from app.ui.editor.items import SELECTED_COLOR, BlockItem, InlineEditorItem

MIN_ZOOM, MAX_ZOOM = 0.05, 16.0
EMPTY_HINT = ("Open a folder or an archive of pages\n(File > Open folder, Ctrl+O, or drop it here)\n\n"
              "New here? Help > Open the demo pages shows sample pages\nread by the small demo models "
              "that come with the app.")


HAND_KIND_LABELS = {k: KIND_NAMES[k].capitalize() for k in HAND_KINDS}  # Bubble, Caption (free text), Sound effect

class Mode(enum.Enum):
    SELECT = "select"
    DRAW = "draw"


class PageView(QGraphicsView):
    """Shows one page; emits what the user did on it."""

    block_selected = Signal(str)  # block id, "" when none
    box_drawn = Signal(object)  # (x0, y0, x1, y1) in image pixels
    block_moved = Signal(str, object)  # block id, new box
    text_edited = Signal(str, str)  # block id, new text (inline editor)
    reread_requested = Signal(str)
    delete_requested = Signal()
    merge_requested = Signal()
    kind_requested = Signal(str)  # the selected blocks become this kind (HAND_KIND_LABELS)
    zoom_changed = Signal(float)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.SmoothPixmapTransform
                            | QPainter.RenderHint.TextAntialiasing)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setAcceptDrops(False)  # files dropped here reach the main window
        self._pixmap_item = QGraphicsPixmapItem()
        self._pixmap_item.setTransformationMode(Qt.TransformationMode.SmoothTransformation)
        self.scene().addItem(self._pixmap_item)
        self._items: dict[str, BlockItem] = {}
        self.page: Page | None = None
        self.mode = Mode.SELECT
        self.overlay = "text"  # text | boxes | none
        self.overlay_source = "text"  # text | translation
        self.fit = "page"  # page | width | None (free zoom)
        self._rubber: QGraphicsRectItem | None = None
        self._rubber_origin = QPointF()
        self._editor: InlineEditorItem | None = None
        self._syncing = False
        self.scene().selectionChanged.connect(self._on_selection_changed)

    # --- content --------------------------------------------------------------------------
    def set_image(self, image: QImage | None) -> None:
        """Show the page image (None clears); the scene rect follows the image."""
        pixmap = QPixmap.fromImage(image) if image is not None else QPixmap()
        self._original_pixmap = pixmap
        self._pixmap_item.setPixmap(pixmap)
        self.scene().setSceneRect(QRectF(pixmap.rect()))
        self.refit()

    def show_rendered(self, image: QImage | None) -> None:
        """Show a rendered version of the page (same size: cleaned, translated) in place of the
        page image, or the page image again (None). Zoom and items are kept."""
        original = getattr(self, "_original_pixmap", None)
        if image is None:
            if original is not None and self._pixmap_item.pixmap().cacheKey() != original.cacheKey():
                self._pixmap_item.setPixmap(original)
            return
        if original is None or original.isNull():
            return
        self._pixmap_item.setPixmap(QPixmap.fromImage(image))

    def has_image(self) -> bool:
        return not self._pixmap_item.pixmap().isNull()

    def show_page(self, page: Page | None) -> None:
        """(Re)build the block items for `page`, keeping the selection by id."""
        self.cancel_inline_edit()
        selected = self.selected_ids()
        self._syncing = True
        try:
            for item in self._items.values():
                self.scene().removeItem(item)
            self._items.clear()
            self.page = page
            if page is not None and not self.has_image() and page.width and page.height:
                self.scene().setSceneRect(QRectF(0, 0, page.width, page.height))
            for block in page.blocks if page else ():
                item = BlockItem(block, self)
                self.scene().addItem(item)
                self._items[block.id] = item
                if block.id in selected:
                    item.setSelected(True)
            self._apply_overlay()
        finally:
            self._syncing = False
        if set(selected) != set(self.selected_ids()):
            self._on_selection_changed()

    def block_item(self, block_id: str) -> BlockItem | None:
        return self._items.get(block_id)

    def set_overlay(self, overlay: str, source: str | None = None) -> None:
        self.overlay = overlay
        if source is not None:
            self.overlay_source = source
        self._apply_overlay()

    def _apply_overlay(self) -> None:
        for item in self._items.values():
            b = item.block
            text = None
            if self.overlay == "text":
                text = b.translation if self.overlay_source == "translation" else b.display_text
            item.set_display(self.overlay != "none", text, numbers=bool(self.page is not None and self.page.order_check))
            item.setVisible(True)

    # --- selection ------------------------------------------------------------------------
    def selected_ids(self) -> list[str]:
        """Selected block ids in reading order."""
        return [i for i, item in self._items.items() if item.isSelected()]

    def select_block(self, block_id: str, center: bool = True) -> None:
        """Select one block (no signal loop); scroll it into view."""
        self._syncing = True
        try:
            self.scene().clearSelection()
            item = self._items.get(block_id)
            if item:
                item.setSelected(True)
                if center:
                    self.ensureVisible(item, 40, 40)
        finally:
            self._syncing = False

    def _on_selection_changed(self) -> None:
        if self._syncing:
            return
        ids = self.selected_ids()
        self.block_selected.emit(ids[0] if len(ids) == 1 else (ids[0] if ids else ""))

    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:
        """Around the page: a shade of the current palette (follows light/dark switches)."""
        painter.fillRect(rect, self.palette().window().color().darker(125))

    def drawForeground(self, painter: QPainter, rect: QRectF) -> None:
        """An empty canvas says what to do."""
        if self.has_image() or self.page is not None:
            return
        painter.save()
        painter.resetTransform()
        painter.setPen(self.palette().placeholderText().color())
        font = painter.font()
        font.setPointSizeF(font.pointSizeF() * 1.3)
        painter.setFont(font)
        painter.drawText(self.viewport().rect().adjusted(16, 16, -16, -16),
                         int(Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap), EMPTY_HINT)
        painter.restore()

    # --- modes ----------------------------------------------------------------------------
    def set_mode(self, mode: Mode) -> None:
        self.mode = mode
        draw = mode is Mode.DRAW
        self.setDragMode(QGraphicsView.DragMode.NoDrag if draw else QGraphicsView.DragMode.ScrollHandDrag)
        self.viewport().setCursor(Qt.CursorShape.CrossCursor if draw else Qt.CursorShape.OpenHandCursor)
        for item in self._items.values():
            item.setFlag(BlockItem.GraphicsItemFlag.ItemIsMovable, not draw)

    def mousePressEvent(self, event) -> None:
        if self.mode is Mode.DRAW and event.button() == Qt.MouseButton.LeftButton and self.has_image():
            self._rubber_origin = self.mapToScene(event.position().toPoint())
            self._rubber = QGraphicsRectItem(QRectF(self._rubber_origin, self._rubber_origin))
            pen = QPen(SELECTED_COLOR, 2, Qt.PenStyle.DashLine)
            pen.setCosmetic(True)
            self._rubber.setPen(pen)
            self._rubber.setBrush(QColor(255, 159, 26, 40))
            self._rubber.setZValue(50)
            self.scene().addItem(self._rubber)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self._rubber is not None:
            p = self.mapToScene(event.position().toPoint())
            self._rubber.setRect(QRectF(self._rubber_origin, p).normalized())
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        if self._rubber is not None:
            p = self.mapToScene(event.position().toPoint())
            r = QRectF(self._rubber_origin, p).normalized().intersected(self.sceneRect())
            self.scene().removeItem(self._rubber)
            self._rubber = None
            if r.width() >= 4 and r.height() >= 4:
                self.box_drawn.emit((r.left(), r.top(), r.right(), r.bottom()))
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def block_geometry_edited(self, block_id: str, box) -> None:
        """Called by a BlockItem after the user moved or resized it."""
        self.block_moved.emit(block_id, tuple(box))

    def contextMenuEvent(self, event) -> None:
        item = self.itemAt(event.pos())
        while item is not None and not isinstance(item, BlockItem):
            item = item.parentItem()
        if item is None:
            return
        if not item.isSelected():
            self.select_block(item.block.id, center=False)
            self._on_selection_changed()
        menu = QMenu(self)
        menu.addAction("Edit text", lambda: self.start_inline_edit(item.block.id))
        menu.addAction("Re-read this block", lambda: self.reread_requested.emit(item.block.id))
        merge = menu.addAction("Merge selected blocks", self.merge_requested.emit)
        merge.setEnabled(len(self.selected_ids()) > 1)
        kinds = menu.addMenu("Kind")
        for kind, label in HAND_KIND_LABELS.items():
            act = kinds.addAction(label, lambda k=kind: self.kind_requested.emit(k))
            act.setCheckable(True)
            act.setChecked(item.block.kind == kind)
        menu.addAction("Delete", self.delete_requested.emit)
        menu.exec(event.globalPos())

    # --- inline editing -------------------------------------------------------------------
    def start_inline_edit(self, block_id: str) -> None:
        item = self._items.get(block_id)
        if item is None:
            return
        self.cancel_inline_edit()
        b = item.block
        text = b.translation if self.overlay_source == "translation" else b.display_text
        self._editor = InlineEditorItem(b, text, self._on_inline_done, zoom=self.zoom())
        self.scene().addItem(self._editor)
        self._editor.setFocus()
        cursor = self._editor.textCursor()
        cursor.select(cursor.SelectionType.Document)
        self._editor.setTextCursor(cursor)

    def inline_editor(self) -> InlineEditorItem | None:
        return self._editor

    def inline_edit_pending(self) -> bool:
        """An in-place edit is open with changes of its own (the undo keys are the editor's)."""
        doc = self._editor.document() if self._editor is not None else None
        return doc is not None and (doc.isUndoAvailable() or doc.isRedoAvailable())

    def cancel_inline_edit(self) -> None:
        if self._editor is not None:
            self._editor.finish(False)

    def _on_inline_done(self, block_id: str, text: str | None) -> None:
        editor, self._editor = self._editor, None
        if editor is not None and editor.scene() is not None:
            self.scene().removeItem(editor)
        if text is not None:
            self.text_edited.emit(block_id, text)

    # --- zoom -----------------------------------------------------------------------------
    def zoom(self) -> float:
        return self.transform().m11()

    def set_zoom(self, factor: float, fit: str | None = None) -> None:
        factor = max(MIN_ZOOM, min(MAX_ZOOM, factor))
        self.fit = fit
        self.resetTransform()
        self.scale(factor, factor)
        self.zoom_changed.emit(factor)

    def zoom_by(self, step: float) -> None:
        self.set_zoom(self.zoom() * step)

    def fit_page(self) -> None:
        r = self.sceneRect()
        if r.isEmpty():
            return
        v = self.viewport().rect()
        self.set_zoom(min((v.width() - 8) / r.width(), (v.height() - 8) / r.height()), fit="page")

    def fit_width(self) -> None:
        r = self.sceneRect()
        if r.isEmpty():
            return
        self.set_zoom((self.viewport().width() - 8) / r.width(), fit="width")
        self.ensureVisible(QRectF(r.left(), r.top(), 1, 1), 0, 0)

    def actual_size(self) -> None:
        self.set_zoom(1.0)

    def refit(self) -> None:
        if self.fit == "page":
            self.fit_page()
        elif self.fit == "width":
            self.fit_width()

    def wheelEvent(self, event) -> None:
        if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            super().wheelEvent(event)  # shift + wheel scrolls
            return
        delta = event.angleDelta().y()
        if delta:
            self.zoom_by(1.0015 ** delta)
        event.accept()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.refit()
