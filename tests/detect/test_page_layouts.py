"""Layouts beyond the plain grid, on cases drawn or laid out here: the wider gutter parts a grid
first (4-koma strips, the pages of a spread), slanted gutters, text in no panel read where it
lies, and text that is not black on paper (white on a dark ground, black in white halos, black
over a grey tone of lines) kept and read."""
from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from app.detect.blocks import gray_page, pad_box
from app.detect.direction import writing_direction
from app.detect.ink import is_line_art
from app.detect.panels import order_panels
from tools.synth import generate_page
from tools.synth.fonts import find_faces
from tools.synth.text import TextStyle, render


def _strips(wide: int, narrow: int = 12):
    """Two 4-koma strips (right, left) of four panels 200 x 150, `wide` px between the strips,
    `narrow` between panels: (right strip top to bottom, left strip top to bottom)."""
    right, left = [], []
    for k in range(4):
        y0 = 60 + k * (150 + narrow)
        right.append((20 + 200 + wide, y0, 20 + 400 + wide, y0 + 150))
        left.append((20, y0, 220, y0 + 150))
    return right, left


def test_4koma_strips_are_read_strip_by_strip():
    right, left = _strips(wide=60)
    shuffled = [left[2], right[1], left[0], right[3], left[3], right[0], left[1], right[2]]
    assert order_panels(shuffled, "rtl", 800.0) == [*right, *left]
    assert order_panels(shuffled, "ltr", 800.0) == [*left, *right]


def test_a_grid_whose_gutters_are_alike_is_read_tier_by_tier():
    # the same boxes with the gutter between the columns as wide as between the tiers, or
    # twice as wide: an ordinary 2 x 4 grid of manga, read tier by tier
    for wide in (14, 24):
        right, left = _strips(wide=wide)
        tiers = [p for pair in zip(right, left, strict=True) for p in pair]
        assert order_panels([*left, *right], "rtl", 800.0) == tiers


def test_a_spread_is_read_page_by_page_before_and_after_a_panel_across_both():
    # two pages side by side whose tiers line up (a 14 px gutter), the binding 80 px wide, and a
    # panel spanning the spread above or below (30 px apart): the widest gutters part it first
    right = [(1220, 20, 1580, 300), (840, 20, 1200, 300), (840, 314, 1580, 800)]
    left = [(420, 20, 760, 300), (20, 20, 400, 300), (20, 314, 760, 800)]
    below = (20, 830, 1580, 1100)
    got = order_panels([left[2], right[0], below, left[0], right[2], left[1], right[1]], "rtl", 1120.0)
    assert got == [*right, *left, below]
    shift = [(b[0], b[1] + 310, b[2], b[3] + 310) for b in (*right, *left)]
    above = (20, 20, 1580, 300)
    assert order_panels([*reversed(shift), above], "rtl", 1120.0) == [above, *shift]


def test_panels_parted_by_a_slanted_gutter_are_two_tiers():
    # the gutter between the tiers slants down to the right: the boxes of the top right panel
    # and the lower left one overlap by 40 px (beyond 2 % of the page, within a quarter of a panel)
    top_right, top_left = (310, 20, 580, 445), (20, 20, 290, 390)
    bottom_right, bottom_left = (310, 465, 580, 780), (20, 405, 290, 780)
    got = order_panels([bottom_left, top_left, bottom_right, top_right], "rtl", 800.0)
    assert got == [top_right, top_left, bottom_right, bottom_left]


def test_text_in_no_panel_is_read_where_it_lies():
    right, left = _strips(wide=60)
    titles = [(right[0][0] + 40, 20, right[0][2] - 40, 50), (left[0][0] + 40, 20, left[0][2] - 40, 50)]
    got = order_panels([*left, *right], "rtl", 800.0, units=titles)
    assert got == [titles[0], *right, titles[1], *left]
    # a caption in the margin left of a tier comes after that tier's panels, before the next tier
    tier1 = [(320, 20, 580, 300), (120, 20, 300, 300)]
    tier2 = [(120, 320, 580, 600)]
    caption = (20, 100, 90, 200)
    assert order_panels([*tier2, *tier1], "rtl", 620.0, units=[caption]) == [*tier1, caption, *tier2]


def _text(lines: list[str], vertical: bool, size: int = 24) -> Image.Image:
    return render(lines, TextStyle(find_faces()[0], size), vertical)


def _ground_with_lines(size, level: int, line: int, step: int = 6) -> Image.Image:
    """A ground of `level` crossed by diagonal lines of `line`, every `step` px (a tone of lines)."""
    page = Image.new("L", size, level)
    draw = ImageDraw.Draw(page)
    for x in range(-size[1], size[0], step):
        draw.line((x, 0, x + size[1], size[1]), fill=line, width=2)
    return page


def _pasted(page: Image.Image, mask: Image.Image, at, colour: int, halo: int = 0):
    if halo:
        from PIL import ImageFilter

        grown = Image.new("L", (mask.width + 2 * halo, mask.height + 2 * halo), 0)
        grown.paste(mask, (halo, halo))
        page.paste(255 - colour, (at[0] - halo, at[1] - halo), grown.filter(ImageFilter.MaxFilter(2 * halo + 1)))
    page.paste(colour, at, mask)
    x0, y0, x1, y1 = mask.getbbox()
    return (at[0] + x0 - 3, at[1] + y0 - 3, at[0] + x1 + 3, at[1] + y1 + 3)


def _free_text(layout: str, pages: int):
    """(gray page, truth block) of the free text (2+ characters) on pages of a synthetic layout."""
    for i in range(pages):
        page, truth = generate_page(77, i, size=(768, 1086), layout=layout)
        gray = gray_page(page)
        for b in truth["blocks"]:
            if b["kind"] == "text" and len(b["text"]) >= 2:
                yield gray, b


def test_white_text_on_dark_art_is_kept_and_read():
    # text straight on dark art (night, shadow), white: the ink of the text is the light pixels
    white = [(g, b) for g, b in _free_text("over_art", 6)
             if g[b["text_box"][1]:b["text_box"][3], b["text_box"][0]:b["text_box"][2]].mean() < 128]
    assert len(white) >= 6
    assert not [b["id"] for g, b in white if is_line_art(g, pad_box(b["box"], (g.shape[1], g.shape[0])))]
    right = [writing_direction(g, b["box"]) is b["vertical"] for g, b in white]
    assert sum(right) >= len(right) - 1, right


def test_black_text_in_white_halos_on_dark_art_is_read_from_its_black():
    # captions printed black in a white halo over the dark art of a dark page
    found = [writing_direction(g, b["box"]) is b["vertical"] for g, b in _free_text("dark", 8)]
    assert len(found) >= 5 and all(found), found


def test_black_text_over_a_grey_tone_of_lines_is_not_line_art():
    page = _ground_with_lines((400, 400), level=255, line=150, step=5)
    box = _pasted(page, _text(["あいうえお", "かきくけこ"], True), (150, 80), 0)
    gray = gray_page(page)
    assert not is_line_art(gray, pad_box(box, page.size))
    # the tone of lines alone, where a detector might have boxed something, is line art
    assert is_line_art(gray, (20, 20, 100, 140))
    assert np.asarray(page).std() > 30
