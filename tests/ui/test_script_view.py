"""The Script dock: every block of the volume, edited in place (one undo step each), filtered by
status and page, sorted, a row shows its block on its page."""
from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLineEdit

from app.core import edits
from app.core.document import Block
from app.ui.script.model import PAGE, SOURCE, STATUS, TRANSLATION


def _fill(w):
    blocks = [Block(id=f"b{i}", order=i + 1, kind="bubble", box=(20 + 100 * i, 30, 90 + 100 * i, 200),
                    ocr_text=f"テキスト{i}") for i in range(3)]
    blocks[0] = replace(blocks[0], translation="Hello", machine_translation="Hello", translator="test")
    blocks[1] = replace(blocks[1], translation="Mine")
    w.edit(lambda p: replace(p, blocks=tuple(blocks), processed=True), "read", page="page-001.png")
    two = (Block(id="c0", order=1, kind="text", box=(10, 10, 50, 50), ocr_text="二ページ",
                 machine_flag="untranslated", machine_translation="二ページ"),
           Block(id="c1", order=2, kind="text", box=(60, 10, 90, 50), ocr_text="まだ"))
    w.edit(lambda p: replace(p, blocks=two, processed=True), "read", page="page-002.png")


def _cells(view, col):
    return [view.proxy.index(r, col).data() for r in range(view.proxy.rowCount())]


def test_script_view_opens_filters_sorts_and_follows_the_canvas(make_window, pages, qtbot):
    w = make_window()
    w.session.open_path(pages)
    _fill(w)
    w.show()
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=5000)
    view = w.script
    assert not view.dock.isVisible()
    QTest.keyClick(w, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(view.dock.isVisible, timeout=5000)
    assert _cells(view, SOURCE) == ["テキスト0", "テキスト1", "テキスト2", "二ページ", "まだ"]
    assert _cells(view, STATUS) == ["machine", "edited", "not translated", "looks untranslated", "not translated"]
    assert view.count_label.text() == "5 blocks"
    view.set_status_filter("not translated")
    assert _cells(view, SOURCE) == ["テキスト2", "まだ"] and view.count_label.text() == "2 of 5 blocks"
    view.first_page.setValue(2)
    assert _cells(view, SOURCE) == ["まだ"]
    view.first_page.setValue(1)
    view.set_status_filter("")
    view.search.setText("ページ")
    assert _cells(view, SOURCE) == ["二ページ"]
    view.search.clear()
    view.table.sortByColumn(PAGE, Qt.SortOrder.DescendingOrder)
    assert _cells(view, PAGE)[:2] == [2, 2]
    view.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
    view.proxy.sort(-1)
    # a row shows its block on its page
    view.table.setCurrentIndex(view.proxy.index(3, SOURCE))
    assert w.current == "page-002.png" and w.panel.current_id == "c0"
    # an edit on the canvas side (the panel's path) shows in the table at once
    w.edit(lambda p: edits.set_translation(p, "c1", "Not yet"), "edit translation", page="page-002.png")
    assert _cells(view, TRANSLATION)[4] == "Not yet" and _cells(view, STATUS)[4] == "edited"


def test_editing_a_cell_is_one_undo_step(make_window, pages, qtbot):
    w = make_window()
    w.session.open_path(pages)
    _fill(w)
    w.show()
    w.script.dock.show()
    view = w.script
    index = view.proxy.index(2, TRANSLATION)
    view.table.setCurrentIndex(index)
    view.table.setFocus()
    depth = w.undo_stack.count()
    view.table.edit(index)
    editors = [e for e in view.table.viewport().findChildren(QLineEdit) if e.isVisible()]
    assert len(editors) == 1
    editor = editors[0]
    QTest.keyClicks(editor, "Three")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    # the delegate commits on a queued call
    qtbot.waitUntil(lambda: w.doc.page("page-001.png").block("b2").translation == "Three", timeout=5000)
    assert w.undo_stack.count() == depth + 1
    # the source column too
    src = view.proxy.index(4, SOURCE)
    assert view.model.setData(view.proxy.mapToSource(src), "まだまだ")
    assert w.doc.page("page-002.png").block("c1").text == "まだまだ"
    assert w.undo_stack.count() == depth + 2
    w.undo_stack.undo()
    w.undo_stack.undo()
    assert w.doc.page("page-001.png").block("b2").translation == ""
    assert w.doc.page("page-002.png").block("c1").text is None
    assert _cells(view, TRANSLATION)[2] == ""


def test_pages_and_status_bar_show_what_is_left(make_window, pages, qtbot):
    w = make_window()
    w.session.open_path(pages)
    _fill(w)
    label = w.page_list.item(0).text()
    assert "2 of 3 translated" in label, label
    assert "not translated" in w.page_list.item(1).text()
    assert w.script.left_label.text() == "3 blocks left to translate"
    w.edit(lambda p: edits.set_translation(p, "b2", "Three"), "edit translation", page="page-001.png")
    assert w.page_list.item(0).text().endswith("· translated")
    assert w.script.left_label.text() == "2 blocks left to translate"
