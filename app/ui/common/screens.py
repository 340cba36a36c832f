"""Windows and dialogs that fit the screen: the main window's first size from the available
screen area, its last geometry restored but kept on the screens there are now, and no dialog
larger than its screen.

The geometry rules are plain functions of rectangles (`initial_rect`, `fit_rect`), so they are
tested with any screen size; `place_window` and `DialogFitter` apply them to real widgets.
"""
from __future__ import annotations

from PySide6.QtCore import QByteArray, QEvent, QObject, QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QDialog, QMainWindow, QWidget

PREFERRED = QSize(1400, 900)  # the first size on a screen that has room for it
SCREEN_SHARE = 0.92  # of the available area, on smaller screens
DOCK_MIN_WIDTH = 220  # docks narrower than their content scroll
FRAME_ALLOWANCE = QSize(16, 40)  # window-manager frame, until the real one is known (shown window)


def initial_rect(available: QRect, preferred: QSize = PREFERRED) -> QRect:
    """The main window's first frame: `preferred`, or SCREEN_SHARE of the available area on a
    smaller screen, centred in it."""
    w = min(preferred.width(), int(available.width() * SCREEN_SHARE))
    h = min(preferred.height(), int(available.height() * SCREEN_SHARE))
    rect = QRect(0, 0, w, h)
    rect.moveCenter(available.center())
    return rect


def fit_rect(rect: QRect, screens: list[QRect]) -> QRect:
    """`rect` moved (and shrunk if needed) to lie inside the available area of the screen it
    overlaps most (the first screen when it overlaps none: a monitor that was unplugged)."""
    if not screens:
        return QRect(rect)
    best = max(screens, key=lambda s: (s.intersected(rect).width() * s.intersected(rect).height()))
    if best.intersected(rect).isEmpty():
        best = screens[0]
    w, h = min(rect.width(), best.width()), min(rect.height(), best.height())
    x = min(max(rect.x(), best.left()), best.right() + 1 - w)
    y = min(max(rect.y(), best.top()), best.bottom() + 1 - h)
    return QRect(x, y, w, h)


def available_screens() -> list[QRect]:
    """The available area (without panels and docks) of every screen, the primary one first."""
    primary = QGuiApplication.primaryScreen()
    screens = [primary] + [s for s in QGuiApplication.screens() if s is not primary]
    return [s.availableGeometry() for s in screens if s is not None]


def _frame_of(window: QWidget) -> QRect:
    """The window's frame: as the window manager drew it once shown; before that its geometry
    with FRAME_ALLOWANCE around it (a title bar on top, borders on the other sides)."""
    frame, inner = window.frameGeometry(), window.geometry()
    if window.isVisible() and frame != inner:
        return frame
    side = FRAME_ALLOWANCE.width() // 2
    return inner.adjusted(-side, -(FRAME_ALLOWANCE.height() - side), side, side)


def _frame_margins(window: QWidget) -> QSize:
    """The frame the window manager adds around `window`: measured once the window is shown
    with its frame, FRAME_ALLOWANCE before that."""
    frame, inner = _frame_of(window), window.geometry()
    return QSize(max(0, frame.width() - inner.width()), max(0, frame.height() - inner.height()))


def place_window(window: QMainWindow, geometry: QByteArray | None = None) -> None:
    """Restore `geometry` (from QWidget.saveGeometry) when given, else size the window from the
    primary screen; either way the frame ends up inside one screen's available area."""
    screens = available_screens()
    if not screens:
        return
    if isinstance(geometry, QByteArray) and not geometry.isEmpty() and window.restoreGeometry(geometry):
        if window.isMaximized() or window.isFullScreen():
            return
        frame = _frame_of(window)
        target = fit_rect(frame, screens)
        if target == frame:
            return  # as it was left: resizing by the frame's allowance would shrink it at every start
    else:
        target = initial_rect(screens[0])
    margins = _frame_margins(window)
    window.resize(max(1, target.width() - margins.width()), max(1, target.height() - margins.height()))
    window.move(target.topLeft())  # move() places the frame's corner


def scrollable_docks(window: QMainWindow, max_width: int = DOCK_MIN_WIDTH) -> None:
    """Docks whose content cannot be narrower than `max_width` get a scroll area around it, so
    they never make the window wider than a small screen (they scroll instead)."""
    from PySide6.QtWidgets import QDockWidget, QFrame, QScrollArea

    for dock in window.findChildren(QDockWidget):
        content = dock.widget()
        if content is None or isinstance(content, QScrollArea) or content.minimumSizeHint().width() <= max_width:
            continue
        area = QScrollArea()
        area.setObjectName(f"{dock.objectName()}_scroll")
        area.setFrameShape(QFrame.Shape.NoFrame)
        area.setWidgetResizable(True)
        area.setWidget(content)
        area.setMinimumWidth(max_width)
        dock.setWidget(area)


def fit_dialog(dialog: QWidget) -> None:
    """No larger than the available area of its screen, and inside it."""
    screen = dialog.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return
    area = screen.availableGeometry()
    dialog.setMaximumSize(area.size() - _frame_margins(dialog))
    frame = dialog.frameGeometry()
    if not area.contains(frame):
        fitted = fit_rect(frame, [area])
        dialog.resize(min(dialog.width(), fitted.width()), min(dialog.height(), fitted.height()))
        dialog.move(fitted.topLeft())


class DialogFitter(QObject):
    """An application-wide event filter: every dialog is fitted to its screen as it is shown
    (ours, message boxes and file dialogs alike)."""

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Show and isinstance(obj, QDialog):
            fit_dialog(obj)
        return False


_fitter: DialogFitter | None = None


def install_dialog_fitter(app: QApplication | None = None) -> DialogFitter:
    """Install the DialogFitter on the application once; returns it."""
    global _fitter
    app = app or QApplication.instance()
    if _fitter is None:
        _fitter = DialogFitter(app)
        app.installEventFilter(_fitter)
    return _fitter
