"""Shortcuts on the common path, drag-and-drop opening, and re-reading a moved block."""
from dataclasses import replace

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtTest import QTest

from app.core.document import edits
from app.core.document.types import Block
from app.ui.editor.canvas import Mode


def test_shortcuts_pages_blocks_draw_overlay(make_window, pages, qtbot):
    w = make_window()
    w.session.open_path(pages)
    blocks = tuple(Block(id=f"b{i}", order=i + 1, kind="text", box=(10 + 60 * i, 10, 60 + 60 * i, 90))
                   for i in range(3))
    w.edit(lambda p: replace(p, blocks=blocks), "read")
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=5000)
    w.view.setFocus()
    QTest.keyClick(w, Qt.Key.Key_PageDown)
    assert w.current == "page-002.png"
    QTest.keyClick(w, Qt.Key.Key_PageUp)
    assert w.current == "page-001.png"
    QTest.keyClick(w, Qt.Key.Key_Tab)
    assert w.panel.current_id == "b0" and w.view.selected_ids() == ["b0"]
    QTest.keyClick(w, Qt.Key.Key_Tab)
    assert w.panel.current_id == "b1"
    QTest.keyClick(w, Qt.Key.Key_B)
    assert w.view.mode is Mode.DRAW
    QTest.keyClick(w, Qt.Key.Key_Escape)
    assert w.view.mode is Mode.SELECT
    QTest.keyClick(w, Qt.Key.Key_T)
    assert w.settings.overlay == "boxes"
    QTest.keyClick(w, Qt.Key.Key_Delete)
    assert [b.id for b in w.doc.page(w.current).blocks] == ["b0", "b2"]
    QTest.keyClick(w, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert len(w.doc.page(w.current).blocks) == 3
    zoom = w.view.zoom()
    QTest.keyClick(w, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    assert w.view.zoom() > zoom


def test_drop_a_folder_opens_it(make_window, pages):
    w = make_window()
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(pages))])
    event = QDropEvent(QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    w.dropEvent(event)
    assert w.doc.source == str(pages) and w.page_list.count() == 3
    assert w.settings.recent_sources[0] == str(pages)
    assert w.recent_menu.actions()[0].text() == str(pages)


def test_moved_block_is_reread_from_the_page(make_window, pages, qtbot):
    w = make_window()
    w.session.open_path(pages)
    qtbot.waitUntil(w.view.has_image, timeout=10000)
    w.edit(lambda p: replace(p, blocks=(Block(id="b0", order=1, kind="bubble", box=(30, 40, 210, 260),
                                              ocr_text="old"),)), "read")
    w._on_block_moved("b0", (40, 50, 220, 270))
    assert w.notice.kind == "reread"
    (button,) = w.notice.buttons()
    button.click()
    assert [live.context["kind"] for live in w.host.live.values()] == ["blocks"]  # the live re-read
    qtbot.waitUntil(lambda: w.doc.page(w.current).block("b0").ocr_text != "old", timeout=60000)
    fresh = w.doc.page(w.current).block("b0")
    assert fresh.model and fresh.box == (40, 50, 220, 270)
    # a result for a box that changed while it was being read is stale and dropped
    with qtbot.waitSignal(w.host.request_finished, timeout=60000):
        w.reread(["b0"])
        w.edit(lambda p: edits.set_box(p, "b0", (0, 0, 100, 100)), "move")
    moved = w.doc.page(w.current).block("b0")
    assert moved.box == (0, 0, 100, 100) and moved.ocr_text == fresh.ocr_text
