"""The "check the order" mark of a page (Page.order_check): set when the pipeline reads a page
whose order the layout rules guessed, kept in the project file, cleared by renumbering by hand."""
from __future__ import annotations

import json
from pathlib import Path

from PIL import Image, ImageDraw

from app.core.document import edits
from app.core.document.types import Block, Page, Project
from app.core.project.codec import SCHEMA_MINOR, SCHEMA_VERSION
from app.core.project.files import load_project, save_project
from app.core.reading.pipeline import Pipeline, PipelineSettings, read_blocks
from app.core.sources.source import open_source
from app.detect import Detection, load_detector
from app.detect.blocks import gray_page
from app.detect.confidence import DOUBT_WORDS

ROOT = Path(__file__).resolve().parents[1]
DEMO_DETECTOR = ROOT / "app" / "resources" / "demo" / "hayai-demo-detector.pt"


def _page(bubbles):
    """2 x 2 framed panels; a bubble with a column of glyphs at each of `bubbles` (text boxes)."""
    page = Image.new("L", (600, 800), 255)
    draw = ImageDraw.Draw(page)
    for p in [(310, 14, 586, 393), (14, 14, 290, 393), (310, 407, 586, 786), (14, 407, 290, 786)]:
        draw.rectangle(p, outline=0, width=3)
    for x0, y0, x1, y1 in bubbles:
        draw.ellipse((x0 - 20, y0 - 25, x1 + 20, y1 + 25), fill=255, outline=0, width=3)
        for y in range(y0 + 2, y1 - 10, 16):
            draw.rectangle((x0 + 3, y, x1 - 3, y + 10), fill=0)
    return page, [Detection(b, "text", 0.9) for b in bubbles]


def test_read_blocks_marks_a_page_whose_order_is_a_guess():
    # in the top right panel a bubble low on the right, one high on its left: columns or rows?
    page, dets = _page([(510, 230, 550, 370), (340, 40, 380, 180), (130, 100, 180, 260)])
    blocks, check = read_blocks(dets, page.size, "rtl", page=gray_page(page))
    assert len(blocks) == 3 and check == DOUBT_WORDS["rows_or_columns"]
    # one bubble a panel: no mark
    page, dets = _page([(420, 100, 470, 260), (130, 100, 180, 260), (420, 500, 470, 660)])
    blocks, check = read_blocks(dets, page.size, "rtl", page=gray_page(page))
    assert len(blocks) == 3 and check is None


def test_the_pipeline_gives_each_page_its_mark(tmp_path, tiny_models):
    from app.ocr import load_recognizer
    from tools.synth import write_pages

    write_pages(tmp_path / "vol", 3, seed=5150)  # classic pages: bubbles scattered in their panels
    detector = load_detector(str(DEMO_DETECTOR), device="cpu")
    recognizer = load_recognizer(tiny_models["nova"], device="cpu")
    settings = PipelineSettings(patches=64, max_new_tokens=4, batch_size=8)
    with open_source(tmp_path / "vol") as source:
        names = [n for n in source.page_names if n.endswith(".png")]
        pages = list(Pipeline(detector, recognizer, settings).process(source, names))
        for page in pages:
            image = source.load(page.name)
            (dets,) = detector.detect([image], imgsz=settings.imgsz, conf=settings.conf, iou=settings.iou)
            want = read_blocks(dets, image.size, settings.order, page=gray_page(image), widen_text=False)[1]
            assert page.order_check == want, page.name
    assert any(p.order_check for p in pages)


def _project(tmp_path) -> Project:
    (tmp_path / "vol").mkdir(exist_ok=True)
    blocks = (Block(id="b1", order=1, kind="bubble", box=(0, 0, 10, 10)), Block(id="b2", order=2, kind="bubble",
                                                                               box=(20, 0, 30, 10)))
    return Project(source=str(tmp_path / "vol"), pages=[
        Page("001.png", 100, 100, blocks, processed=True, order_check=DOUBT_WORDS["rows_or_columns"]),
        Page("002.png", 100, 100, blocks, processed=True)])


def test_the_mark_is_kept_in_the_project_file(tmp_path):
    project = _project(tmp_path)
    path = save_project(project, tmp_path / "p.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["pages"][0]["order_check"] == DOUBT_WORDS["rows_or_columns"]
    assert "order_check" not in data["pages"][1] and (data["version"], data["minor"]) == (SCHEMA_VERSION, SCHEMA_MINOR)
    again = load_project(path)
    assert [p.order_check for p in again.pages] == [DOUBT_WORDS["rows_or_columns"], None]
    assert again == project


def test_renumbering_by_hand_clears_the_mark_and_the_hand_order_stays(tmp_path):
    page = _project(tmp_path).pages[0]
    assert edits.set_text(page, "b1", "x").order_check  # other edits keep it
    moved = edits.move_block(page, "b2", 0)
    assert [b.id for b in moved.blocks] == ["b2", "b1"] and moved.order_by_hand and moved.order_check is None
    assert edits.reorder(page, ["b1", "b2"]).order_check is None
    # read again, the rules still unsure: the hand order stays, unmarked
    read = Page(page.name, 100, 100, page.blocks, processed=True, order_check="the panels were not found for sure")
    kept = edits.read_again(moved, read)
    assert [b.id for b in kept.blocks] == ["b2", "b1"] and kept.order_check is None
    # a page never renumbered takes the new reading's mark
    assert edits.read_again(page, read).order_check == "the panels were not found for sure"
