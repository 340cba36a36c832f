"""Panels of real layouts, on small pages drawn here: tiers that share one border line (no
gutter between them), hatching that is no border, crowded panels read by the page-wide rule
while the others keep their panels, and slivers of a cut that are no panels."""
from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from app.detect import Detection, build_regions, reading_order
from app.detect import gutters as gutters_mod
from app.detect import panels as panels_mod
from app.detect.blocks import gray_page
from app.detect.panels import (
    drop_figures,
    drop_slivers,
    find_panels,
    panel_layout,
    region_panels,
    settle_overlaps,
    split_by_regions,
)


def _art(draw: ImageDraw.ImageDraw, box, seed: int) -> None:
    """Short strokes inside `box` (artwork)."""
    rng = np.random.default_rng(seed)
    x0, y0, x1, y1 = box
    for _ in range(14):
        ax, ay = rng.uniform(x0 + 10, x1 - 40), rng.uniform(y0 + 10, y1 - 40)
        draw.line((ax, ay, ax + rng.uniform(5, 30), ay + rng.uniform(5, 30)), fill=40, width=3)


def _glyphs(draw: ImageDraw.ImageDraw, box) -> None:
    x0, y0, x1, y1 = box
    draw.rectangle(box, fill=255)
    for y in range(int(y0) + 2, int(y1) - 10, 16):
        draw.rectangle((x0 + 3, y, x1 - 3, y + 10), fill=0)


def _shared_border_page(hatch: bool = False, width: int = 600):
    """One bordered frame (20..580 across) cut into two tiers by a single 4 px line (no
    gutter) on a page `width` wide; the top tier holds a box high on the left and one lower on
    the right, the bottom tier one high on the right and one low on the left."""
    page = Image.new("L", (width, 800), 255)
    draw = ImageDraw.Draw(page)
    draw.rectangle((20, 20, 580, 780), outline=0, width=4)
    draw.rectangle((20, 398, 580, 401), fill=0)  # the shared border
    _art(draw, (24, 24, 576, 396), 1)
    _art(draw, (24, 404, 576, 776), 2)
    if hatch:  # hatching in the lower tier: a series of dark lines across it, no border
        for y in range(560, 640, 7):
            draw.rectangle((24, y, 576, y + 2), fill=0)
    boxes = [(60, 40, 120, 160), (460, 240, 520, 360), (460, 440, 520, 540), (60, 660, 120, 760)]
    for b in boxes:
        _glyphs(draw, b)
    return page, boxes


def test_tiers_sharing_one_border_line_are_two_panels():
    page, boxes = _shared_border_page()
    gray = gray_page(page)
    found = find_panels(gray, "rtl", ignore=boxes)
    assert len(found) == 2, found
    top, bottom = found
    assert abs(top[3] - 398) <= 4 and abs(bottom[1] - 402) <= 4
    # with the panels the top tier's left box comes before the bottom tier's; page-wide the
    # right-hand column is read first
    assert reading_order(boxes, "rtl", found) == [1, 0, 2, 3]
    regions = build_regions([Detection(b, "text", 0.9) for b in boxes], page.size, "rtl", page=gray)
    assert [r.box[:2] for r in regions] == [(460.0, 240.0), (60.0, 40.0), (460.0, 440.0), (60.0, 660.0)]


def test_a_border_line_is_found_beside_a_wide_margin():
    # the frame fills 70 % of the page's width, white paper beside it: across the whole page
    # the line is too light to be a border; across the frame, once the margin is trimmed, it is one
    page, boxes = _shared_border_page(width=800)
    found = find_panels(gray_page(page), "rtl", ignore=boxes)
    assert len(found) == 2, found
    assert abs(found[0][3] - 398) <= 4 and abs(found[1][1] - 402) <= 4
    assert found[0][2] <= 584  # the margin is no part of a panel
    assert reading_order(boxes, "rtl", found) == [1, 0, 2, 3]


def test_without_the_border_line_rule_the_frame_is_one_panel(monkeypatch):
    page, boxes = _shared_border_page()
    monkeypatch.setattr(gutters_mod, "LINE_INK", 2.0)  # no line is ever dark enough
    assert len(find_panels(panels_mod.np.asarray(gray_page(page)), "rtl", ignore=boxes)) == 1


def test_hatching_is_not_a_border():
    page, boxes = _shared_border_page(hatch=True)
    found = find_panels(gray_page(page), "rtl", ignore=boxes)
    assert len(found) == 2, found  # the shared border only, not the hatching's lines


def test_a_crowded_panel_is_read_page_wide_and_the_other_panels_keep_theirs():
    # two tiers with a white gutter; the top one is a single frame holding six boxes in two rows
    # (two panels without a border between them); the bottom tier has two panels side by side
    page = Image.new("L", (600, 800), 255)
    draw = ImageDraw.Draw(page)
    frames = [(20, 20, 580, 420), (310, 440, 580, 780), (20, 440, 290, 780)]
    for k, f in enumerate(frames):
        draw.rectangle(f, outline=0, width=4)
        _art(draw, f, 10 + k)
    top = [(500, 40, 540, 120), (380, 50, 420, 130), (60, 40, 100, 110),  # first row, right to left
           (500, 240, 540, 320), (300, 250, 340, 330), (60, 240, 100, 330)]  # second row
    bottom = [(500, 460, 540, 540), (500, 640, 540, 720), (200, 540, 240, 620)]  # right panel x2, left
    boxes = top + bottom
    for b in boxes:
        _glyphs(draw, b)
    gray = gray_page(page)
    layout = panel_layout(gray, "rtl", ignore=boxes)
    assert layout.sure and len(layout.panels) == 3 and layout.crowded == (0,)
    want = [0, 1, 2, 3, 4, 5, 6, 7, 8]
    assert reading_order(boxes, "rtl", list(layout.panels), layout.crowded) == want
    regions = build_regions([Detection(b, "text", 0.9) for b in boxes], page.size, "rtl", page=gray)
    assert [r.box for r in regions] == [tuple(float(v) for v in boxes[i]) for i in want]
    # read page-wide (the old answer to a crowded panel) the bottom tier mixes its two panels
    assert reading_order(boxes, "rtl")[6:] != [6, 7, 8]
    # the column rule inside the crowded panel would read its right-hand column first
    assert reading_order(boxes, "rtl", list(layout.panels))[:6] != [0, 1, 2, 3, 4, 5]


def test_slivers_without_text_are_no_panels():
    # a region cut to a straight-cut panel can leave a strip a few pixels across: no panel,
    # unless text lies in it
    panel, strip, flat = (20, 20, 540, 780), (545, 20, 565, 780), (20, 785, 540, 795)
    text = (300, 60, 340, 200)
    assert drop_slivers([panel, strip, flat], [text], (600, 800)) == [panel]
    assert drop_slivers([panel, strip], [text, (548, 300, 562, 340)], (600, 800)) == [panel, strip]
    assert drop_slivers([strip], [], (600, 800)) == [strip]  # never no panel at all


def test_on_a_dark_page_a_ragged_shape_of_art_is_no_panel():
    # a black page: one white panel (as full as its box) and a white L-shaped stroke of art
    # (a splash page's hair, a highlight) as large, filling a third of its box
    page = Image.new("L", (600, 800), 0)
    draw = ImageDraw.Draw(page)
    draw.rectangle((40, 40, 300, 360), fill=255)
    draw.rectangle((340, 420, 560, 480), fill=255)
    draw.rectangle((340, 420, 400, 760), fill=255)
    found = region_panels(gray_page(page), dark=True)
    assert found == [(40.0, 40.0, 301.0, 361.0)], found


def test_a_textless_panel_overlapping_others_does_not_make_the_layout_unsure():
    right, left, bottom = (310, 20, 580, 400), (20, 20, 290, 400), (20, 420, 580, 780)
    sfx = (200, 100, 420, 300)  # a sound effect found as a region, over both top panels, no text in it
    texts = [(480, 40, 540, 160), (100, 200, 160, 320), (300, 500, 360, 620)]
    panels, sure = settle_overlaps([right, left, sfx, bottom], texts, "rtl", 800.0)
    assert sure and panels == [right, left, bottom, sfx]
    assert reading_order(texts, "rtl", panels) == [0, 1, 2]
    # with text in it, the overlap stands: unsure, panels as they were
    panels, sure = settle_overlaps([right, left, sfx, bottom], [*texts, (280, 150, 330, 250)], "rtl", 800.0)
    assert not sure and panels == [right, left, sfx, bottom]


def test_a_ragged_region_in_a_corner_inside_another_regions_box_is_no_panel():
    piece = (300, 240, 830, 1170)
    outer = (300, 240, 830, 1170)  # the panel, its frame open at one side (an L-shaped region)
    figure = (420, 450, 830, 1170)  # a figure in its corner, cut off by the open frame
    fills = {outer: 0.6, figure: 0.45}
    assert split_by_regions(piece, [outer, figure], fills) == [piece]
    # a framed panel there fills its box: an L-shaped layout's two panels
    assert split_by_regions(piece, [outer, figure], {outer: 0.6, figure: 0.97}) == [outer, figure]
    # two regions side by side are two panels; an inset panel away from the corner stays
    left, right = (300, 240, 410, 600), (420, 240, 830, 1170)
    assert split_by_regions(piece, [left, right], {left: 0.5, right: 0.5}) == [left, right]
    inset = (500, 500, 700, 700)
    assert split_by_regions(piece, [outer, inset], {outer: 0.6, inset: 0.4}) == [outer, inset]


def _level_line_page():
    """A page read right to left: a tall right-hand panel beside a stack of two on the left,
    a wide panel below. The lower-left panel's top border is level with a dark line of the tall
    panel's artwork (the foot of a wall above a pale floor); a narrow gutter parts the stack from
    the tall panel. The tall panel's one bubble straddles that line."""
    page = Image.new("L", (600, 800), 255)
    draw = ImageDraw.Draw(page)
    draw.rectangle((20, 20, 280, 360), outline=0, width=4)  # upper left
    draw.rectangle((20, 387, 280, 600), outline=0, width=4)  # lower left: its top border is rows 387-390
    draw.rectangle((289, 20, 580, 600), outline=0, width=4)  # the tall panel, 8 px of gutter to its left
    draw.rectangle((293, 366, 576, 386), fill=70)  # a wall, dark down to the line
    draw.rectangle((293, 387, 576, 390), fill=0)  # its foot, level with the border beside it
    draw.rectangle((20, 616, 580, 780), outline=0, width=4)  # the wide panel
    _art(draw, (24, 24, 276, 356), 3)
    _art(draw, (24, 391, 276, 596), 4)
    _art(draw, (293, 394, 576, 596), 5)
    boxes = [(420, 330, 470, 450), (200, 60, 250, 200), (200, 420, 250, 560), (480, 640, 530, 760)]
    for b in boxes:
        _glyphs(draw, b)
    return page, boxes


def test_a_line_level_with_a_gutter_beside_it_does_not_cut_the_tall_panel():
    # the foot of the wall and the stack's border make one dark row across the page but for
    # the gutter's 8 px: a gutter runs through that gap, so they are two lines, no border two
    # panels share; the tall panel stays whole and its bubble is read first
    page, boxes = _level_line_page()
    gray = gray_page(page)
    found = find_panels(gray, "rtl", ignore=boxes)
    assert len(found) == 4, found
    tall = found[0]
    assert tall[0] >= 285 and tall[1] <= 24 and tall[3] >= 596, tall
    assert reading_order(boxes, "rtl", found) == [0, 1, 2, 3]
    regions = build_regions([Detection(b, "text", 0.9) for b in boxes], page.size, "rtl", page=gray)
    assert [r.box[:2] for r in regions] == [(420.0, 330.0), (200.0, 60.0), (200.0, 420.0), (480.0, 640.0)]


def test_figures_inside_a_panel_are_no_panels():
    # a shape the gutter-coloured areas cut off inside a panel, holding no text, is the panel's
    # artwork; a panel beside, one overlapping a little and one holding text stay panels
    big, figure, beside = (20, 20, 580, 400), (100, 100, 200, 200), (20, 420, 580, 780)
    corner = (500, 300, 700, 500)  # a fifth of it inside `big`
    holding = (300, 120, 400, 220)
    text = (320, 140, 360, 200)
    assert drop_figures([big, figure, beside], [text]) == [big, beside]
    assert drop_figures([big, corner], [text]) == [big, corner]
    assert drop_figures([big, holding], [text]) == [big, holding]
    assert drop_figures([big, figure], []) == [big, figure]  # no text: nothing to judge by


def test_a_margin_beside_a_shared_border_is_no_gutter_it_crosses():
    # a bubble sticks out of the frame's left side lower down, so the page's content starts in
    # the margin: the margin beside the shared border's end is no gutter across it
    page, boxes = _shared_border_page()
    draw = ImageDraw.Draw(page)
    draw.ellipse((10, 560, 70, 700), fill=255, outline=0, width=3)
    draw.rectangle((100, 370, 300, 397), fill=150)  # tone beside the line on both sides: the
    draw.rectangle((100, 402, 300, 430), fill=150)  # frame's unframed margin beside it is no gutter
    gray = gray_page(page)
    found = find_panels(gray, "rtl", ignore=[*boxes, (22, 590, 58, 670)])
    assert len(found) == 2, found
    assert abs(found[0][3] - 398) <= 4 and abs(found[1][1] - 402) <= 4
