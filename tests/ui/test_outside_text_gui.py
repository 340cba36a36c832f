"""Text outside bubbles in the window: the kind shows in the block list, the project's policy is
chosen from View > Text outside bubbles (undoable, saved), and the translated view letters as the
export does."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from app.core.document.types import Block
from app.ui.render.view import wait_rendered
from tests.outside_pages import BUBBLE, CAPTION, SFX, outside_page
from tests.ui.test_render_gui import shown


@pytest.fixture
def window(make_window, tmp_path, qtbot):
    folder = tmp_path / "vol"
    folder.mkdir()
    outside_page().save(folder / "001.png")
    w = make_window()
    w.session.open_path(folder)
    blocks = (Block("b1", 1, "bubble", BUBBLE, ocr_text="セリフ", translation="Hello!"),
              Block("b2", 2, "caption", CAPTION, ocr_text="その頃", translation="Meanwhile"),
              Block("b3", 3, "sfx", SFX, ocr_text="ドン", translation="Boom"))
    w.edit(lambda p: replace(p, blocks=blocks, processed=True), "read", page="001.png")
    qtbot.waitUntil(lambda: w.view.has_image(), timeout=10000)
    return w


def _box(rgb, box):
    x0, y0, x1, y1 = box
    return rgb[y0:y1, x0:x1]


def test_kinds_show_in_the_block_list(window):
    rows = [window.panel.list.item(i).text() for i in range(window.panel.list.count())]
    assert "[SFX] ドン" in rows[2] and "[caption] その頃" in rows[1] and "[" not in rows[0]
    assert window.panel.list.item(2).toolTip().startswith("sound effect")


def test_the_policy_from_the_view_menu_is_undoable_and_the_preview_is_the_export(window, tmp_path, qtbot):
    from PIL import Image

    from app.core.exports.translated_pages import export_translated
    from app.core.project.files import load_project
    from app.core.project.paths import project_path_for
    from app.render.inpaint import OpenCVInpainter

    w, ctl = window, window.render_ctl
    original = shown(w)
    ctl.set_mode("translated")
    wait_rendered(ctl)
    in_place = shown(w)
    assert not np.array_equal(_box(in_place, SFX), _box(original, SFX)), "translated in place by default"
    assert ctl.outside_actions[("sfx", "translate")].isChecked()
    ctl.outside_actions[("sfx", "keep")].trigger()
    wait_rendered(ctl)
    kept = shown(w)
    assert w.doc.project.outside["sfx"] == "keep" and w.is_dirty()
    assert np.array_equal(_box(kept, SFX), _box(original, SFX)), "the sound effect is left as it is"
    assert not np.array_equal(_box(kept, CAPTION), _box(original, CAPTION)), "captions are still translated"
    export_translated(w.doc.project, "png", tmp_path / "out", OpenCVInpainter())
    exported = np.asarray(Image.open(tmp_path / "out" / "001.png").convert("RGB"))
    assert np.array_equal(kept, exported), "the GUI shows exactly the exported pixels"
    ctl.outside_actions[("caption", "beside")].trigger()
    wait_rendered(ctl)
    beside = shown(w)
    assert np.array_equal(_box(beside, CAPTION), _box(original, CAPTION)), "the caption itself is kept"
    below = (CAPTION[0] - 40, CAPTION[3], CAPTION[2] + 40, CAPTION[3] + 60)
    assert not np.array_equal(_box(beside, below), _box(original, below)), "its translation is lettered below it"
    assert w.session.save()
    assert load_project(project_path_for(w.doc.source)).outside == {"caption": "beside", "sfx": "keep"}
    w.undo_stack.undo()
    w.undo_stack.undo()
    wait_rendered(ctl)
    assert w.doc.project.outside == {"caption": "translate", "sfx": "translate"}
    assert np.array_equal(shown(w), in_place)
    assert ctl.outside_actions[("sfx", "translate")].isChecked()


def test_a_blocks_kind_is_changed_by_hand_undoably_and_the_policy_follows(window, qtbot):
    w, ctl = window, window.render_ctl
    original = shown(w)
    ctl.outside_actions[("sfx", "keep")].trigger()  # sound effects are left as they are
    ctl.set_mode("translated")
    wait_rendered(ctl)
    assert np.array_equal(_box(shown(w), SFX), _box(original, SFX))
    w.view.select_block("b3")
    assert w.selected_ids() == ["b3"]
    w.act.kind_bubble.trigger()  # Edit > Block kind > bubble (Ctrl+Alt+B): lettered in place now
    assert w.doc.page("001.png").blocks[2].kind == "bubble"
    assert "[" not in w.panel.list.item(2).text()
    wait_rendered(ctl)
    assert not np.array_equal(_box(shown(w), SFX), _box(original, SFX))
    assert w.undo_stack.undoText().endswith("as bubble")
    w.undo_stack.undo()
    wait_rendered(ctl)
    assert w.doc.page("001.png").blocks[2].kind == "sfx" and "[SFX]" in w.panel.list.item(2).text()
    assert np.array_equal(_box(shown(w), SFX), _box(original, SFX))
    w.view.select_block("b1")
    w.view.kind_requested.emit("caption")  # the page's context menu > Kind > Caption
    assert [b.kind for b in w.doc.page("001.png").blocks] == ["caption", "caption", "sfx"]
    assert w.doc.page("001.png").blocks[0].translation == "Hello!"  # text and translation stay
