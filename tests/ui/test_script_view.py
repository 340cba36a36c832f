"""The Script dock: every block of the volume, edited in place (one undo step each), filtered by
status and page, sorted, a row shows its block on its page."""
from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLineEdit

from app.core.document import edits
from app.core.document.types import Block
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


def _statuses(view):
    """The translation's status of each row shown (the lettering's fit, found in the background
    while the view is shown, is checked by the fit test)."""
    from app.ui.script.model import STATUS_ROLE

    return [view.proxy.index(r, STATUS).data(STATUS_ROLE) for r in range(view.proxy.rowCount())]


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
    assert _statuses(view) == ["machine", "edited", "not translated", "looks untranslated", "not translated"]
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
    assert _cells(view, TRANSLATION)[4] == "Not yet" and _statuses(view)[4] == "edited"


def _editing_row_two(make_window, pages):
    """The window with the script shown and the editor open on row 2's translation cell."""
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
    return w, view, editors[0], depth


def test_editing_a_cell_is_one_undo_step(make_window, pages, qtbot):
    w, view, editor, depth = _editing_row_two(make_window, pages)
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


def test_a_fit_found_while_a_cell_is_typed_into_keeps_what_was_typed(make_window, pages, qtbot):
    # the lettering fit of the page comes in from the background while the user types in one of
    # its cells: the row is repainted, the typing stays and is what gets committed
    w, view, editor, _ = _editing_row_two(make_window, pages)
    QTest.keyClicks(editor, "Thr")
    view.fit.remember("page-001.png", None, {"b0": "overflows"})
    assert "overflows" in _cells(view, STATUS)[0]  # the fit reached the table
    QTest.keyClicks(editor, "ee")
    assert editor.text() == "Three"
    QTest.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: w.doc.page("page-001.png").block("b2").translation == "Three", timeout=5000)


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


def test_the_lettering_fit_is_the_exports_and_every_status_leads_back_to_its_block(make_window, qtbot, tmp_path):
    """Overflows / below minimum size in the Script view and the block list come from the layout
    the export letters (the same blocks as the render report names); filtering by any status and
    choosing a row shows the block on its page; an edit that makes it fit clears the mark."""
    import shutil
    from pathlib import Path

    from app.core.exports.translated_pages import RenderOptions, export_translated
    from app.render.inpaint import load_inpainter
    from app.render.style import StyleOverride
    from app.ui.common.status_colours import STATUS_COLOURS
    from app.ui.editor.block_panel import STATUS_ROLE

    sample = Path(__file__).resolve().parents[2] / "app" / "resources" / "samples" / "page_0000.png"
    folder = tmp_path / "vol"
    folder.mkdir()
    for name in ("001.png", "002.png"):
        shutil.copyfile(sample, folder / name)

    def tr(i, source, text, box, **kw):
        return Block(id=f"b{i}", order=i, kind="text", box=box, ocr_text=source, translation=text,
                     machine_translation=text, translator="test", **kw)

    one = (tr(1, "タナカさん", "Tanaka!", (20.0, 20.0, 200.0, 200.0)),
           tr(2, "うん", "This translation is far far too long for such a tiny box to hold it",
              (300.0, 300.0, 318.0, 312.0)),
           tr(3, "ねえ", "Hey there, listen to me", (400.0, 400.0, 470.0, 440.0),
              style=StyleOverride(min_size=30, max_size=40)),
           Block(id="b4", order=4, kind="text", box=(500.0, 20.0, 560.0, 200.0), ocr_text="まだ"),
           Block(id="b5", order=5, kind="text", box=(600.0, 20.0, 660.0, 200.0), ocr_text="ユキ",
                 translation="Yuki"))
    w = make_window()
    w.session.open_path(folder)
    w.edit(lambda p: replace(p, blocks=one, processed=True), "read", page="001.png")
    w.edit(lambda p: replace(p, blocks=(replace(one[0], id="c1"),), processed=True), "read", page="002.png")
    w.show()
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=5000)
    view = w.script
    QTest.keyClick(w, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(view.dock.isVisible, timeout=5000)
    qtbot.waitUntil(lambda: not view.fit.busy() and view.fit.checked_pages() == (2, 2), timeout=60000)
    assert _cells(view, STATUS) == ["machine", "machine · overflows", "machine · below minimum size",
                                    "not translated", "edited", "machine"]
    # what the export (`hayai-desktop render`) reports for the same project
    report = export_translated(w.doc.project, "png", tmp_path / "out", load_inpainter("opencv"),
                               RenderOptions(lang="en"))
    marked = [(view.model.key(r)[0], view.model.block(r).order) for r in range(view.model.rowCount())
              if view.model.fit_status(r)]
    assert sorted(report.below_min_blocks) == marked and report.overflow == 1
    # the block list shows the same tints
    w.show_page("001.png")
    qtbot.waitUntil(lambda: w.panel.list.count() == 5, timeout=5000)
    rows = {w.panel.list.item(i).data(Qt.ItemDataRole.UserRole): w.panel.list.item(i) for i in range(5)}
    assert {bid: item.data(STATUS_ROLE) for bid, item in rows.items()} == {
        "b1": "machine", "b2": "overflows", "b3": "below minimum size", "b4": "not translated", "b5": "edited"}
    assert rows["b2"].background().color() == STATUS_COLOURS["overflows"]
    # every status filter: choosing its first row (a mouse click) shows that block on its page
    w.show_page("002.png")
    for status, key in (("overflows", ("001.png", "b2")), ("below minimum size", ("001.png", "b3")),
                        ("not translated", ("001.png", "b4")), ("edited", ("001.png", "b5")),
                        ("machine", ("001.png", "b1"))):
        view.set_status_filter(status)
        w.show_page("002.png")
        view.table.clearSelection()
        rect = view.table.visualRect(view.proxy.index(0, SOURCE))
        QTest.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                         rect.center())
        assert (w.current, w.panel.current_id) == key, status
        assert w.view.selected_ids() == [key[1]]
    # an edit that makes it fit (the box enlarged): the mark goes once the page is checked again
    w.edit(lambda p: edits.set_box(p, "b2", (300.0, 300.0, 700.0, 700.0)), "move", page="001.png")
    view.set_status_filter("")
    qtbot.waitUntil(lambda: _cells(view, STATUS)[1] == "machine" and not view.fit.busy(), timeout=60000)
    assert view.fit.statuses("001.png") == {"b3": "below minimum size"}
    assert w.panel.list.item(1).data(STATUS_ROLE) == "machine"
