"""Edits through the window: undo/redo across page changes, export/import, save, autosave and
crash recovery, closing mid-run."""
import json
from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.core.document import edits
from app.core.document.types import Block


def add_blocks(w, page_name, n=3):
    """Put n blocks on a page through the undo stack (as if read)."""
    blocks = [Block(id=f"b{i}", order=i + 1, kind="bubble", box=(20 + 100 * i, 30, 90 + 100 * i, 200),
                    vertical=True, ocr_text=f"テキスト{i}") for i in range(n)]
    w.edit(lambda p: replace(p, blocks=tuple(blocks), processed=True), "read", page=page_name)


def test_edit_undo_redo_across_page_change(make_window, pages, qtbot):
    w = make_window()
    w.session.open_path(pages)
    add_blocks(w, "page-001.png")
    w.view.select_block("b1")
    w.view._on_selection_changed()
    assert w.panel.current_id == "b1"
    # type in the panel: one merged undo step, committed when leaving the page
    w.panel.text_edit.setFocus()
    w.panel.text_edit.moveCursor(w.panel.text_edit.textCursor().MoveOperation.End)
    QTest.keyClicks(w.panel.text_edit, "ok")  # real key events (QTest cannot type kana)
    w.panel.text_edit.insertPlainText("直した")
    w.slots.action_next_page()
    assert w.current == "page-002.png"
    edited = w.doc.page("page-001.png").block("b1")
    assert edited.text == "テキスト1ok直した" and edited.ocr_text == "テキスト1"
    # in-place edit on the canvas of another block, then a delete and a merge
    w.show_page("page-001.png")
    w.view.start_inline_edit("b0")
    ed = w.view.inline_editor()
    ed.setPlainText("キャンバス")
    QTest.keyClick(w.view.viewport(), Qt.Key.Key_Return)  # focus may be elsewhere offscreen
    ed.finish(True)
    assert w.doc.page("page-001.png").block("b0").text == "キャンバス"
    w.show_page("page-003.png")
    # undo from another page goes back to page 1 and reverts the canvas edit, then the typing
    w.undo_stack.undo()
    assert w.current == "page-001.png"
    assert w.doc.page("page-001.png").block("b0").text is None
    w.undo_stack.undo()
    assert w.doc.page("page-001.png").block("b1").text is None
    w.show_page("page-002.png")
    w.undo_stack.redo()
    assert w.current == "page-001.png"
    assert w.doc.page("page-001.png").block("b1").text == "テキスト1ok直した"
    assert w.panel.page.block("b1").text == "テキスト1ok直した"


def test_delete_merge_reorder_move_are_undoable(make_window, pages, qtbot):
    w = make_window()
    w.session.open_path(pages)
    add_blocks(w, "page-001.png", 4)
    w.view.select_block("b3")
    w.slots.action_delete()
    assert [b.id for b in w.doc.page(w.current).blocks] == ["b0", "b1", "b2"]
    w.view.select_block("b0")
    w.view.block_item("b1").setSelected(True)
    w.slots.action_merge()
    page = w.doc.page(w.current)
    assert [b.id for b in page.blocks] == ["b0", "b2"]
    assert page.blocks[0].ocr_text == "テキスト0テキスト1"
    assert page.blocks[0].box == (20, 30, 190, 200)
    w._reorder(["b2", "b0"])
    assert [(b.id, b.order) for b in w.doc.page(w.current).blocks] == [("b2", 1), ("b0", 2)]
    assert w.panel.list.ids() == ["b2", "b0"]
    # move a block with the mouse: a command, and an offer to re-read it
    item = w.view.block_item("b2")
    w.view.select_block("b2")
    vp = w.view.viewport()
    c = w.view.mapFromScene(item.sceneBoundingRect().center())
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, c)
    QTest.mouseMove(vp, c + c.__class__(10, 10))
    QTest.mouseMove(vp, c + c.__class__(40, 40))
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, c + c.__class__(40, 40))
    moved = w.doc.page(w.current).block("b2").box
    assert moved != (220, 30, 290, 200) and moved[0] > 220
    assert w.notice.isVisible() and w.notice.kind == "reread"
    for _ in range(4):
        w.undo_stack.undo()
    assert [b.id for b in w.doc.page(w.current).blocks] == ["b0", "b1", "b2", "b3"]


def test_export_and_txt_reimport(make_window, pages, tmp_path):
    w = make_window()
    w.session.open_path(pages)
    add_blocks(w, "page-001.png", 2)
    add_blocks(w, "page-002.png", 1)
    w.edit(lambda p: edits.set_text(p, "b0", "直した"), "edit", page="page-001.png")
    out = w.session.export_to(tmp_path / "vol.json", "json", "volume")
    data = json.loads(out.read_text(encoding="utf-8"))
    texts = [b["text"] for p in data["pages"] for b in p["blocks"]]
    assert texts == ["直した", "テキスト1", "テキスト0"]
    page_txt = w.session.export_to(tmp_path / "page.txt", "txt", "page")
    text = page_txt.read_text(encoding="utf-8")
    assert "直した" in text and "テキスト1" in text
    assert "page-002" not in text
    # translate in an editor and bring it back
    vol_txt = w.session.export_to(tmp_path / "vol.txt", "txt", "volume", translations=True)
    edited = vol_txt.read_text(encoding="utf-8").replace(">\n", "> I fixed it\n", 1)
    vol_txt.write_text(edited, encoding="utf-8")
    changed, warnings = w.session.import_from(vol_txt, "translation")
    assert changed == 1 and not warnings
    assert w.doc.page("page-001.png").block("b0").translation == "I fixed it"
    w.undo_stack.undo()
    assert w.doc.page("page-001.png").block("b0").translation == ""


def test_crash_recovery_round_trip(make_window, pages, qtbot):
    from app.core.project.files import recoverable_autosave

    w = make_window()
    w.session.open_path(pages)
    add_blocks(w, "page-001.png", 2)
    w.edit(lambda p: edits.set_text(p, "b1", "クラッシュ前"), "edit")
    qtbot.waitUntil(lambda: recoverable_autosave(pages) is not None, timeout=5000)
    # a crash: the window goes away without the close questions (threads stopped by the fixture)
    w.shutdown()
    w2 = make_window(recent_sources=(str(pages),))
    w2.questions.answers["restore_autosave"] = True
    assert w2.session.reopen_after_crash()  # the next start reopens the source that crashed
    assert w2.doc.page("page-001.png").block("b1").text == "クラッシュ前"
    assert w2.is_dirty()
    assert w2.session.save()
    assert recoverable_autosave(pages) is None and not w2.is_dirty()


def test_close_mid_run_keeps_edits_and_stops(make_window, tmp_path, qtbot):
    from app.core.project.files import load_project
    from app.core.project.paths import project_path_for
    from tests.ui.conftest import write_pages

    folder = write_pages(tmp_path / "vol", 12)
    w = make_window()
    w.pipeline_overrides.update(max_new_tokens=64, chunk_pages=1)
    w.configure_worker()
    w.session.open_path(folder)
    add_blocks(w, "page-012.png", 1)
    w.edit(lambda p: edits.set_text(p, "b0", "保存して"), "edit", page="page-012.png")
    w.slots.action_run_all()
    qtbot.waitUntil(lambda: w.host.busy(), timeout=5000)
    w.questions.answers["unsaved_changes"] = "save"
    assert w.close()
    assert not w.host.thread.isRunning()
    saved = load_project(project_path_for(folder))
    assert saved.pages[-1].block("b0").text == "保存して"
