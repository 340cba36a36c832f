"""Translated pages in the window: the three views, the preview equals the export, typing
re-letters at once, styles and mask strokes are undoable, File > Export > Translated pages."""
from __future__ import annotations

import json
import zipfile
from dataclasses import replace

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from app.core.document import Block
from app.ui.render.view import wait_rendered
from app.ui.shell import session


def qimage_rgb(image) -> np.ndarray:
    from PySide6.QtGui import QImage

    image = image.convertToFormat(QImage.Format.Format_RGB888)
    h, w = image.height(), image.width()
    data = np.frombuffer(image.constBits(), np.uint8, image.sizeInBytes()).reshape(h, image.bytesPerLine())
    return data[:, :3 * w].reshape(h, w, 3).copy()


def shown(w) -> np.ndarray:
    return qimage_rgb(w.view._pixmap_item.pixmap().toImage())


@pytest.fixture
def translated(make_window, pages, qtbot):
    """A window on three synthetic pages whose first page has its true blocks, the odd ones
    translated."""
    w = make_window()
    session.open_path(w, pages)
    truth = json.loads((pages / "page-001.json").read_text(encoding="utf-8"))
    blocks = tuple(Block(id=b["id"], order=b["order"], kind=b["kind"], box=tuple(map(float, b["box"])),
                         ocr_text=b["text"], translation="Wait for me, please!" if b["order"] % 2 else "")
                   for b in truth["blocks"])
    w.edit(lambda p: replace(p, blocks=blocks, processed=True), "read", page="page-001.png")
    qtbot.waitUntil(lambda: w.view.has_image(), timeout=10000)
    return w


def test_views_show_original_cleaned_translated_and_the_preview_is_the_export(translated, tmp_path, qtbot):
    from app.core.rendering import export_translated
    from app.render.inpaint import OpenCVInpainter

    w = translated
    original = shown(w)
    w.render_ctl.set_mode("cleaned")
    wait_rendered(w.render_ctl)
    cleaned = shown(w)
    assert (cleaned != original).any() and w.view.overlay != "text"
    w.act.view_mode.trigger()  # V: cleaned -> translated
    assert w.render_ctl.mode == "translated"
    wait_rendered(w.render_ctl)
    preview = shown(w)
    assert (preview != cleaned).any() and (preview != original).any()
    export_translated(w.doc.project, "png", tmp_path / "out", OpenCVInpainter(), pages=["page-001.png"])
    from PIL import Image

    exported = np.asarray(Image.open(tmp_path / "out" / "page-001.png").convert("RGB"))
    assert np.array_equal(preview, exported), "the GUI shows exactly the exported pixels"
    w.render_ctl.set_mode("original")
    assert np.array_equal(shown(w), original) and w.view.overlay == w.settings.overlay


def test_typing_a_translation_reletters_the_block_at_once_and_undo_brings_it_back(translated, qtbot):
    w = translated
    w.render_ctl.set_mode("translated")
    wait_rendered(w.render_ctl)
    before = shown(w)
    page = w.doc.page(w.current)
    target = next(b for b in page.blocks if not b.translation and b.kind == "bubble")
    w.view.select_block(target.id)
    w.view._on_selection_changed()
    times = []
    w.render_ctl.rendered.connect(lambda _n, _m, s: times.append(s))
    w.panel.translation_edit.setPlainText("Go!")
    assert times, "re-rendered on the keystroke, before the edit is committed"
    assert w.doc.page(w.current).block(target.id).translation == ""
    typed = shown(w)
    x0, y0, x1, y1 = (int(v) for v in target.box)
    changed = (typed != before).any(axis=2)
    assert changed[y0:y1, x0:x1].any() and not changed[:y0].any() and not changed[y1 + 1:].any()
    w.panel.flush()
    assert w.doc.page(w.current).block(target.id).translation == "Go!"
    assert np.array_equal(shown(w), typed)
    w.undo_stack.undo()
    assert np.array_equal(shown(w), before)


def test_block_style_and_project_style_are_undoable(translated, qtbot):
    w = translated
    w.render_ctl.set_mode("translated")
    wait_rendered(w.render_ctl)
    page = w.doc.page(w.current)
    target = max((b for b in page.blocks if b.translation), key=lambda b: (b.box[2] - b.box[0]) * (b.box[3] - b.box[1]))
    w.view.select_block(target.id)
    w.view._on_selection_changed()
    before = shown(w)
    w.style_panel.changed.emit("color", "#ff0000")
    assert w.doc.page(w.current).block(target.id).style.color == "#ff0000"
    red = shown(w)
    x0, y0, x1, y1 = (int(v) for v in target.box)
    crop = red[y0:y1, x0:x1].astype(int)
    assert ((crop[..., 0] > 200) & (crop[..., 1] < 60)).sum() > 20
    assert "px" in w.style_panel.fit.text()
    w.undo_stack.undo()
    assert w.doc.page(w.current).block(target.id).style is None and np.array_equal(shown(w), before)
    # no selection: the project's default
    w.view.scene().clearSelection()
    w.panel.list.clearSelection()
    w.panel.current_id = ""
    w.style_panel.changed.emit("uppercase", True)
    assert w.doc.project.style.uppercase and w.is_dirty()
    assert (shown(w) != before).any()
    w.undo_stack.undo()
    assert not w.doc.project.style.uppercase and np.array_equal(shown(w), before)


def test_mask_brush_strokes_change_the_cleaning_and_undo(translated, qtbot):
    w = translated
    w.style_panel.brush.setChecked(True)  # switches to the cleaned view
    assert w.mask_tool.active and w.render_ctl.mode == "cleaned"
    wait_rendered(w.render_ctl)
    qtbot.waitUntil(lambda: w.mask_tool._overlay.isVisible(), timeout=5000)
    before = shown(w)
    page = w.doc.page(w.current)
    target = max(page.blocks, key=lambda b: (b.box[2] - b.box[0]) * (b.box[3] - b.box[1]))
    x0, y0, x1, y1 = target.box
    cx, cy = x0 + 12, (y0 + y1) / 2  # across the bubble's outline: not plain paper
    w.view.actual_size()
    w.view.centerOn(cx, cy)
    qapp_vp = w.view.viewport()
    start = w.view.mapFromScene(cx - 10, cy)
    end = w.view.mapFromScene(cx + 10, cy)
    QTest.mousePress(qapp_vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    QTest.mouseMove(qapp_vp, QPoint(end.x(), end.y()))
    QTest.mouseRelease(qapp_vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)
    edited = w.doc.page(w.current).block(target.id)
    assert len(edited.mask_edits) == 1 and not edited.mask_edits[0].erase
    assert abs(edited.mask_edits[0].points[0][0] - (cx - 10)) < 3
    wait_rendered(w.render_ctl)
    after = shown(w)
    assert (after != before).any(), "the painted pixels were cleaned"
    w.undo_stack.undo()
    wait_rendered(w.render_ctl)
    assert np.array_equal(shown(w), before)
    w.style_panel.brush.setChecked(False)
    assert not w.mask_tool.active


def test_export_menu_writes_cbz_and_psd(translated, tmp_path, qtbot):
    w = translated
    exporter = w.page_exporter
    assert [a.text() for a in exporter.menu.actions()] == ["As images (PNG, JPEG, WebP)…", "As CBZ…", "As PDF…",
                                                            "As layered PSD…"]
    with qtbot.waitSignal(exporter.finished, timeout=60000) as sig:
        exporter.start("cbz", str(tmp_path / "v.cbz"))
    assert sig.args == ["done"]
    with zipfile.ZipFile(tmp_path / "v.cbz") as z:
        assert z.namelist() == ["page-001.png", "page-002.png", "page-003.png", "ComicInfo.xml"]
    with qtbot.waitSignal(exporter.finished, timeout=60000):
        exporter.start("psd", str(tmp_path / "psd"))
    from psd_tools import PSDImage

    psd = PSDImage.open(tmp_path / "psd" / "page-001.psd")
    lettered = [f"block {b.order}" for b in w.doc.page("page-001.png").blocks if b.translation]
    assert [layer.name for layer in psd] == ["original", "cleaned", "inpainting patches", *reversed(lettered)]
    assert "Exported 3 file(s)" in w.status_label.text()
