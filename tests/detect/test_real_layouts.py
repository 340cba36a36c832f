"""Layouts of real published pages, on small pages drawn here: black gutters, slanted and
overlapping panels, bubbles straddling a gutter, text boxes widened to their bubble, the
confidence that falls back to the page-wide order, and a hand-fixed order kept on reading again."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from app.core.document.edits import move_block, read_again
from app.core.document.types import Block, Page
from app.detect import Detection, build_regions, reading_order
from app.detect.blocks import gray_page
from app.detect.bubbles import bubble_around
from app.detect.panels import find_panels, order_panels, panel_layout


def _art(draw: ImageDraw.ImageDraw, box, seed: int) -> None:
    """Some strokes inside a panel (artwork), clear of its middle where text goes."""
    rng = np.random.default_rng(seed)
    x0, y0, x1, y1 = box
    for _ in range(12):
        ax, ay = rng.uniform(x0 + 8, x1 - 8), rng.uniform(y0 + 8, y1 - 8)
        draw.line((ax, ay, ax + rng.uniform(-30, 30), ay + rng.uniform(-30, 30)), fill=40, width=3)


def _glyphs(draw: ImageDraw.ImageDraw, box) -> None:
    """Dark glyph-like marks filling `box`, in two columns."""
    x0, y0, x1, y1 = box
    cw = (x1 - x0) / 2
    for c in range(2):
        for y in range(int(y0), int(y1) - 10, 16):
            draw.rectangle((x0 + c * cw + 3, y + 2, x0 + c * cw + cw - 3, y + 12), fill=0)


def _grid_page(background: int, gutter: int = 14, size=(600, 800)):
    """2 tiers x 2 panels on a page of colour `background` (0: black gutters, 255: white)."""
    w, h = size
    page = Image.new("L", size, background)
    draw = ImageDraw.Draw(page)
    m = gutter
    xs = [(m, w // 2 - m // 2), (w // 2 + m // 2, w - m)]
    ys = [(m, h // 2 - m // 2), (h // 2 + m // 2, h - m)]
    panels = []
    for r, (y0, y1) in enumerate(ys):
        for c, (x0, x1) in enumerate(xs):
            draw.rectangle((x0, y0, x1, y1), fill=255, outline=0, width=3)
            _art(draw, (x0, y0, x1, y1), 10 * r + c)
            panels.append((x0, y0, x1, y1))
    return page, draw, panels


def _text_high_on_the_left(draw: ImageDraw.ImageDraw, panels) -> list:
    """A small text box high up on the left of each panel (drawn): read page-wide, the two
    tiers' boxes of one side would come before the other side's."""
    boxes = []
    for x0, y0, _x1, _y1 in panels:
        b = (x0 + 20, y0 + 20, x0 + 60, y0 + 120)
        draw.rectangle(b, fill=255)
        _glyphs(draw, b)
        boxes.append(b)
    return boxes


def _read_panel_by_panel(page, boxes) -> None:
    """The grid page's blocks come in manga order: the top tier right then left, then the bottom one."""
    regions = build_regions([Detection(b, "text", 0.9) for b in boxes], page.size, "rtl", page=gray_page(page))
    want = [boxes[1], boxes[0], boxes[3], boxes[2]]
    assert [r.box for r in regions] == [tuple(float(v) for v in b) for b in want]


@pytest.mark.parametrize("background", [0, 90, 128, 180, 255])
def test_gutters_of_any_grey_make_panels(background):
    # the page's background (its gutters) black, dark grey, mid grey, light grey or white
    page, draw, panels = _grid_page(background=background)
    boxes = _text_high_on_the_left(draw, panels)
    layout = panel_layout(gray_page(page), "rtl", ignore=boxes)
    assert layout.sure and len(layout.panels) == 4, layout
    assert layout.dark == (background == 0)
    # manga order: top tier right then left, then the bottom tier
    assert [round(p[0]) < 300 for p in layout.panels] == [False, True, False, True]
    assert [p[1] < 400 for p in layout.panels] == [True, True, False, False]
    for found, truth in zip(sorted(layout.panels), sorted(panels), strict=True):
        assert all(abs(a - b) <= 6 for a, b in zip(found, truth, strict=True)), (found, truth)
    _read_panel_by_panel(page, boxes)


def test_screentone_gutters_make_panels():
    # gutters of screentone (dots 3 px every 7 px over white), as some pages print them
    page, draw, panels = _grid_page(background=255, gutter=20)
    inside = np.zeros((page.height, page.width), dtype=bool)
    for x0, y0, x1, y1 in panels:
        inside[y0:y1 + 1, x0:x1 + 1] = True
    for y in range(0, page.height, 7):
        for x in range((y // 7) % 2 * 3, page.width, 7):
            if not inside[y, x]:
                draw.ellipse((x - 1, y - 1, x + 1, y + 1), fill=0)
    boxes = _text_high_on_the_left(draw, panels)
    layout = panel_layout(gray_page(page), "rtl", ignore=boxes)
    assert layout.sure and len(layout.panels) == 4, layout
    _read_panel_by_panel(page, boxes)


def test_borderless_panels_are_cut_at_the_paper_between_them():
    # four panels with no frame line: hatching and shapes run up to their edges, white paper
    # between them. A text box high in each left panel, low in each right one: read page-wide,
    # each left box (higher) would come before the right one of its tier
    panels = [(320, 20, 580, 390), (20, 20, 280, 390), (320, 410, 580, 780), (20, 410, 280, 780)]
    art = Image.new("L", (600, 800), 255)
    draw = ImageDraw.Draw(art)
    for k, (x0, y0, x1, y1) in enumerate(panels):
        for y in range(y0 - (x1 - x0), y1, 7):
            draw.line((x0, y, x1, y + (x1 - x0)), fill=150, width=2)
        draw.ellipse((x0 + 60, y0 + 120, x1 - 40, y1 - 10), fill=90)
        _art(draw, (x0, y0, x1, y1), k)
    inside = Image.new("L", art.size, 0)
    for p in panels:
        ImageDraw.Draw(inside).rectangle(p, fill=255)
    page = Image.composite(art, Image.new("L", art.size, 255), inside)  # white outside the panels
    draw = ImageDraw.Draw(page)
    boxes = []
    for k, (x0, y0, x1, _y1) in enumerate(panels):
        b = (x1 - 60, y0 + 230, x1 - 20, y0 + 330) if k % 2 == 0 else (x0 + 20, y0 + 20, x0 + 60, y0 + 120)
        draw.rectangle(b, fill=255)
        _glyphs(draw, b)
        boxes.append(b)
    gray = gray_page(page)
    layout = panel_layout(gray, "rtl", ignore=boxes)
    assert layout.sure and len(layout.panels) == 4, layout
    for found, truth in zip(layout.panels, panels, strict=True):
        assert all(abs(a - b) <= 4 for a, b in zip(found, truth, strict=True)), (found, truth)
    dets = [Detection(b, "text", 0.9) for b in boxes]
    want = [tuple(float(v) for v in b) for b in boxes]
    assert [r.box for r in build_regions(dets, page.size, "rtl", page=gray)] == want
    assert [r.box for r in build_regions(dets, page.size, "rtl")] != want  # page-wide: another order


def test_slanted_gutter_splits_tiers_whose_boxes_overlap():
    page = Image.new("L", (600, 800), 255)
    draw = ImageDraw.Draw(page)
    # two tiers cut by a slanted gutter: the top panel's bottom runs from y=380 (left) to 440 (right)
    top = [(10, 10), (590, 10), (590, 430), (10, 370)]
    bottom = [(10, 390), (590, 450), (590, 790), (10, 790)]
    for poly in (top, bottom):
        draw.polygon(poly, fill=255, outline=0, width=3)
        _art(draw, (20, poly[0][1] + 20, 580, poly[0][1] + 300), len(poly[0]))
    gray = gray_page(page)
    panels = find_panels(gray, "rtl")
    assert len(panels) == 2
    assert panels[0][3] > panels[1][1]  # their boxes overlap: no straight gutter between them
    # a box at the left of the bottom tier, higher than one at the right of the top tier
    a, b = (480, 300, 540, 420), (60, 395, 120, 500)
    assert reading_order([b, a], "rtl", panels) == [1, 0]


def test_panels_are_ordered_tiers_then_right_to_left():
    # a tall panel on the right beside two stacked ones: the tall one first, then the stack
    tall, upper, lower = (300, 0, 600, 800), (0, 0, 290, 390), (0, 410, 290, 800)
    assert order_panels([upper, lower, tall], "rtl") == [tall, upper, lower]
    assert order_panels([upper, lower, tall], "ltr") == [upper, lower, tall]
    # slanted tiers whose boxes overlap by a little are still tiers
    t1, t2, t3, t4 = (0, 0, 290, 405), (310, 0, 600, 400), (0, 395, 290, 800), (310, 392, 600, 800)
    assert order_panels([t3, t1, t4, t2], "rtl") == [t2, t1, t4, t3]


def test_comics_read_left_to_right():
    page, draw, panels = _grid_page(background=255)
    boxes = []
    for _x0, y0, x1, _y1 in panels:
        b = (x1 - 120, y0 + 30, x1 - 20, y0 + 70)  # right side of each panel, horizontal
        draw.rectangle(b, fill=255)
        _glyphs(draw, b)
        boxes.append(b)
    gray = gray_page(page)
    regions = build_regions([Detection(b, "text", 0.9) for b in boxes], page.size, "ltr", page=gray)
    assert [r.box for r in regions] == [tuple(float(v) for v in b) for b in boxes]


def test_comics_read_rows_left_to_right_inside_a_panel():
    # four boxes in one panel of a comics page: rows top to bottom, each left to right (not a
    # manga column rule turned round, which reads the left column down first)
    page, draw, panels = _grid_page(background=255)
    a, c, b, d = (30, 40, 130, 80), (170, 120, 270, 160), (30, 250, 130, 290), (170, 250, 270, 290)
    for box in (a, b, c, d):
        draw.rectangle(box, fill=255)
        _glyphs(draw, box)
    other = (panels[1][0] + 30, panels[1][1] + 30, panels[1][0] + 130, panels[1][1] + 70)
    _glyphs(draw, other)
    gray = gray_page(page)
    dets = [Detection(box, "text", 0.9) for box in (d, b, other, c, a)]
    regions = build_regions(dets, page.size, "ltr", page=gray)
    assert [r.box for r in regions] == [tuple(float(v) for v in box) for box in (a, c, b, d, other)]


def _bubble_page():
    """Two panels side by side; a bubble straddles the gutter, mostly over the right panel,
    with a tight text box inside; a text box on the artwork of the left panel."""
    page = Image.new("L", (600, 400), 255)
    draw = ImageDraw.Draw(page)
    draw.rectangle((10, 10, 290, 390), outline=0, width=4)
    draw.rectangle((310, 10, 590, 390), outline=0, width=4)
    draw.rectangle((14, 200, 286, 386), fill=150)  # a grey background: the text there sits on art
    for y in range(204, 380, 6):
        draw.line((14, y, 286, y + 20), fill=90, width=1)
    bubble = (240, 80, 420, 260)
    draw.ellipse(bubble, fill=255, outline=0, width=4)
    text = (300, 120, 360, 220)
    _glyphs(draw, text)
    on_art = (60, 250, 110, 330)
    draw.rectangle(on_art, fill=255)
    _glyphs(draw, on_art)
    return page, bubble, text, on_art


def test_text_box_inside_a_bubble_becomes_the_bubble():
    page, bubble, text, on_art = _bubble_page()
    gray = gray_page(page)
    found = bubble_around(gray, text)
    assert found is not None
    assert all(abs(a - b) <= 6 for a, b in zip(found.box, bubble)), found.box
    assert bubble_around(gray, on_art) is None
    regions = build_regions([Detection(text, "text", 0.9), Detection(on_art, "text", 0.8)], page.size, "rtl",
                            page=gray)
    by_kind = {r.kind: r for r in regions}
    assert set(by_kind) == {"bubble", "caption"}  # dialogue-sized free text on the artwork
    widened = by_kind["bubble"]
    assert widened.box[0] <= bubble[0] + 6 and widened.box[2] >= bubble[2] - 6
    assert widened.polygon is not None and len(widened.polygon) >= 6
    xs = [x for x, _ in widened.polygon]
    assert min(xs) <= bubble[0] + 6 and max(xs) >= bubble[2] - 6
    assert widened.vertical  # the direction is read from the text's own box
    assert by_kind["caption"].box == tuple(float(v) for v in on_art)
    # without the page nothing is widened
    plain = build_regions([Detection(text, "text", 0.9)], page.size, "rtl")
    assert plain[0].kind == "text" and plain[0].box == tuple(float(v) for v in text)


def test_a_text_box_over_the_bubbles_outline_finds_the_bubble_not_the_paper_beside_it():
    # a bubble open to the panel's left edge (its outline meets the frame), white paper beside
    # it; the annotated or detected text box reaches over the outline on the right. Painting the
    # whole box as paper opened the outline: the paper beside the bubble joined it
    page = Image.new("L", (700, 500), 255)
    draw = ImageDraw.Draw(page)
    draw.ellipse((-120, 40, 200, 330), fill=255, outline=0, width=3)  # cut by the frame at x=10
    draw.rectangle((10, 10, 690, 490), outline=0, width=4)
    draw.rectangle((330, 14, 686, 486), fill=60)  # artwork on the right: the white between is paper
    text = (60, 110, 205, 260)  # reaches 5 px over the outline (x = 200)
    _glyphs(draw, (60, 110, 180, 260))
    found = bubble_around(gray_page(page), text)
    assert found is not None
    assert found.box[2] <= 210, found.box  # the bubble's right edge, not the paper up to the artwork
    assert found.box[0] <= 16 and found.box[1] <= 50 and found.box[3] >= 320


def test_text_boxes_in_one_bubble_are_one_block():
    # a text detector finds the bubble's two columns one by one: one bubble, one block (one
    # translation lettered in it), the boxes joined as its text
    page = Image.new("L", (400, 400), 255)
    draw = ImageDraw.Draw(page)
    bubble = (115, 95, 285, 325)
    draw.ellipse(bubble, fill=255, outline=0, width=4)
    right, left = (200, 140, 260, 280), (140, 150, 200, 290)
    _glyphs(draw, right)
    _glyphs(draw, left)
    gray = gray_page(page)
    regions = build_regions([Detection(right, "text", 0.9), Detection(left, "text", 0.8)], page.size, "rtl",
                            page=gray)
    assert len(regions) == 1, regions
    (r,) = regions
    assert r.kind == "bubble" and r.vertical and r.score == 0.9
    assert all(abs(a - b) <= 6 for a, b in zip(r.box, bubble)), r.box
    # a small box in the same bubble (too small for its own search to take the bubble: MAX_GROWTH)
    # joins it too
    small = (175, 295, 205, 315)
    _glyphs(draw, small)
    gray = gray_page(page)
    assert bubble_around(gray, small) is None
    regions = build_regions([Detection(b, "text", 0.9) for b in (right, left, small)], page.size, "rtl", page=gray)
    assert [r.kind for r in regions] == ["bubble"], regions
    # a text box in another bubble stays a block of its own
    draw.ellipse((330, 20, 395, 120), fill=255, outline=0, width=3)
    other = (350, 45, 375, 95)
    _glyphs(draw, other)
    regions = build_regions([Detection(b, "text", 0.9) for b in (right, left, other)], page.size, "rtl",
                            page=gray_page(page))
    assert len(regions) == 2 and all(r.kind == "bubble" for r in regions)


def test_a_bubble_straddling_the_gutter_keeps_both_panels():
    page, bubble, text, on_art = _bubble_page()
    gray = gray_page(page)
    found = bubble_around(gray, text)
    # the tight text box alone leaves the bubble's outline across the gutter
    assert len(find_panels(gray, "rtl", ignore=[text])) == 1
    assert len(find_panels(gray, "rtl", ignore=[text], bubbles=[found.polygon])) == 2
    regions = build_regions([Detection(text, "text", 0.9), Detection(on_art, "text", 0.8)], page.size, "rtl",
                            page=gray)
    assert [r.kind for r in regions] == ["bubble", "caption"]
    # the bubble is read with the right panel, where most of it lies: before a box under it in
    # the right panel and before a box above it in the left one (read page-wide, or with the
    # bubble's outline left across the gutter: one panel, that one comes first)
    draw = ImageDraw.Draw(page)
    right_low, left_high = (340, 300, 390, 370), (245, 20, 285, 70)
    for b in (right_low, left_high):
        _glyphs(draw, b)
    gray = gray_page(page)
    dets = [Detection(b, "text", 0.9) for b in (text, on_art, right_low, left_high)]
    regions = build_regions(dets, page.size, "rtl", page=gray)
    assert regions[0].kind == "bubble" and abs(regions[0].box[0] - bubble[0]) <= 6
    assert [r.box for r in regions[1:]] == [tuple(float(v) for v in b) for b in (right_low, left_high, on_art)]
    plain = build_regions(dets, page.size, "rtl")
    assert plain[0].box == tuple(float(v) for v in left_high)  # the page-wide rule reads it first


def test_unsure_panels_fall_back_to_the_page_wide_order():
    # two panels in the top half; most of the text lies below them, in no panel: the finder is
    # not sure of its panels, the order is the page-wide one
    page = Image.new("L", (600, 800), 255)
    draw = ImageDraw.Draw(page)
    for box in ((10, 10, 290, 300), (310, 10, 590, 300)):
        draw.rectangle(box, fill=255, outline=0, width=4)
        _art(draw, box, box[0])
    boxes = [(60, 60, 120, 160), (420, 420, 480, 520), (100, 430, 160, 530), (440, 600, 500, 700), (80, 620, 140, 720)]
    for b in boxes:
        _glyphs(draw, b)
    gray = gray_page(page)
    layout = panel_layout(gray, "rtl", ignore=boxes)
    assert len(layout.panels) >= 2 and not layout.sure
    assert find_panels(gray, "rtl", ignore=boxes) == []
    regions = build_regions([Detection(b, "text", 0.9) for b in boxes], page.size, "rtl", page=gray)
    page_wide = reading_order(boxes, "rtl")
    assert [r.box for r in regions] == [tuple(float(v) for v in boxes[i]) for i in page_wide]
    assert page_wide != reading_order(boxes, "rtl", list(layout.panels))  # the panels would have changed it


def test_overlapping_panel_boxes_that_the_gutter_separates_are_kept():
    # an L-shaped layout: a wide top panel whose right part reaches down beside a lower panel;
    # their boxes overlap, the gutter between them is continuous
    page = Image.new("L", (600, 800), 255)
    draw = ImageDraw.Draw(page)
    big = [(10, 10), (590, 10), (590, 790), (330, 790), (330, 400), (10, 400)]
    draw.polygon(big, fill=255, outline=0, width=4)
    draw.rectangle((10, 420, 310, 790), fill=255, outline=0, width=4)
    _art(draw, (20, 20, 580, 390), 3)
    _art(draw, (20, 430, 300, 780), 4)
    gray = gray_page(page)
    layout = panel_layout(gray, "rtl")
    assert len(layout.panels) == 2 and layout.sure
    assert layout.panels[0][1] < 20 and layout.panels[1][1] > 400
    # a box in the lower panel lies in both boxes: it belongs to the lower (smaller) one, read
    # after every box of the L-shaped panel
    lower, upper_right, top_left = (100, 500, 160, 600), (450, 500, 510, 600), (50, 50, 110, 150)
    assert reading_order([lower, upper_right, top_left], "rtl", list(layout.panels)) == [1, 2, 0]


def _block(n, box):
    return Block(id=f"b{n}", order=n, kind="bubble", box=box)


def test_a_hand_fixed_order_stays_when_the_page_is_read_again():
    boxes = [(400, 10, 500, 100), (100, 10, 200, 100), (400, 300, 500, 400)]
    old = Page("p.png", 600, 800, tuple(_block(i + 1, b) for i, b in enumerate(boxes)), processed=True)
    fixed = move_block(old, "b3", 0)  # the user reads the bottom one first
    assert fixed.order_by_hand and [b.id for b in fixed.blocks] == ["b3", "b1", "b2"]
    # read again: new ids, boxes moved a little, one more block found right after the first box
    again = Page("p.png", 600, 800, (
        _block(1, (402, 12, 500, 100)), _block(2, (250, 10, 300, 60)), _block(3, (100, 12, 200, 100)),
        _block(4, (400, 302, 500, 400))), processed=True)
    out = read_again(fixed, again)
    assert [b.box[:2] for b in out.blocks] == [(400, 302), (402, 12), (250, 10), (100, 12)]
    assert [b.order for b in out.blocks] == [1, 2, 3, 4]
    assert out.order_by_hand
    # a page whose order was never changed by hand takes the new order as it is
    assert read_again(old, again) == again


def test_hand_order_is_saved_with_the_project(tmp_path):
    from app.core.document.types import Project
    from app.core.project.files import load_project, save_project

    page = move_block(Page("p.png", 600, 800, (_block(1, (0, 0, 10, 10)), _block(2, (20, 0, 30, 10))),
                           processed=True), "b2", 0)
    path = tmp_path / "p.hayai.json"
    save_project(Project(source=str(tmp_path), pages=[page, Page("q.png")]), path)
    loaded = load_project(path)
    assert [p.order_by_hand for p in loaded.pages] == [True, False]


def test_a_widened_text_box_is_cleaned_and_lettered_in_its_whole_bubble():
    # the block a text detector's tight box becomes: the renderer cleans its glyphs and letters
    # the translation across the bubble, wider than the glyphs' column, and never outside it
    from dataclasses import replace

    from app.core.exports.translated_pages import RenderOptions, render_blocks
    from app.core.reading.pipeline import build_blocks
    from app.render.inpaint import OpenCVInpainter
    from app.render.page import PageRenderer
    from app.render.style import TextStyle

    page = Image.new("L", (500, 400), 255)
    draw = ImageDraw.Draw(page)
    bubble = (150, 80, 350, 320)
    draw.ellipse(bubble, fill=255, outline=0, width=4)
    text = (215, 115, 285, 285)  # a narrow block of glyphs in the bubble's middle
    _glyphs(draw, text)
    rgb = page.convert("RGB")
    translation = "Manned space flight is something only fools dream of."

    def lettered(widen: bool):
        # (the block, the rendered page, the lettering's ink box, its type size, ink pixels outside the ellipse)
        blocks = build_blocks([Detection(text, "text", 0.9)], page.size, "rtl", page=gray_page(page),
                              widen_text=widen)
        blocks = [replace(b, translation=translation) for b in blocks]
        doc = Page("001.png", page.width, page.height, tuple(blocks), processed=True)
        result = PageRenderer(rgb, OpenCVInpainter()).render(render_blocks(doc, TextStyle(), RenderOptions()))
        ((_, layer),) = result.layers
        ys, xs = np.nonzero(layer.rgba[..., 3] > 0)
        xs, ys = xs + layer.x0, ys + layer.y0
        cx, cy = (bubble[0] + bubble[2]) / 2, (bubble[1] + bubble[3]) / 2
        rx, ry = (bubble[2] - bubble[0]) / 2, (bubble[3] - bubble[1]) / 2
        outside = int((((xs - cx) / rx) ** 2 + ((ys - cy) / ry) ** 2 > 1).sum())  # ink beyond the outline
        return blocks[0], result, (xs.min(), ys.min(), xs.max(), ys.max()), layer.layout.size, outside

    block, result, ink, size, outside = lettered(True)
    assert block.kind == "bubble" and block.polygon
    x0, y0, x1, y1 = text
    assert result.original[y0:y1, x0:x1].min() < 50  # the glyphs
    assert result.cleaned[y0:y1, x0:x1].min() > 200, "the glyphs are cleaned away"
    assert outside == 0, "the lettering stays inside the bubble's outline"
    assert ink[2] - ink[0] > 1.6 * (x1 - x0), ink  # set across the bubble, not in the glyphs' box
    _, _, narrow, narrow_size, _ = lettered(False)  # the tight box kept: narrow, smaller type
    assert narrow[2] - narrow[0] <= (x1 - x0) + 8 and narrow_size < size
