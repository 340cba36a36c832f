"""The window and the dialogs fit the screen: first size from the available area, the last
geometry restored inside the screens there are now, long messages wrap instead of widening a
dialog. Qt's offscreen screen here is 800x800, a small screen."""
from __future__ import annotations

from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QPushButton

from app.ui.common.screens import fit_rect, initial_rect, place_window
from app.ui.common.widgets import breakable

LAPTOP = QRect(0, 0, 1280, 770)  # 1280x800 less a 30 px panel
DESKTOP = QRect(0, 0, 1920, 1050)


def _inside(rect: QRect, area: QRect) -> bool:
    return area.contains(rect.topLeft()) and area.contains(rect.bottomRight())


def test_first_size_from_the_available_area():
    big = initial_rect(DESKTOP)
    assert big.size() == QSize(1400, 900) and _inside(big, DESKTOP)
    small = initial_rect(LAPTOP)
    assert small.width() <= 1280 * 0.92 and small.height() <= 770 * 0.92
    assert _inside(small, LAPTOP) and small.center() == LAPTOP.center()


def test_restored_geometry_is_kept_on_a_screen():
    # saved on a large monitor at its right, restored on a laptop alone
    saved = QRect(2000, 300, 1400, 900)
    fitted = fit_rect(saved, [LAPTOP])
    assert _inside(fitted, LAPTOP) and fitted.size() == QSize(1280, 770)
    # two screens: a window on the second one stays there, moved inside it
    second = QRect(1280, 0, 1920, 1050)
    fitted = fit_rect(QRect(2800, 500, 800, 700), [LAPTOP, second])
    assert _inside(fitted, second) and fitted.size() == QSize(800, 700)
    # already inside: unchanged
    assert fit_rect(QRect(100, 100, 600, 400), [LAPTOP]) == QRect(100, 100, 600, 400)


def test_window_fits_a_small_screen(qtbot, tmp_path):
    from app.ui.shell.main_window import MainWindow

    area = QGuiApplication.primaryScreen().availableGeometry()
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    assert w.minimumSizeHint().width() <= area.width(), "the window can be as narrow as the screen"
    assert _inside(w.frameGeometry(), area), (w.frameGeometry(), area)
    # a geometry saved on a bigger screen, far to the right
    w.resize(1400, 900)
    w.move(1500, 900)
    saved = w.saveGeometry()
    w2 = MainWindow()
    qtbot.addWidget(w2)
    place_window(w2, saved)
    w2.show()
    assert _inside(w2.frameGeometry(), area), (w2.frameGeometry(), area)
    w.shutdown()
    w2.shutdown()


def test_a_restored_window_that_fits_keeps_its_size_start_after_start(qtbot):
    """Each start restores what the last one saved: a window that fits its screen comes back as
    it was left, not smaller by a window frame's allowance at every start (it crept 16x40 px)."""
    from app.ui.shell.main_window import MainWindow

    first = MainWindow()
    qtbot.addWidget(first)
    first.resize(600, 500)
    first.move(40, 60)
    first.show()
    saved, size = first.saveGeometry(), first.size()
    first.shutdown()
    for _ in range(3):
        w = MainWindow()
        qtbot.addWidget(w)
        place_window(w, saved)
        w.show()
        assert w.size() == size, (w.size(), size)
        saved = w.saveGeometry()
        w.shutdown()


def test_banner_buttons_wrap_in_a_narrow_window(qtbot):
    from app.ui.common.dialogs import NoticeBar

    bar = NoticeBar()
    qtbot.addWidget(bar)
    bar.show_message("warning", "OCR model and text detector not installed.",
                     [("Download Hayai v2.5 Nova (about 620 MB)", lambda: None), ("Choose a local folder…", lambda: None),
                      ("Model manager…", lambda: None)])
    bar.resize(360, bar.heightForWidth(360) if bar.hasHeightForWidth() else 120)
    bar.show()
    qtbot.waitUntil(lambda: bar.buttons()[2].isVisible())
    widest = max(b.sizeHint().width() for b in bar.buttons())
    assert bar.minimumSizeHint().width() < widest + 120
    rows = {b.geometry().top() for b in bar.buttons()}
    assert len(rows) > 1, "the buttons moved onto more rows"
    # another message: only its own buttons show (the old ones are gone at once)
    old = bar.buttons()
    bar.show_message("demo", "Demo models", [("Model manager…", lambda: None)])
    assert not any(b.isVisible() for b in old)
    qtbot.waitUntil(lambda: bar.buttons()[0].isVisible())
    shown = [b for b in bar.findChildren(QPushButton) if b.isVisible() and b is not bar.close_button]
    assert shown == bar.buttons() and shown[0].text() == "Model manager…"


def test_long_error_wraps_in_the_model_manager(qtbot):
    from app.ui.models.manager import ModelManagerDialog

    area = QGuiApplication.primaryScreen().availableGeometry()
    dlg = ModelManagerDialog()
    qtbot.addWidget(dlg)
    path = "/home/someone/.local/share/hayai-desktop/models/comic-speech-bubble-detector/" * 6
    message = ("HTTP error 503 from https://huggingface.co/api/models/ogkalu/comic-speech-bubble-detector-yolov8m "
               f"while fetching {path}model.pt; check the connection and try again. ") * 4
    dlg._on_failed("Downloading comic-speech-bubble-detector", message)
    dlg.show()
    qtbot.waitExposed(dlg)
    assert dlg.progress_label.wordWrap()
    assert dlg.width() <= area.width() and dlg.frameGeometry().width() <= area.width(), dlg.width()
    assert "503" in dlg.progress_label.text()
    dlg.reject()  # stops the dialog's thread


def test_breakable_splits_long_words_only():
    assert breakable("a short message") == "a short message"
    long = "/very/long/path/" * 5
    out = breakable(f"see {long} now")
    assert out.replace("\u200b", "") == f"see {long} now" and "\u200b" in out
    assert max(len(part) for part in breakable("x" * 100).split("\u200b")) <= 40


def test_every_toolbar_control_shows_on_a_laptop_screen(qtbot):
    """At the first size on a 1280x800 laptop nothing hides behind a toolbar's "»": the reading
    settings have a row of their own, the page-view toggle sits beside the actions."""
    from PySide6.QtWidgets import QToolBar

    from app.ui.shell.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.setGeometry(initial_rect(LAPTOP))
    w.show()
    qtbot.waitUntil(lambda: w.act.order.isVisible(), timeout=3000)
    bars = {tb.objectName(): tb for tb in w.findChildren(QToolBar)}
    assert {"main_toolbar", "render_toolbar", "settings_toolbar"} <= set(bars)
    hidden = [(name, getattr(a, "text", lambda: "")() or type(wd).__name__)
              for name, tb in bars.items() for a in tb.actions()
              for wd in [tb.widgetForAction(a)] if wd is not None and not wd.isVisible() and not a.isSeparator()]
    assert hidden == []
    assert bars["main_toolbar"].y() == bars["render_toolbar"].y() < bars["settings_toolbar"].y()
    w.shutdown()
