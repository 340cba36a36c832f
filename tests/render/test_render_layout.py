"""Typesetting: size search between min and max, word wrap with hyphenation, balanced centred
lines, vertical columns, the bubble's shape, outline, upper case, no spill."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from app.fonts import font_file
from app.render.layout import font_at, is_cjk_text, layout_text
from app.render.style import StyleOverride, TextStyle, resolve
from app.render.typeset import Shape, bubble_shape, typeset

COMIC = str(font_file("comic"))


def ellipse(w, h):
    canvas = np.zeros((h, w), np.uint8)
    cv2.ellipse(canvas, (w // 2, h // 2), (w // 2, h // 2), 0, 0, 360, 1, -1)
    return canvas.astype(bool)


def test_size_is_the_largest_that_fits_between_min_and_max():
    shape = np.ones((120, 300), bool)
    big = layout_text("Hi!", shape, COMIC, 10, 60)
    assert big.size == 60 and big.fits
    long = layout_text("This is a much longer sentence that needs several lines to fit in here", shape, COMIC, 10, 60)
    assert 10 <= long.size < 60 and long.fits
    # one pixel larger does not fit: the search found the edge
    from app.render.layout import _fit, _Profile, atoms

    paras = [atoms(long_text, False) for long_text in ["This is a much longer sentence that needs several lines to fit in here"]]
    from app.render.glyphs import FontChain

    assert _fit(paras, _Profile(shape, False), FontChain.for_font(COMIC), long.size + 1, 1.15, False, "en", False) is None


def test_lines_stay_inside_the_shape_and_are_centred():
    shape = ellipse(260, 180)
    lay = layout_text("Where did you put the key I gave you yesterday?", shape, COMIC, 8, 40)
    assert lay.fits and len(lay.lines) >= 2
    font = font_at(COMIC, lay.size)
    ascent, descent = font.getmetrics()
    for line in lay.lines:
        x0, x1 = line.x, line.x + line.length
        top, bottom = int(line.y - ascent), int(line.y + descent)
        assert shape[max(0, top):bottom, int(x0) + 1:int(x1) - 1].all(), line
        mid = (x0 + x1) / 2
        assert abs(mid - 130) < 3, "centred"


def test_lines_are_balanced():
    shape = np.ones((400, 210), bool)  # greedy filling gives lines of 192, 201 and 53 px here
    lay = layout_text("one two three four five six seven eight nine ten eleven", shape, COMIC, 20, 20)
    lengths = [line.length for line in lay.lines]
    assert len(lengths) >= 2
    assert min(lengths) > 0.6 * max(lengths), lengths  # greedy filling would leave a short last line


def test_a_word_wider_than_the_bubble_is_hyphenated():
    shape = np.ones((200, 120), bool)
    lay = layout_text("Extraordinarily", shape, COMIC, 22, 22, lang="en")
    assert lay.fits and len(lay.lines) >= 2
    assert lay.lines[0].text.endswith("-")
    assert "".join(line.text.rstrip("-") for line in lay.lines) == "Extraordinarily"
    no_hyphen = layout_text("Extraordinarily", shape, COMIC, 22, 22, lang=None)
    assert not no_hyphen.fits, "without hyphenation the word needs a size below the minimum"


def test_not_fitting_goes_below_min_and_says_so():
    shape = np.ones((30, 60), bool)
    lay = layout_text("A long sentence that cannot fit in such a tiny bubble at all", shape, COMIC, 14, 30)
    assert not lay.fits and lay.size < 14


def test_vertical_japanese_in_columns_right_to_left():
    shape = np.ones((300, 200), bool)
    assert is_cjk_text("そうだよ、行こう！") and not is_cjk_text("Let's go") and not is_cjk_text("가자")
    lay = layout_text("そうだよ。\n行こう！", shape, str(font_file("cjk")), 10, 40, vertical=True)
    assert lay.vertical and len(lay.lines) >= 2
    xs = [line.x for line in lay.lines]
    assert xs == sorted(xs, reverse=True), "first column on the right"


def test_bubble_shape_kinds():
    from app.render.masks import BlockMask

    body = np.zeros((100, 200), bool)
    body[3:97, 3:197] = True
    rect = bubble_shape((0, 0, 200, 100), None, "bubble", BlockMask(0, 0, body & False, body, body), 400, 400)
    assert rect.kind == "rectangle" and not rect.area[0, 0] and rect.area[50, 100]
    oval = bubble_shape((0, 0, 200, 100), None, "bubble", None, 400, 400)
    assert oval.kind == "ellipse" and not oval.area[2, 2] and oval.area[50, 100]
    poly = bubble_shape((0, 0, 200, 100), ((0, 0), (200, 0), (0, 100)), "bubble", None, 400, 400)
    assert poly.kind == "polygon" and poly.area[10, 10] and not poly.area[90, 190]
    ink = np.zeros((100, 200), bool)
    ink[40:60, 50:150] = True
    hull = bubble_shape((0, 0, 200, 100), None, "text", BlockMask(0, 0, ink, np.ones_like(ink)), 400, 400)
    assert hull.kind == "hull" and hull.area[50, 100] and not hull.area[10, 10]


@pytest.mark.parametrize("outline", [0, 3])
def test_typeset_layer_never_spills_and_draws_the_style(outline):
    area = ellipse(240, 160)
    style = TextStyle(color="#ff0000", outline_width=outline, outline_color="#00ff00", uppercase=True)
    layer = typeset("hello there, friend", style, Shape(10, 20, area, "ellipse"))
    assert layer.spill == 0 and layer.layout.fits
    assert all(line.text == line.text.upper() for line in layer.layout.lines)
    rgba = layer.rgba
    assert not rgba[~area][:, 3].any()
    solid = rgba[rgba[..., 3] == 255]
    assert (solid[:, :3] == [255, 0, 0]).all(axis=1).any()
    has_green = (solid[:, :3] == [0, 255, 0]).all(axis=1).any()
    assert has_green == (outline > 0)


def test_text_that_does_not_fit_at_all_is_cut_to_the_bubble():
    area = ellipse(60, 24)
    text = "Supercalifragilisticexpialidocious words keep coming and coming without any end in sight"
    layer = typeset(text, TextStyle(min_size=10, max_size=20, outline_width=2), Shape(0, 0, area, "ellipse"))
    assert layer.layout.overflow and not layer.layout.fits
    assert not layer.rgba[~area][:, 3].any(), "nothing is drawn outside the bubble"
    assert layer.rgba[..., 3].any()
    tiny = ellipse(30, 12)  # even the smallest letter with its outline is larger than this bubble
    cut = typeset("Supercalifragilistic", TextStyle(outline_width=2), Shape(0, 0, tiny, "ellipse"))
    assert cut.spill > 0, "the layout alone would spill here"
    assert not cut.rgba[~tiny][:, 3].any(), "the clip keeps it in"


def test_style_override_resolution():
    base = TextStyle(min_size=10, max_size=30)
    assert resolve(base, None) is base
    s = resolve(base, StyleOverride(font="comic-bold", min_size=40))
    assert (s.font, s.min_size, s.max_size) == ("comic-bold", 40, 40)
    with pytest.raises(ValueError, match="align"):
        StyleOverride(align="middle")
