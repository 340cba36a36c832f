"""Translated pages in the window: the three views, the preview equals the export, typing
re-letters at once, styles and mask strokes are undoable, File > Export > Translated pages."""
from __future__ import annotations

import json
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from app.core.document.types import Block
from app.ui.render.view import wait_rendered


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
    w.session.open_path(pages)
    truth = json.loads((pages / "page-001.json").read_text(encoding="utf-8"))
    blocks = tuple(Block(id=b["id"], order=b["order"], kind=b["kind"], box=tuple(map(float, b["box"])),
                         ocr_text=b["text"], translation="Wait for me, please!" if b["order"] % 2 else "")
                   for b in truth["blocks"])
    w.edit(lambda p: replace(p, blocks=blocks, processed=True), "read", page="page-001.png")
    qtbot.waitUntil(lambda: w.view.has_image(), timeout=10000)
    return w


def test_views_show_original_cleaned_translated_and_the_preview_is_the_export(translated, tmp_path, qtbot):
    from app.core.exports.translated_pages import export_translated
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
    w.render_ctl.style_panel.changed.emit("color", "#ff0000")
    assert w.doc.page(w.current).block(target.id).style.color == "#ff0000"
    red = shown(w)
    x0, y0, x1, y1 = (int(v) for v in target.box)
    crop = red[y0:y1, x0:x1].astype(int)
    assert ((crop[..., 0] > 200) & (crop[..., 1] < 60)).sum() > 20
    assert "px" in w.render_ctl.style_panel.fit.text()
    w.undo_stack.undo()
    assert w.doc.page(w.current).block(target.id).style is None and np.array_equal(shown(w), before)
    # no selection: the project's default
    w.view.scene().clearSelection()
    w.panel.list.clearSelection()
    w.panel.current_id = ""
    w.render_ctl.style_panel.changed.emit("uppercase", True)
    assert w.doc.project.style.uppercase and w.is_dirty()
    assert (shown(w) != before).any()
    w.undo_stack.undo()
    assert not w.doc.project.style.uppercase and np.array_equal(shown(w), before)


def test_mask_brush_strokes_change_the_cleaning_and_undo(translated, qtbot):
    w = translated
    w.render_ctl.style_panel.brush.setChecked(True)  # switches to the cleaned view
    assert w.render_ctl.mask_tool.active and w.render_ctl.mode == "cleaned"
    wait_rendered(w.render_ctl)
    qtbot.waitUntil(lambda: w.render_ctl.mask_tool._overlay.isVisible(), timeout=5000)
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
    w.render_ctl.style_panel.brush.setChecked(False)
    assert not w.render_ctl.mask_tool.active


def test_export_menu_writes_cbz_and_psd(translated, tmp_path, qtbot):
    w = translated
    exporter = w.render_ctl.exporter
    assert [a.text() for a in exporter.menu.actions()] == ["As images (PNG, JPEG, WebP)…", "As CBZ…", "As PDF…",
                                                            "As layered PSD…"]
    with qtbot.waitSignal(exporter.finished, timeout=60000) as sig:
        exporter.start("cbz", str(tmp_path / "v.cbz"))
    assert sig.args == ["done"]
    with zipfile.ZipFile(tmp_path / "v.cbz") as z:
        assert z.namelist() == ["001.png", "002.png", "003.png", "ComicInfo.xml"]
    with qtbot.waitSignal(exporter.finished, timeout=60000):
        exporter.start("psd", str(tmp_path / "psd"))
    from psd_tools import PSDImage

    psd = PSDImage.open(tmp_path / "psd" / "page-001.psd")
    lettered = [f"block {b.order}" for b in w.doc.page("page-001.png").blocks if b.translation]
    assert [layer.name for layer in psd] == ["original", "cleaned", "inpainting patches", *reversed(lettered)]
    assert "Exported 3 file(s)" in w.status_label.text()


def _visible_progress(w):
    from PySide6.QtWidgets import QProgressDialog

    return [d for d in w.findChildren(QProgressDialog) if d.isVisible()]


@pytest.mark.parametrize("fmt", ["png", "jpg", "webp", "cbz", "pdf", "psd"])
def test_the_export_dialog_closes_when_the_export_ends(translated, tmp_path, qtbot, monkeypatch, fmt):
    w = translated
    exporter = w.render_ctl.exporter
    monkeypatch.setattr(exporter.export, "min_ms", 0)  # shown at once, as a long export would be
    out = tmp_path / (f"v.{fmt}" if fmt in ("cbz", "pdf") else "out")
    with qtbot.waitSignal(exporter.finished, timeout=120000) as sig:
        exporter.start(fmt, str(out))
        qtbot.waitUntil(lambda: bool(_visible_progress(w)) or exporter.dialog is None, timeout=10000)
    assert sig.args == ["done"] and out.exists()
    assert _visible_progress(w) == [], "the progress dialog is gone"
    assert "Exported" in w.status_label.text()


def test_the_export_dialog_closes_on_an_error_and_says_why(translated, tmp_path, qtbot, monkeypatch):
    """The second page cannot be written (a folder stands in its place): after the first page's
    progress the dialog is up; the failure closes it and the notice says why."""
    w = translated
    exporter = w.render_ctl.exporter
    monkeypatch.setattr(exporter.export, "min_ms", 0)  # (the window read MIN_DURATION_MS when it was made)
    out = tmp_path / "out"
    (out / "page-002.png").mkdir(parents=True)
    from PySide6.QtCore import QEvent, QObject

    class Shown(QObject):  # the dialog's own Show event: a look after the first page's progress
        def __init__(self):  # can come too late, the failure handled inside the modal setValue()
            super().__init__()
            self.seen: list = []

        def eventFilter(self, obj, event):  # noqa: N802 - Qt override
            if event.type() == QEvent.Type.Show:
                self.seen.append(progressed[:])
            return False

    progressed: list = []
    exporter.signals.progressed.connect(lambda done, *_: progressed.append(done))
    shown = Shown()
    with qtbot.waitSignal(exporter.finished, timeout=60000) as sig:
        exporter.start("png", str(out))
        exporter.dialog.installEventFilter(shown)
    assert sig.args == ["failed"] and progressed == [1] and shown.seen, "the dialog was up during the export"
    assert _visible_progress(w) == [], "and is gone after the failure"
    text = w.notice.label.text().replace("\u200b", "")  # the notice lets long paths wrap
    assert w.notice.kind == "error" and "Export failed" in text and "page-002.png: cannot write the export" in text


def test_translated_page_exports_start_where_the_last_export_went(translated, tmp_path, qtbot, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    w = translated
    exporter = w.render_ctl.exporter
    asked = []
    folder = tmp_path / "exports"
    folder.mkdir()

    def pick_folder(_parent, _title, start):
        asked.append(Path(start))
        return str(folder / "psd")

    def pick_file(_parent, _title, start, _filter):
        asked.append(Path(start).parent)
        return str(folder / "v.cbz"), ""

    monkeypatch.setattr(QFileDialog, "getExistingDirectory", pick_folder)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", pick_file)
    with qtbot.waitSignal(exporter.finished, timeout=60000):
        exporter.choose("psd")
    assert asked[0] == Path(w.doc.source).parent  # the first export: beside the volume
    with qtbot.waitSignal(exporter.finished, timeout=60000):
        exporter.choose("cbz")
    assert asked[1] == folder / "psd"  # then where the last export went
    with qtbot.waitSignal(exporter.finished, timeout=60000):
        exporter.choose("psd")
    assert asked[2] == folder  # the CBZ's folder
    assert w.settings.export_dir == str(folder / "psd")


def _sizes(w):
    return [layer.layout.size for _b, layer in w.render_ctl.result.layers if layer.layout.fits]


def test_page_and_project_lettering_sizes_from_the_view_menu_are_undoable(translated, qtbot):
    from collections import Counter

    w = translated
    ctl = w.render_ctl
    w.edit(lambda p: replace(p, blocks=tuple(replace(b, translation="Wait for me, please!") for b in p.blocks)),
           "translate")
    w.render_ctl.style_panel.changed.emit("min_size", 6)
    ctl.set_mode("translated")
    wait_rendered(ctl)
    w.undo_stack.setClean()
    each = _sizes(w)
    assert len(set(each)) >= 3, each  # the bubbles differ, so do their largest sizes
    ctl.project_size_actions["one"].trigger()
    wait_rendered(ctl)
    one = _sizes(w)
    assert w.doc.project.sizes == "one" and w.is_dirty()
    assert Counter(one).most_common(1)[0][1] >= 2 / 3 * len(one) and all(a <= b for a, b in zip(one, each))
    ctl.page_size_actions["each"].trigger()  # the page's own choice wins over the project's
    wait_rendered(ctl)
    assert w.doc.page(w.current).sizes == "each" and _sizes(w) == each
    w.undo_stack.undo()
    wait_rendered(ctl)
    assert w.doc.page(w.current).sizes is None and _sizes(w) == one
    w.undo_stack.undo()
    wait_rendered(ctl)
    assert w.doc.project.sizes == "each" and _sizes(w) == each


@pytest.mark.parametrize("what", ["style", "sizes", "outside"])
def test_a_project_value_command_does_nothing_to_another_project(translated, what):
    """The lettering style, sizes and outside-text policy: undone on the project they were made
    on, then another project is the document's: their redo leaves it as it is."""
    from app.core.document.types import Project

    w, ctl = translated, translated.render_ctl
    change, value = {
        "style": (lambda: ctl.push_project_style(replace(w.doc.project.style, uppercase=True)), lambda p: p.style),
        "sizes": (lambda: ctl.push_project_sizes("one"), lambda p: p.sizes),
        "outside": (lambda: ctl.push_project_outside("sfx", "keep"), lambda p: dict(p.outside)),
    }[what]
    first = w.doc.project
    unchanged = value(first)
    change()
    assert value(first) != unchanged and w.undo_stack.canUndo()
    w.undo_stack.undo()
    assert value(first) == unchanged
    other = Project(source=first.source, pages=list(first.pages))
    w.doc.set_project(other)  # the history still holds the command made on the first project
    w.undo_stack.redo()
    assert value(other) == unchanged and value(first) == unchanged


def test_blocks_below_their_minimum_are_named_and_selectable(translated, qtbot):
    w = translated
    ctl = w.render_ctl
    ctl.set_mode("translated")
    wait_rendered(ctl)
    w.render_ctl.style_panel.changed.emit("min_size", 60)  # the project's minimum: more than most bubbles hold
    wait_rendered(ctl)
    small = [b for b in ctl.result.below_min()]
    assert small
    numbers = ", ".join(str(b.order) for b in small)
    assert f"{numbers} set below the minimum size" in w.status_label.text()
    ctl.select_small.trigger()
    assert sorted(w.view.selected_ids()) == sorted(b.id for b in small)
