"""Small widgets that keep the window narrow: a layout whose items wrap onto new rows, and a
one-line label that elides its text instead of widening the window."""
from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLabel, QLayout, QSizePolicy, QWidgetItem

BREAK_AFTER = "/\\_-.,;:=&?"
LONG_WORD = 40


def breakable(text: str, width: int = LONG_WORD) -> str:
    """`text` with zero-width spaces after path and URL separators in words longer than `width`
    characters, so a word-wrapping label can break a long path instead of growing past the
    screen. Shorter words are left alone."""
    out = []
    for word in text.split(" "):
        if len(word) > width:
            word = "".join(ch + ("\u200b" if ch in BREAK_AFTER else "") for ch in word)
            # a run of characters with no separator still needs a break every `width` characters
            parts, run = [], 0
            for ch in word:
                parts.append(ch)
                run = 0 if ch == "\u200b" else run + 1
                if run >= width:
                    parts.append("\u200b")
                    run = 0
            word = "".join(parts)
        out.append(word)
    return " ".join(out)


class FlowLayout(QLayout):
    """Items left to right, wrapping onto a new row when the width runs out (Qt's flow layout
    example, in short); its minimum width is its widest item's."""

    def __init__(self, parent=None, spacing: int = 6):
        super().__init__(parent)
        self._items: list = []
        self.setSpacing(spacing)
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item) -> None:  # noqa: N802 - Qt override
        self._items.append(item)

    def addWidget(self, widget) -> None:  # noqa: N802 - Qt override
        self.addChildWidget(widget)
        self.addItem(QWidgetItem(widget))

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int):  # noqa: N802 - Qt override
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int):  # noqa: N802 - Qt override
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self):  # noqa: N802 - Qt override
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt override
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        return self._arrange(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802 - Qt override
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    def _shown(self) -> list:
        return [i for i in self._items if i.widget() is None or not i.widget().isHidden()]

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        items = self._shown()
        width = sum(i.sizeHint().width() for i in items) + self.spacing() * max(0, len(items) - 1)
        height = max((i.sizeHint().height() for i in items), default=0)
        m = self.contentsMargins()
        return QSize(width + m.left() + m.right(), height + m.top() + m.bottom())

    def minimumSize(self) -> QSize:  # noqa: N802 - Qt override
        size = QSize()
        for item in self._shown():
            size = size.expandedTo(item.minimumSize())
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def _arrange(self, rect: QRect, move: bool) -> int:
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        x, y, row_height = area.x(), area.y(), 0
        for item in self._shown():
            hint = item.sizeHint()
            if x > area.x() and x + hint.width() > area.right() + 1:
                x, y, row_height = area.x(), y + row_height + self.spacing(), 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + self.spacing()
            row_height = max(row_height, hint.height())
        return y + row_height - rect.y() + m.bottom()


class ElidedLabel(QLabel):
    """A one-line label that shows as much of its text as fits, with "…", and the whole text as
    its tooltip; it never asks for more width than a few characters."""

    def __init__(self, text: str = "", parent=None):
        super().__init__(parent)
        self._full = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(40)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        self._full = text
        self.setToolTip(text)
        self._elide()

    def text(self) -> str:
        return self._full

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, max(10, self.width()))
        super().setText(shown)


class WrappedLabel(QLabel):
    """A plain-text label that wraps, long paths and URLs included (`breakable`), so a long
    message makes the dialog taller, never wider than the screen."""

    def __init__(self, text: str = "", parent=None):
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        super().setText(breakable(text))
