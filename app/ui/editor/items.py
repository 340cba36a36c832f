"""Scene items for one page: a block's box, its order badge, its text overlay, the inline editor.

Scene coordinates are source-image pixels, so a block's box maps 1:1 onto its item. Items never
change the document: they report moves and edits to their view (`BlockItem.view`), which turns
them into undo commands.
"""
from __future__ import annotations

import math
from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen, QTextOption
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem, QGraphicsTextItem

from app.core.document.types import Block

KIND_COLORS = {
    "bubble": QColor(45, 127, 249),
    "text": QColor(32, 168, 107),
    "caption": QColor(32, 168, 107),  # text outside bubbles: free text
    "sfx": QColor(214, 48, 96),  # ... sound effects
    "other": QColor(230, 140, 20),
    "manual": QColor(192, 64, 208),
}
SELECTED_COLOR = QColor(255, 159, 26)
HANDLE_PX = 10  # resize handle size on screen
CJK_FAMILY = ""  # set by app.ui.shell.main.pick_cjk_font(); "" = Qt's default
PANEL_TEXT_PX = 16  # the block panel's text size; the in-place editor is never smaller on screen
EDITOR_MAX_PX = 40  # ... nor larger than this
EDITOR_MIN_CHARS = 8  # the in-place editor is at least this many characters wide

# vertical presentation forms for punctuation that must turn in vertical text
_VERTICAL_FORMS = str.maketrans({
    "、": "︑", "。": "︒", "ー": "丨", "―": "︱", "…": "︙", "‥": "︰", "「": "﹁", "」": "﹂",
    "『": "﹃", "』": "﹄", "（": "︵", "）": "︶", "(": "︵", ")": "︶", "【": "︻", "】": "︼",
    "〜": "≀", "～": "≀", "-": "丨", "！": "︕", "？": "︖", "：": "︓", "；": "︔", "，": "︐",
})


def overlay_font(px: float) -> QFont:
    font = QFont(CJK_FAMILY) if CJK_FAMILY else QFont()
    font.setPixelSize(max(1, int(px)))
    return font


@lru_cache(maxsize=2048)
def _vertical_size(text: str, w: float, h: float) -> float:
    """Largest pixel size at which `text` fits as right-to-left columns in a w x h box."""
    lines = text.split("\n") or [""]
    lo, hi = 4.0, max(4.0, min(w, h, 200.0))
    for _ in range(14):
        s = (lo + hi) / 2
        per_col = max(1, int(h / (s * 1.1)))
        cols = sum(max(1, -(-len(line) // per_col)) for line in lines)
        if cols * s * 1.15 <= w:
            lo = s
        else:
            hi = s
    return lo


@lru_cache(maxsize=2048)
def _horizontal_size(text: str, w: float, h: float) -> float:
    """Largest pixel size at which `text` wraps inside a w x h box."""
    lo, hi = 4.0, max(4.0, min(h, 120.0))
    flags = int(Qt.TextFlag.TextWrapAnywhere)
    for _ in range(12):
        s = (lo + hi) / 2
        r = QFontMetricsF(overlay_font(s)).boundingRect(QRectF(0, 0, w, 1e6), flags, text)
        if r.height() <= h and r.width() <= w + 0.5:
            lo = s
        else:
            hi = s
    return lo


class TextOverlayItem(QGraphicsItem):
    """The block's text drawn over its box; vertical blocks are drawn in columns, right to left."""

    def __init__(self, parent: BlockItem):
        super().__init__(parent)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.text = ""

    def boundingRect(self) -> QRectF:
        return self.parentItem().rect()

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if not self.text:
            return
        r = self.parentItem().rect().adjusted(2, 2, -2, -2)
        if r.width() < 4 or r.height() < 4:
            return
        painter.fillRect(r, QColor(255, 255, 255, 228))
        painter.setPen(QColor(20, 20, 20))
        if self.parentItem().block.vertical:
            self._paint_vertical(painter, r)
        else:
            s = _horizontal_size(self.text, r.width(), r.height())
            painter.setFont(overlay_font(s))
            painter.drawText(r, int(Qt.TextFlag.TextWrapAnywhere | Qt.AlignmentFlag.AlignCenter), self.text)

    def _paint_vertical(self, painter: QPainter, r: QRectF) -> None:
        s = _vertical_size(self.text, r.width(), r.height())
        painter.setFont(overlay_font(s))
        fm = QFontMetricsF(painter.font())
        per_col = max(1, int(r.height() / (s * 1.1)))
        step_x, step_y = s * 1.15, s * 1.1
        x = r.right() - step_x
        for line in self.text.split("\n"):
            chunks = [line[i:i + per_col] for i in range(0, len(line), per_col)] or [""]
            for chunk in chunks:
                y = r.top()
                for ch in chunk.translate(_VERTICAL_FORMS):
                    cw = fm.horizontalAdvance(ch)
                    painter.drawText(QPointF(x + (step_x - cw) / 2, y + fm.ascent()), ch)
                    y += step_y
                x -= step_x


CHECK_COLOR = QColor(230, 110, 0)  # the ring of the numbers on a page marked "check the order"


class BadgeItem(QGraphicsItem):
    """The block's order number in a disc at its top-right corner, same size at any zoom; twice
    as large, ringed, on a page marked "check the order" (`prominent`)."""

    def __init__(self, parent: BlockItem):
        super().__init__(parent)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.number = 0
        self.prominent = False

    def _radius(self) -> float:
        return 22.0 if self.prominent else 11.0

    def set_prominent(self, prominent: bool) -> None:
        if prominent != self.prominent:
            self.prepareGeometryChange()
            self.prominent = prominent
            self.setZValue(20 if prominent else 0)

    def boundingRect(self) -> QRectF:
        r = self._radius() + 3
        return QRectF(-r, -r, 2 * r, 2 * r)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        parent = self.parentItem()
        color = SELECTED_COLOR if parent.isSelected() else KIND_COLORS.get(parent.block.kind, KIND_COLORS["other"])
        r = self._radius()
        painter.setBrush(color)
        painter.setPen(QPen(CHECK_COLOR, 4) if self.prominent else QPen(QColor(255, 255, 255), 1.5))
        painter.drawEllipse(QRectF(-r, -r, 2 * r, 2 * r))
        font = QFont()
        font.setPixelSize(24 if self.prominent else 12)
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(QPen(QColor(255, 255, 255), 1.5))
        painter.drawText(QRectF(-r, -r, 2 * r, 2 * r), int(Qt.AlignmentFlag.AlignCenter), str(self.number))


class BlockItem(QGraphicsRectItem):
    """One block: a selectable, movable box with a resize handle at its bottom-right corner."""

    def __init__(self, block: Block, view):
        x0, y0, x1, y1 = block.box
        super().__init__(0, 0, x1 - x0, y1 - y0)
        self.view = view  # the PageView: told about moves and double-clicks
        self.block = block
        self.setPos(x0, y0)
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable
                      | QGraphicsItem.GraphicsItemFlag.ItemIsMovable
                      | QGraphicsItem.GraphicsItemFlag.ItemIsFocusable)
        self.setAcceptHoverEvents(True)
        self.badge = BadgeItem(self)
        self.badge.number = block.order
        self.badge.setPos(x1 - x0, 0)
        self.overlay = TextOverlayItem(self)
        self._resizing = False
        self._press_box = block.box

    def set_display(self, show_box: bool, text: str | None, numbers: bool = False) -> None:
        """Show or hide the box and badge (`numbers`: the badge, large, even without boxes: a page
        marked "check the order"); `text` None hides the overlay."""
        self._show_box = show_box
        self.badge.set_prominent(numbers)
        self.badge.setVisible(show_box or numbers)
        self.overlay.text = text or ""
        self.overlay.setVisible(text is not None)
        self.update()

    def scene_box(self) -> tuple[float, float, float, float]:
        r = self.mapRectToScene(self.rect())
        return (r.left(), r.top(), r.right(), r.bottom())

    def _handle_rect(self) -> QRectF:
        scale = self.view.transform().m11() if self.view else 1.0
        s = HANDLE_PX / max(scale, 1e-6)
        r = self.rect()
        return QRectF(r.right() - s, r.bottom() - s, s, s)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        selected = self.isSelected()
        if not getattr(self, "_show_box", True) and not selected:
            return
        color = SELECTED_COLOR if selected else KIND_COLORS.get(self.block.kind, KIND_COLORS["other"])
        pen = QPen(color, 3 if selected else 2)
        pen.setCosmetic(True)
        painter.setPen(pen)
        fill = QColor(color)
        fill.setAlpha(45 if selected else 0)
        painter.setBrush(QBrush(fill))
        painter.drawRect(self.rect())
        if selected:
            painter.setBrush(color)
            painter.drawRect(self._handle_rect())

    def itemChange(self, change, value):
        if change == QGraphicsItem.GraphicsItemChange.ItemSelectedHasChanged:
            self.setZValue(10 if value else 0)  # the selected block is drawn above its neighbours
        return super().itemChange(change, value)

    # --- mouse: move with the base class, resize from the handle ---------------------------
    def mousePressEvent(self, event) -> None:
        self._press_box = self.scene_box()
        self._resizing = self.isSelected() and self._handle_rect().contains(event.pos())
        if self._resizing:
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self._resizing:
            p = event.pos()
            self.prepareGeometryChange()
            self.setRect(QRectF(0, 0, max(4.0, p.x()), max(4.0, p.y())))
            self.badge.setPos(self.rect().width(), 0)
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        was_resizing, self._resizing = self._resizing, False
        if not was_resizing:
            super().mouseReleaseEvent(event)
        box = self.scene_box()
        if self.view and max(abs(a - b) for a, b in zip(box, self._press_box)) > 0.5:
            self.view.block_geometry_edited(self.block.id, box)

    def mouseDoubleClickEvent(self, event) -> None:
        if self.view:
            self.view.start_inline_edit(self.block.id)
        event.accept()

    def hoverMoveEvent(self, event) -> None:
        on_handle = self.isSelected() and self._handle_rect().contains(event.pos())
        self.setCursor(Qt.CursorShape.SizeFDiagCursor if on_handle else Qt.CursorShape.SizeAllCursor)


def editor_font_px(text: str, box, zoom: float) -> float:
    """The in-place editor's font size in scene pixels for a block `box` seen at `zoom` (screen
    pixels per scene pixel): the size the block's text is drawn at on the page, kept on screen
    between the block panel's size (PANEL_TEXT_PX) and EDITOR_MAX_PX."""
    x0, y0, x1, y1 = box
    w, h = max(4.0, x1 - x0), max(4.0, y1 - y0)
    fitted = _horizontal_size(text or "あ", w, h)  # scene pixels, as the overlay would draw it
    zoom = max(zoom, 1e-3)
    return max(PANEL_TEXT_PX, min(EDITOR_MAX_PX, fitted * zoom)) / zoom


class InlineEditorItem(QGraphicsTextItem):
    """Edit a block's text on the canvas: Enter commits, Shift+Enter breaks a line, Esc cancels.
    Its text is as large on screen as the page's overlay, never smaller than the block panel's."""

    def __init__(self, block: Block, text: str, on_done, zoom: float = 1.0):
        super().__init__(text)
        self.block_id = block.id
        self._on_done = on_done  # on_done(block_id, text or None when cancelled)
        self._finished = False
        x0, y0, x1, y1 = block.box
        px = editor_font_px(text, block.box, zoom)
        self.setPos(x0, y0)
        self.setTextWidth(max(x1 - x0, EDITOR_MIN_CHARS * px))
        self.setFont(overlay_font(math.ceil(px)))
        self.setDefaultTextColor(QColor(10, 10, 10))
        opt = QTextOption()
        opt.setWrapMode(QTextOption.WrapMode.WrapAnywhere)
        self.document().setDefaultTextOption(opt)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextEditorInteraction)
        self.setZValue(100)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.fillRect(self.boundingRect(), QColor(255, 255, 230))
        pen = QPen(SELECTED_COLOR, 2)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.drawRect(self.boundingRect())
        super().paint(painter, option, widget)

    def finish(self, commit: bool) -> None:
        if self._finished:
            return
        self._finished = True
        self._on_done(self.block_id, self.toPlainText() if commit else None)

    def keyPressEvent(self, event) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
                event.modifiers() & Qt.KeyboardModifier.ShiftModifier):
            self.finish(True)
            return
        if event.key() == Qt.Key.Key_Escape:
            self.finish(False)
            return
        super().keyPressEvent(event)

    def focusOutEvent(self, event) -> None:
        super().focusOutEvent(event)
        self.finish(True)
