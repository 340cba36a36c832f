"""Text outside bubbles on small pages drawn here: free text becomes a caption, drawn lettering
a sound effect (told from the page); the project's policy for each (translate in place, leave as
it is, a small translation beside it) is saved with the project and honoured by the renderer and
by the `render` command alike."""
from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image, ImageDraw

from app.cli import main
from app.core.document.types import Block, Page, Project
from app.core.exports.translated_pages import RenderOptions, render_blocks
from app.core.project.codec import SCHEMA_MINOR, SCHEMA_VERSION
from app.core.project.files import load_project, save_project
from app.detect import Detection, build_regions
from app.detect.blocks import gray_page
from app.errors import UserError
from app.render.inpaint import OpenCVInpainter
from app.render.page import NOTE_SCALE, PageRenderer
from app.render.style import TextStyle
from tests.outside_pages import BUBBLE, CAPTION, DIALOGUE, SFX, SIZE, glyphs
from tests.outside_pages import outside_page as _page


def _dets():
    return [Detection(DIALOGUE, "text", 0.9), Detection(CAPTION, "text", 0.85), Detection(SFX, "text", 0.8)]


def test_free_text_is_a_caption_and_drawn_lettering_a_sound_effect():
    page = _page()
    regions = build_regions(_dets(), page.size, "rtl", page=gray_page(page))
    kinds = {r.box: r.kind for r in regions}
    assert sorted(kinds.values()) == ["bubble", "caption", "sfx"]
    assert kinds[tuple(float(v) for v in CAPTION)] == "caption"
    assert kinds[tuple(float(v) for v in SFX)] == "sfx"
    # without the page nothing tells: free text
    assert {r.kind for r in build_regions(_dets(), page.size, "rtl")} == {"text"}
    # a page with no dialogue to compare with: the glyphs' size on the page decides
    alone = build_regions([Detection(CAPTION, "text", 0.85), Detection(SFX, "text", 0.8)], page.size, "rtl",
                          page=gray_page(page))
    assert {r.box: r.kind for r in alone} == {tuple(float(v) for v in CAPTION): "caption",
                                              tuple(float(v) for v in SFX): "sfx"}


def test_dots_are_no_sound_effect():
    """"……" is all stroke: its strokes are as thick as its glyphs are long, but it is small."""
    page = Image.new("L", SIZE, 255)
    draw = ImageDraw.Draw(page)
    draw.ellipse(BUBBLE, fill=255, outline=0, width=4)
    glyphs(draw, DIALOGUE)
    for y in (300, 316, 332):
        draw.ellipse((400, y, 406, y + 6), fill=0)
    regions = build_regions([Detection(DIALOGUE, "text", 0.9), Detection((396, 296, 410, 342), "text", 0.8)],
                            page.size, "rtl", page=gray_page(page))
    assert sorted(r.kind for r in regions) == ["bubble", "caption"]


def _project(tmp_path, outside=None) -> Project:
    folder = tmp_path / "vol"
    folder.mkdir(exist_ok=True)
    _page().save(folder / "001.png")
    blocks = (Block("b1", 1, "bubble", BUBBLE, translation="Hello!"),
              Block("b2", 2, "caption", CAPTION, translation="Meanwhile"),
              Block("b3", 3, "sfx", SFX, translation="Crash"))
    project = Project(source=str(folder), pages=[Page("001.png", *SIZE, blocks=blocks, processed=True)],
                      style=TextStyle(max_size=30))
    if outside:
        project.outside.update(outside)
    return project


def test_the_policy_is_saved_with_the_project_and_a_bad_one_is_named(tmp_path):
    project = _project(tmp_path, {"sfx": "beside", "caption": "keep"})
    path = save_project(project, tmp_path / "p.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["outside"] == {"caption": "keep", "sfx": "beside"} and (data["version"], data["minor"]) == (SCHEMA_VERSION, SCHEMA_MINOR)
    again = load_project(path)
    assert again.outside == project.outside and [b.kind for b in again.pages[0].blocks] == ["bubble", "caption", "sfx"]
    assert again.outside_policy("sfx") == "beside" and again.outside_policy("caption") == "keep"
    assert again.outside_policy("bubble") == again.outside_policy("text") == "translate"  # text: not told apart
    # a newer build's kind of text is kept and written back
    data["outside"]["signs"] = "keep"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert json.loads(save_project(load_project(path)).read_text(encoding="utf-8"))["outside"]["signs"] == "keep"
    data["outside"]["sfx"] = "shout"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(UserError, match=r"p\.json.*outside\.sfx.*translate, keep, beside"):
        load_project(path)


def _render(project: Project):
    image = Image.open(f"{project.source}/001.png").convert("RGB")
    renderer = PageRenderer(image, OpenCVInpainter())
    blocks = render_blocks(project.pages[0], project.style, RenderOptions(), project.sizes, project.outside)
    return renderer, blocks, renderer.render(blocks)


def _region(rgb, box):
    x0, y0, x1, y1 = (int(v) for v in box)
    return rgb[y0:y1, x0:x1]


def test_each_policy_is_honoured_by_the_renderer(tmp_path):
    translate = _render(_project(tmp_path))[2]
    assert {b.id for b, _ in translate.layers} == {"b1", "b2", "b3"}
    assert not np.array_equal(_region(translate.final, SFX), _region(translate.original, SFX))

    _, _, keep = _render(_project(tmp_path, {"sfx": "keep", "caption": "keep"}))
    assert {b.id for b, _ in keep.layers} == {"b1"}  # only the bubble is lettered
    for box in (SFX, CAPTION):
        assert np.array_equal(_region(keep.final, box), _region(keep.original, box)), "left as it is"

    renderer, blocks, beside = _render(_project(tmp_path, {"sfx": "beside"}))
    note = next(layer for b, layer in beside.layers if b.id == "b3")
    assert np.array_equal(_region(beside.final, SFX), _region(beside.original, SFX)), "the effect itself is kept"
    assert note.y0 + note.rgba.shape[0] <= SFX[1] and note.y0 >= 0, "no room below it: the note goes above it"
    assert note.layout.size <= NOTE_SCALE * 30
    sfx_block = next(b for b in blocks if b.id == "b3")
    assert sfx_block.clean is False and sfx_block.place == "beside"
    ys, xs = np.nonzero(note.rgba[..., 3])
    assert len(ys), "the note is lettered"
    caption = next(layer for b, layer in beside.layers if b.id == "b2")  # captions still in place
    assert caption.y0 >= CAPTION[1] - 1 and caption.y0 + caption.rgba.shape[0] <= CAPTION[3] + 1


def test_the_render_command_letters_as_the_project_says(tmp_path, monkeypatch):
    monkeypatch.setenv("HAYAI_MODELS_DIR", str(tmp_path / "models"))
    project = _project(tmp_path, {"sfx": "keep", "caption": "beside"})
    path = save_project(project, tmp_path / "vol.hayai.json")
    assert main(["render", str(path), "--format", "png", "--out", str(tmp_path / "out"), "--inpaint", "opencv"]) == 0
    # --sfx for one run: the effect is translated in place
    assert main(["render", str(path), "--out", str(tmp_path / "sfx"), "--inpaint", "opencv", "--sfx", "translate"]) == 0
    assert not np.array_equal(_region(np.asarray(Image.open(tmp_path / "sfx" / "001.png").convert("RGB")), SFX),
                              _region(np.asarray(_page()), SFX))
    assert load_project(path).outside["sfx"] == "keep", "the project file is not changed"
    exported = np.asarray(Image.open(tmp_path / "out" / "001.png").convert("RGB"))
    _, _, page = _render(project)
    assert np.array_equal(exported, page.final), "the command letters what the renderer (and the GUI) shows"
    assert np.array_equal(_region(exported, SFX), _region(page.original, SFX))


def test_the_cli_policies_are_the_documents():
    from app.commands.render import OUTSIDE_POLICIES as CLI
    from app.core.document.types import OUTSIDE_POLICIES

    assert CLI == OUTSIDE_POLICIES


def test_set_kind_by_hand_keeps_text_and_refuses_unknown_kinds():
    import pytest

    from app.core.document.edits import set_kind
    from app.core.document.types import Block, Page

    page = Page("001.png", 100, 100, (Block("a", 1, "caption", (0, 0, 10, 10), ocr_text="その頃", translation="Then"),))
    done = set_kind(page, ["a"], "sfx")
    assert done.blocks[0].kind == "sfx" and done.blocks[0].translation == "Then" and page.blocks[0].kind == "caption"
    with pytest.raises(ValueError, match="block kind 'manual'"):
        set_kind(page, ["a"], "manual")
