"""Undo keys from the editors across a page change, one-letter shortcuts only on the canvas,
the in-place editor's text size, and a drawn box numbered where it falls in the reading order."""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from app.core.document.types import Block
from app.ui.editor.canvas import Mode
from app.ui.editor.items import PANEL_TEXT_PX
from tests.ui.conftest import truth_of

CTRL, SHIFT = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier


def _blocks(w, page, n=2, prefix="t"):
    blocks = tuple(Block(id=f"b{i}", order=i + 1, kind="bubble", box=(40 + 120 * i, 40, 140 + 120 * i, 260),
                         vertical=True, ocr_text=f"{prefix}{i}") for i in range(n))
    w.edit(lambda p: replace(p, blocks=blocks, processed=True), "read", page=page)


def _focus(qtbot, widget):
    widget.window().activateWindow()
    qtbot.waitUntil(widget.window().isActiveWindow, timeout=3000)
    widget.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.waitUntil(widget.hasFocus, timeout=3000)


def test_ctrl_z_in_the_editor_after_a_page_change(make_window, pages, qtbot):
    w = make_window()
    w.session.open_path(pages)
    _blocks(w, "page-001.png", prefix="one")
    _blocks(w, "page-002.png", prefix="two")
    w.undo_stack.clear()
    w.panel.select_block("b0")
    editor = w.panel.text_edit
    _focus(qtbot, editor)
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    QTest.keyClicks(editor, "ab")
    # still typing: Ctrl+Z is the editor's own
    QTest.keyClick(editor, Qt.Key.Key_Z, CTRL)
    assert editor.toPlainText() == "one0" and w.undo_stack.count() == 0
    QTest.keyClicks(editor, "xy")
    # the page changes (by key: PageDown goes to the window's action while the list has focus)
    _focus(qtbot, w.panel.list)
    QTest.keyClick(w.panel.list, Qt.Key.Key_PageDown)
    qtbot.waitUntil(lambda: w.current == "page-002.png", timeout=3000)
    assert w.doc.page("page-001.png").block("b0").text == "one0xy"
    # a block of the new page in the editor, which keeps the focus; its own history is empty now
    w.panel.select_block("b1")
    _focus(qtbot, editor)
    assert editor.toPlainText() == "two1" and not editor.document().isUndoAvailable()
    QTest.keyClick(editor, Qt.Key.Key_Z, CTRL)
    qtbot.waitUntil(lambda: w.doc.page("page-001.png").block("b0").text is None, timeout=3000)
    assert w.current == "page-001.png", "undo shows the page it changed"
    focused = QApplication.focusWidget()
    QTest.keyClick(focused, Qt.Key.Key_Z, CTRL | SHIFT)
    qtbot.waitUntil(lambda: w.doc.page("page-001.png").block("b0").text == "one0xy", timeout=3000)


def test_ctrl_z_in_an_open_in_place_editor(make_window, pages, qtbot):
    w = make_window()
    w.session.open_path(pages)
    qtbot.waitUntil(w.view.has_image, timeout=10000)  # the page arriving rebuilds the canvas's items
    _blocks(w, "page-001.png")
    w.view.select_block("b0")
    w.slots.action_edit_inline()
    ed = w.view.inline_editor()
    _focus(qtbot, w.view)
    ed.setFocus()
    qtbot.waitUntil(lambda: w.view.scene().isActive() and ed.hasFocus(), timeout=3000)
    QTest.keyClicks(w.view, "q")
    assert "q" in ed.toPlainText() and w.view.inline_edit_pending()
    before = w.undo_stack.count()
    QTest.keyClick(w.view, Qt.Key.Key_Z, CTRL)
    assert w.view.inline_editor() is ed and "q" not in ed.toPlainText()
    assert w.undo_stack.count() == before


def test_one_letter_shortcuts_need_the_canvas(make_window, pages, qtbot):
    w = make_window()
    w.session.open_path(pages)
    _blocks(w, "page-001.png")
    overlay = w.settings.overlay
    # the user was typing in the block's editor; the block is deselected (the editor disabled)
    w.panel.select_block("b0")
    _focus(qtbot, w.panel.text_edit)
    w.view.select_block("")
    w.panel.select_block("")
    assert not w.panel.text_edit.isEnabled()
    focused = QApplication.focusWidget()
    assert focused is w.panel.list, focused  # the keys stay in the panel
    for key in (Qt.Key.Key_T, Qt.Key.Key_B, Qt.Key.Key_T):
        QTest.keyClick(focused, key)
    assert w.settings.overlay == overlay and w.view.mode is Mode.SELECT
    # typed into the model box or the translation field: text, never a command
    w.panel.select_block("b0")
    _focus(qtbot, w.panel.translation_edit)
    QTest.keyClicks(w.panel.translation_edit, "tbt")
    assert w.panel.translation_edit.toPlainText().endswith("tbt")
    assert w.settings.overlay == overlay and w.view.mode is Mode.SELECT
    # on the canvas they work
    _focus(qtbot, w.view)
    QTest.keyClick(w.view, Qt.Key.Key_T)
    assert w.settings.overlay != overlay
    QTest.keyClick(w.view, Qt.Key.Key_B)
    assert w.view.mode is Mode.DRAW


def test_disabled_editor_is_not_a_way_to_shortcuts(make_window, pages, qtbot):
    w = make_window()
    w.session.open_path(pages)
    w.panel.list.setFocus()
    assert not w.panel.text_edit.isEnabled()
    QTest.keyClick(w.panel.text_edit, Qt.Key.Key_T)  # delivered to a disabled editor: nothing
    assert w.settings.overlay == "text"


def test_in_place_editor_text_is_readable_at_any_zoom(make_window, pages, qtbot):
    w = make_window()
    w.session.open_path(pages)
    qtbot.waitUntil(w.view.has_image, timeout=10000)
    big = Block(id="big", order=1, kind="bubble", box=(100, 100, 400, 700), vertical=True, ocr_text="あいうえお")
    small = Block(id="small", order=2, kind="bubble", box=(500, 100, 540, 140), ocr_text="ん")
    w.edit(lambda p: replace(p, blocks=(big, small)), "read")
    for zoom in (0.3, 0.6, 1.0, 2.5):
        w.view.set_zoom(zoom)
        for bid in ("big", "small"):
            w.view.start_inline_edit(bid)
            ed = w.view.inline_editor()
            on_screen = ed.font().pixelSize() * w.view.zoom()
            assert on_screen >= PANEL_TEXT_PX, (zoom, bid, on_screen)
            assert on_screen <= 41, (zoom, bid, on_screen)
            w.view.cancel_inline_edit()
    # at 100 %, a big block's editor is as large as the block's text on the page
    w.view.set_zoom(1.0)
    w.view.start_inline_edit("big")
    assert w.view.inline_editor().font().pixelSize() >= 30
    w.view.cancel_inline_edit()


def test_drawn_box_is_numbered_in_reading_order(make_window, pages, qtbot):
    """A detected block is removed and drawn again by hand: it gets its reading-order number
    back (it used to be numbered last)."""
    w = make_window()
    w.session.open_path(pages)
    qtbot.waitUntil(w.view.has_image, timeout=10000)
    truth = truth_of(pages, w.current)
    assert len(truth.blocks) >= 4
    blocks = [Block(id=f"d{i}", order=i + 1, kind=b.kind, box=b.box, ocr_text=b.text)
              for i, b in enumerate(truth.blocks)]  # the truth's reading order
    missing = len(blocks) // 2
    w.edit(lambda p: p.with_blocks([b for i, b in enumerate(blocks) if i != missing]), "read")
    x0, y0, x1, y1 = truth.blocks[missing].box
    w.act.draw.setChecked(True)
    vp = w.view.viewport()
    start, end = w.view.mapFromScene(x0 + 1, y0 + 1), w.view.mapFromScene(x1 - 1, y1 - 1)
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    QTest.mouseMove(vp, start + QPoint(10, 10))
    QTest.mouseMove(vp, end)
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)
    qtbot.waitUntil(lambda: len(w.doc.page(w.current).blocks) == len(blocks), timeout=60000)
    page = w.doc.page(w.current)
    drawn = next(b for b in page.blocks if b.kind == "manual")
    assert drawn.order == missing + 1, [(b.id, b.order) for b in page.blocks]
    assert [b.id for b in page.blocks if b.kind != "manual"] == [b.id for i, b in enumerate(blocks) if i != missing]
    assert [b.order for b in page.blocks] == list(range(1, len(blocks) + 1))
    assert w.panel.current_id == drawn.id
