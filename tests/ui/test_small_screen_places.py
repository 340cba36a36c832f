"""Places a small screen showed wrong: the Translate button (its own icon, greyed out with no
volume open) and the Script dock at 1280x800 with the find bar open (a dozen rows, Status in view
without scrolling sideways)."""
from PySide6.QtWidgets import QApplication, QStyle

from app.ui.script.model import STATUS


def test_translate_has_its_own_icon_and_waits_for_a_volume(make_window, pages, qtbot):
    w = make_window()
    translate = w.translation.act.toolbar
    assert not translate.isEnabled() and not w.translation.act.translate_all.isEnabled()  # nothing open
    reload = QApplication.style().standardIcon(QStyle.StandardPixmap.SP_BrowserReload).pixmap(24).toImage()
    assert translate.icon().pixmap(24).toImage() != reload  # not the refresh glyph
    w.session.open_path(pages)
    assert translate.isEnabled() and w.translation.act.translate_all.isEnabled()


def test_the_script_dock_at_1280x800_shows_rows_and_status(make_window, pages, qtbot):
    from tests.ui.test_translation_gui import read_pages

    w = make_window()
    w.resize(1280, 800)
    w.session.open_path(pages)
    read_pages(w)
    w.script.find_action.trigger()  # the find bar opens, and the Script dock with it
    qtbot.waitUntil(lambda: w.script.dock.isVisible(), timeout=5000)
    for _ in range(5):
        QApplication.processEvents()
    table = w.script.table
    rows_fit = table.viewport().height() // table.verticalHeader().defaultSectionSize()
    assert rows_fit >= 10, f"{rows_fit} rows in view ({w.script.dock.height()} px dock)"
    header = table.horizontalHeader()
    status_right = header.sectionViewportPosition(STATUS) + header.sectionSize(STATUS)
    assert status_right <= table.viewport().width() and table.horizontalScrollBar().maximum() == 0
