"""Toolbar icons drawn in the palette's text colour, so they read on light and dark themes
alike (the style's standard icons are black arrows, invisible on a dark toolbar).

`icon(name, palette)` paints one of ICON_NAMES at several sizes in the palette's ButtonText
colour, with the disabled colour for the disabled state. The window repaints its icons when the
palette changes (a theme switch).
"""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPainterPath, QPalette, QPen, QPixmap

SIZES = (16, 24, 32, 48)


def _folder(p: QPainter) -> None:
    path = QPainterPath()
    path.moveTo(2, 6)
    path.lineTo(9, 6)
    path.lineTo(11, 8)
    path.lineTo(22, 8)
    path.lineTo(22, 19)
    path.lineTo(2, 19)
    path.closeSubpath()
    p.drawPath(path)
    p.drawLine(QPointF(2, 11), QPointF(22, 11))


def _save(p: QPainter) -> None:
    p.drawRoundedRect(QRectF(3, 3, 18, 18), 2, 2)
    p.drawRect(QRectF(7, 3, 10, 6))
    p.drawRect(QRectF(6, 13, 12, 8))


def _play(p: QPainter) -> None:
    path = QPainterPath()
    path.moveTo(7, 4)
    path.lineTo(19, 12)
    path.lineTo(7, 20)
    path.closeSubpath()
    p.fillPath(path, p.pen().color())


def _play_all(p: QPainter) -> None:
    for x in (3, 12):
        path = QPainterPath()
        path.moveTo(x, 5)
        path.lineTo(x + 9, 12)
        path.lineTo(x, 19)
        path.closeSubpath()
        p.fillPath(path, p.pen().color())


def _stop(p: QPainter) -> None:
    p.fillRect(QRectF(6, 6, 12, 12), p.pen().color())


def _arrow(p: QPainter, right: bool) -> None:
    sign = 1 if right else -1
    cx = 12
    p.drawLine(QPointF(cx - 7 * sign, 12), QPointF(cx + 7 * sign, 12))
    p.drawLine(QPointF(cx + 7 * sign, 12), QPointF(cx + 1 * sign, 6))
    p.drawLine(QPointF(cx + 7 * sign, 12), QPointF(cx + 1 * sign, 18))


def _draw_box(p: QPainter) -> None:
    pen = QPen(p.pen())
    pen.setStyle(Qt.PenStyle.DashLine)
    p.save()
    p.setPen(pen)
    p.drawRect(QRectF(3, 5, 14, 12))
    p.restore()
    p.drawLine(QPointF(19, 14), QPointF(19, 22))
    p.drawLine(QPointF(15, 18), QPointF(23, 18))


def _translate(p: QPainter) -> None:
    """A speech bubble holding a kana and a Latin letter: this text into that language."""
    from PySide6.QtGui import QFont

    bubble = QPainterPath()
    bubble.addRoundedRect(QRectF(2, 2, 20, 15), 4, 4)
    tail = QPainterPath()
    tail.moveTo(7, 16)
    tail.lineTo(6, 22)
    tail.lineTo(12, 16)
    p.drawPath(bubble.united(tail))
    font = QFont()
    font.setPixelSize(9)
    font.setBold(True)
    p.setFont(font)
    p.drawText(QRectF(3, 3, 9, 13), Qt.AlignmentFlag.AlignCenter, "あ")
    p.drawText(QRectF(12, 3, 9, 13), Qt.AlignmentFlag.AlignCenter, "A")


PAINTERS = {
    "open_folder": _folder,
    "save": _save,
    "run_page": _play,
    "run_all": _play_all,
    "cancel": _stop,
    "next_page": lambda p: _arrow(p, True),
    "prev_page": lambda p: _arrow(p, False),
    "draw": _draw_box,
    "translate": _translate,
}
ICON_NAMES = tuple(PAINTERS)


def pixmap(name: str, size: int, color: QColor, ratio: float = 1.0) -> QPixmap:
    """`name` drawn in `color` on a transparent `size` x `size` pixmap (24-unit design grid)."""
    pm = QPixmap(int(size * ratio), int(size * ratio))
    pm.setDevicePixelRatio(ratio)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.scale(size / 24.0, size / 24.0)
    pen = QPen(color, 2.0)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    p.setPen(pen)
    p.setBrush(Qt.BrushStyle.NoBrush)
    PAINTERS[name](p)
    p.end()
    return pm


def icon(name: str, palette: QPalette) -> QIcon:
    """The icon `name` in the palette's button-text colour (normal) and its disabled colour."""
    normal = palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.ButtonText)
    disabled = palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText)
    if disabled == normal:
        disabled = QColor(normal)
        disabled.setAlphaF(0.4)
    out = QIcon()
    for size in SIZES:
        for ratio in (1.0, 2.0):
            out.addPixmap(pixmap(name, size, normal, ratio), QIcon.Mode.Normal)
            out.addPixmap(pixmap(name, size, disabled, ratio), QIcon.Mode.Disabled)
    return out
