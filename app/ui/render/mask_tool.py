"""The mask brush: paint on the page to add pixels to a block's text mask, erase with the right
button (or Shift). Each stroke is one undoable page edit (app.core.document.edits.add_mask_stroke) on the
block under the stroke's start (the selected block first); strokes are clipped to the block.

While the brush is on, the page shows the cleaned view with the masks tinted red, and the view
does not pan or select (the brush takes the mouse).
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPointF, Qt
from PySide6.QtGui import QColor, QImage, QPainterPath, QPen, QPixmap
from PySide6.QtWidgets import QGraphicsPathItem, QGraphicsPixmapItem, QGraphicsView

from app.core.document import edits
from app.render.strokes import MaskStroke

TINT = (230, 40, 40, 110)  # RGBA of masked pixels in the overlay


def mask_overlay(shape: tuple[int, int], masks) -> QImage:
    """An RGBA QImage of `shape` (H, W) with the block masks tinted."""
    import numpy as np

    h, w = shape
    rgba = np.zeros((h, w, 4), np.uint8)
    for m in masks:
        x0, y0, x1, y1 = m.page_box()
        rgba[y0:y1, x0:x1][m.mask] = TINT
    return QImage(rgba.data, w, h, 4 * w, QImage.Format.Format_RGBA8888).copy()


class MaskTool(QObject):
    def __init__(self, window, controller):
        super().__init__(window)
        self.window, self.ctl = window, controller
        self.active = False
        self.radius = 8
        self._points: list[QPointF] = []
        self._erase = False
        self._stroke_item: QGraphicsPathItem | None = None
        self._overlay = QGraphicsPixmapItem()
        self._overlay.setZValue(5)
        self._overlay.setVisible(False)
        self._overlay.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        window.view.scene().addItem(self._overlay)
        window.view.viewport().installEventFilter(self)
        controller.rendered.connect(lambda *_: self.refresh_overlay())
        controller.idle.connect(self.refresh_overlay)

    def set_active(self, on: bool) -> None:
        self.active = on
        view = self.window.view
        view.setDragMode(QGraphicsView.DragMode.NoDrag if on else QGraphicsView.DragMode.ScrollHandDrag)
        view.viewport().setCursor(Qt.CursorShape.CrossCursor if on else Qt.CursorShape.OpenHandCursor)
        if on:
            if self.ctl.mode == "original":
                self.ctl.set_mode("cleaned")
            self.window.show_status("Mask brush: paint text to clean; right button or Shift erases (M or Esc to stop).")
        self.refresh_overlay()

    def refresh_overlay(self) -> None:
        renderer = self.ctl.renderer
        if not self.active or renderer is None or self.ctl._busy or self.ctl.page_name != self.window.current:
            self._overlay.setVisible(False)
            return
        blocks = self.ctl.blocks()
        masks = [renderer.mask(b) for b in blocks]
        self._overlay.setPixmap(QPixmap.fromImage(mask_overlay(renderer.gray.shape, masks)))
        self._overlay.setVisible(True)

    # --- painting ----------------------------------------------------------------------------
    def eventFilter(self, obj, event) -> bool:
        if not self.active or self.window.doc.project is None or not self.window.current:
            return False
        kind = event.type()
        if kind == QEvent.Type.MouseButtonPress:
            self._start(event)
            return True
        if kind == QEvent.Type.MouseMove and self._points:
            self._points.append(self.window.view.mapToScene(event.position().toPoint()))
            self._update_item()
            return True
        if kind == QEvent.Type.MouseButtonRelease and self._points:
            self._finish()
            return True
        return False

    def _start(self, event) -> None:
        self._erase = event.button() == Qt.MouseButton.RightButton or bool(
            event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        self._points = [self.window.view.mapToScene(event.position().toPoint())]
        self._stroke_item = QGraphicsPathItem()
        colour = QColor(40, 120, 255, 140) if self._erase else QColor(230, 40, 40, 140)
        pen = QPen(colour, 2 * self.radius, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap, Qt.PenJoinStyle.RoundJoin)
        self._stroke_item.setPen(pen)
        self._stroke_item.setZValue(60)
        self.window.view.scene().addItem(self._stroke_item)
        self._update_item()

    def _update_item(self) -> None:
        path = QPainterPath(self._points[0])
        for p in self._points[1:]:
            path.lineTo(p)
        if len(self._points) == 1:
            path.lineTo(self._points[0] + QPointF(0.01, 0))
        self._stroke_item.setPath(path)

    def target_block(self, x: float, y: float) -> str | None:
        """The block a stroke starting at (x, y) edits: the selected one if it holds the point,
        else the smallest block holding it."""
        page = self.window.doc.page(self.window.current)

        def holds(b):
            x0, y0, x1, y1 = b.box
            return x0 <= x <= x1 and y0 <= y <= y1

        for bid in self.window.selected_ids():
            b = page.block(bid)
            if b is not None and holds(b):
                return bid
        inside = [b for b in page.blocks if holds(b)]
        if not inside:
            return None
        return min(inside, key=lambda b: (b.box[2] - b.box[0]) * (b.box[3] - b.box[1])).id

    def _finish(self) -> None:
        points, self._points = self._points, []
        if self._stroke_item is not None:
            self.window.view.scene().removeItem(self._stroke_item)
            self._stroke_item = None
        start = points[0]
        block_id = self.target_block(start.x(), start.y())
        if block_id is None:
            self.window.show_status("Start a mask stroke inside a block's box.")
            return
        stroke = MaskStroke(self._erase, float(self.radius), tuple((round(p.x(), 1), round(p.y(), 1)) for p in points))
        self.apply(block_id, stroke)

    def apply(self, block_id: str, stroke: MaskStroke) -> None:
        """Add a stroke to a block as an undoable edit (also what a test drives)."""
        what = "erase from the text mask" if stroke.erase else "paint the text mask"
        self.window.edit(lambda p: edits.add_mask_stroke(p, block_id, stroke), what)
