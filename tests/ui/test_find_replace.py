"""Find and replace across the volume: Ctrl+F / Ctrl+H (real key events), next / previous
through the pages, source / translation / both, regex and case, Replace all as one undo step."""

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.core.project.codec import project_to_dict
from tests.ui.test_script_view import _fill

CTRL = Qt.KeyboardModifier.ControlModifier

def _content(project) -> dict:
    """The project file's content without the moment it was written (two calls can straddle a second)."""
    d = project_to_dict(project)
    d.pop("saved_at", None)
    return d


def _window(make_window, pages, qtbot):
    w = make_window()
    w.session.open_path(pages)
    _fill(w)
    w.show()
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=5000)
    return w


def test_ctrl_f_finds_across_pages(make_window, pages, qtbot):
    w = _window(make_window, pages, qtbot)
    bar = w.script.find_bar
    QTest.keyClick(w, Qt.Key.Key_F, CTRL)
    qtbot.waitUntil(bar.isVisible, timeout=5000)
    assert w.script.dock.isVisible() and not bar.replace_edit.isVisible()
    bar.find_edit.setText("ページ")  # QTest cannot type kana; the keys below are real
    QTest.keyClick(bar.find_edit, Qt.Key.Key_Return)
    assert w.current == "page-002.png" and w.panel.current_id == "c0" and bar.result.text() == "1 of 1"
    bar.find_edit.setText("テキスト")
    bar.step(1)
    assert (w.current, w.panel.current_id) == ("page-001.png", "b0")
    bar.step(1)
    assert w.panel.current_id == "b1"
    bar.step(-1)
    bar.step(-1)  # wraps to the last match
    assert (w.current, w.panel.current_id, bar.result.text()) == ("page-001.png", "b2", "3 of 3")
    # translation only, case, regex
    bar.where.setCurrentIndex(bar.where.findData("translation"))
    bar.find_edit.setText("hello")
    assert [h.block_id for h in bar.hits()] == ["b0"]
    bar.case.setChecked(True)
    assert bar.hits() == []
    bar.regex.setChecked(True)
    bar.find_edit.setText(r"^(H|M)")
    assert [h.block_id for h in bar.hits()] == ["b0", "b1"]
    bar.find_edit.setText("(")
    assert bar.hits() == [] and "not valid" in bar.result.text()


def test_ctrl_h_replace_all_is_one_undo_step(make_window, pages, qtbot):
    w = _window(make_window, pages, qtbot)
    bar = w.script.find_bar
    QTest.keyClick(w, Qt.Key.Key_H, CTRL)
    qtbot.waitUntil(bar.replace_edit.isVisible, timeout=5000)
    before = _content(w.doc.project)
    bar.where.setCurrentIndex(bar.where.findData("source"))
    bar.regex.setChecked(True)
    bar.find_edit.setText("テキスト|ページ")  # on two pages
    bar.replace_edit.setText("文")
    depth = w.undo_stack.count()
    assert bar.replace_all() == 4
    assert [w.doc.page("page-001.png").block(f"b{i}").text for i in range(3)] == ["文0", "文1", "文2"]
    assert w.doc.page("page-002.png").block("c0").text == "二文"
    assert w.undo_stack.count() == depth + 1
    w.undo_stack.undo()
    assert _content(w.doc.project) == before
    # one at a time, with a regex group, in the translation
    bar.where.setCurrentIndex(bar.where.findData("translation"))
    bar.find_edit.setText(r"(\w+)o$")
    bar.replace_edit.setText(r"\1o!")
    bar.step(1)
    bar.replace_one()
    assert w.doc.page("page-001.png").block("b0").translation == "Hello!"
    assert w.undo_stack.count() == depth + 1
