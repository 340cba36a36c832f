"""The colours of a block's status, the same in the Script view and the block list: tints light
enough for dark text and translucent, so that they read on the dark theme too."""
from __future__ import annotations

from PySide6.QtGui import QBrush, QColor

STATUS_COLOURS = {
    "not translated": QColor(235, 87, 87, 70),
    "looks untranslated": QColor(242, 153, 74, 90),
    "machine": QColor(86, 156, 214, 55),
    "edited": QColor(39, 174, 96, 55),
    "overflows": QColor(187, 107, 217, 110),  # the lettering: does not fit at all, cut to the bubble
    "below minimum size": QColor(187, 107, 217, 60),
}


def status_brush(status: str) -> QBrush | None:
    colour = STATUS_COLOURS.get(status)
    return QBrush(colour) if colour is not None else None
