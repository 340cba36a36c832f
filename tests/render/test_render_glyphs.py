"""No tofu: every character is drawn with a face that has it (the block's face, the app's Noto
CJK, then any installed font), checked by comparing each drawn glyph with the face's own .notdef.
Kinsoku and tate-chu-yoko, checked on the lines the layout produces."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from app.fonts import font_file
from app.render.draw import draw_calls
from app.render.glyphs import FontChain, pieces
from app.render.layout import NO_END, NO_START, font_at, layout_text
from app.render.style import TextStyle
from app.render.typeset import Shape, typeset

COMIC = str(font_file("comic"))
NOTO = str(font_file("cjk"))
MISSING = "\U0010fffd"  # a private-use code point no face maps: FreeType draws .notdef for it


def glyph_bitmap(font, ch: str) -> np.ndarray:
    canvas = Image.new("L", (font.size * 3, font.size * 3), 0)
    ImageDraw.Draw(canvas).text((font.size, font.size), ch, font=font, fill=255)
    return np.asarray(canvas)


def notdef_glyphs(layout) -> list[tuple[str, str]]:
    """(character, face file) of every drawn character whose glyph is its face's .notdef."""
    bad = []
    for _anchor, _xy, text, font, _direction in draw_calls(layout):
        notdef = glyph_bitmap(font, MISSING)
        for ch in text:
            if ch.isspace():
                continue
            if np.array_equal(glyph_bitmap(font, ch), notdef):
                bad.append((ch, font.path))
    return bad


def box(w, h):
    return Shape(0, 0, np.ones((h, w), bool), "box")


def test_notdef_check_sees_tofu():
    """The check itself: with Comic Neue alone, what no font of the chain or of the machine has is
    drawn as .notdef: kana and Hangul where no installed font has them (a machine with only
    DejaVu), and always two private-use characters of plane 15 that no font covers."""
    from app.render.glyphs import installed_face_for

    private = "\U000F0001\U000F0002"
    lay = layout_text("EN: た！？ 안녕 " + private, np.ones((80, 400), bool), FontChain((COMIC,)), 12, 24)
    tofu = {ch for ch, _ in notdef_glyphs(lay)}
    assert set(private) <= tofu
    assert {ch for ch in "た안녕" if installed_face_for(ch) is None} <= tofu
    assert "E" not in tofu and "N" not in tofu


@pytest.mark.parametrize("text", ["EN: た！？", "Mr. 山田 said we should go to 東京 tomorrow.", "Kim said 안녕하세요!"])
def test_mixed_latin_and_cjk_draws_no_tofu(text):
    layer = typeset(text, TextStyle(font="comic"), box(320, 160))
    assert notdef_glyphs(layer.layout) == []
    faces = {font.path for *_rest, font, _d in draw_calls(layer.layout)}
    assert faces == {COMIC, NOTO}  # Latin in the block's face, the CJK in Noto


@pytest.mark.parametrize("target,text", [("ko", "잠깐만, 어디 가는 거야? 같이 가자!"), ("zh", "等一下，你要去哪里？一起走吧！"),
                                         ("ja", "ちょっと待って、どこに行くの？")])
def test_cjk_targets_are_lettered_in_a_face_that_covers_them(target, text):
    layer = typeset(text, TextStyle(), box(240, 240), target_lang=target)
    assert layer.layout.font_path == NOTO
    assert notdef_glyphs(layer.layout) == []
    assert (layer.rgba[..., 3] > 0).sum() > 500


def _font_with_one_glyph(path, codepoint: int) -> None:
    """A real TrueType font (fontTools' FontBuilder) whose only glyph is a square at `codepoint`."""
    from fontTools.fontBuilder import FontBuilder
    from fontTools.pens.ttGlyphPen import TTGlyphPen

    def square(size):
        pen = TTGlyphPen(None)
        if size:
            pen.moveTo((100, 0)), pen.lineTo((100, size)), pen.lineTo((100 + size, size)), pen.lineTo((100 + size, 0))
            pen.closePath()
        return pen.glyph()

    fb = FontBuilder(1000, isTTF=True)
    fb.setupGlyphOrder([".notdef", "sq"])
    fb.setupCharacterMap({codepoint: "sq"})
    fb.setupGlyf({".notdef": square(0), "sq": square(700)})
    fb.setupHorizontalMetrics({".notdef": (500, 0), "sq": (900, 100)})
    fb.setupHorizontalHeader(ascent=800, descent=-200)
    fb.setupNameTable({"familyName": "Hayai Test Runic", "styleName": "Regular"})
    fb.setupOS2(sTypoAscender=800, usWinAscent=800, usWinDescent=200)
    fb.setupPost()
    fb.save(str(path))


def test_a_character_neither_face_has_comes_from_an_installed_font(tmp_path, monkeypatch):
    from app.render import fontfind, glyphs

    _font_with_one_glyph(tmp_path / "HayaiTestRunic.ttf", 0x16A0)
    monkeypatch.setenv("HAYAI_FONT_DIRS", str(tmp_path))
    for cached in (fontfind.installed_files, glyphs.installed_face_for, glyphs.pieces):
        cached.cache_clear()
    try:
        runs = pieces("Go ᚠ", FontChain.for_font(COMIC), False)
        assert [(p.text, p.font) for p in runs] == [("Go ", COMIC), ("ᚠ", str(tmp_path / "HayaiTestRunic.ttf"))]
        layer = typeset("Go ᚠ", TextStyle(font="comic"), box(200, 80))
        assert notdef_glyphs(layer.layout) == []
    finally:
        for cached in (fontfind.installed_files, glyphs.installed_face_for, glyphs.pieces):
            cached.cache_clear()


# --------------------------------------------------------------------------- kinsoku

JA = "「本当に？」と彼は言った。「行くぞ。」」そして、誰もいなくなった（はずだった）。ーーまだ終わらない…"


def _check_lines(lay, width_of):
    texts = [ln.text for ln in lay.lines if ln.text]
    assert "".join(texts).replace(" ", "") == JA.replace(" ", "")
    for i, ln in enumerate(lay.lines):
        if not ln.text:
            continue
        if i > 0:
            assert ln.text[0] not in NO_START, (ln.text, texts)
        if i < len(lay.lines) - 1:
            assert ln.text[-1] not in NO_END, (ln.text, texts)
        assert ln.length <= width_of(ln) + 0.5, (ln.text, ln.length)


@pytest.mark.parametrize("width", range(70, 260, 9))
def test_kinsoku_horizontal_lines_are_measured_with_their_punctuation(width):
    shape = np.ones((400, width), bool)
    lay = layout_text(JA, shape, NOTO, 12, 18, vertical=False, lang=None)
    assert lay.fits
    _check_lines(lay, lambda ln: width)


@pytest.mark.parametrize("height", range(90, 300, 13))
def test_kinsoku_vertical_columns(height):
    shape = np.ones((height, 420), bool)
    lay = layout_text(JA, shape, NOTO, 12, 18, vertical=True, lang=None)
    assert lay.fits
    _check_lines(lay, lambda ln: height)


def test_closing_run_moves_as_one_unit():
    """「行くぞ。」」: where the line would break before 。」」, the three move with ぞ."""
    from app.render.layout import atoms

    units = [a.text for a in atoms("「行くぞ。」」そして", False)]
    assert "ぞ。」」" in units and "「行" in units


# --------------------------------------------------------------------------- tate-chu-yoko

def test_tate_chu_yoko_numbers_and_exclamations_in_vertical_text():
    lay = layout_text("あと12分だ!?残り1234", np.ones((600, 60), bool), NOTO, 20, 20, vertical=True, lang=None)
    calls = list(draw_calls(lay))
    across = [text for _a, _xy, text, _f, direction in calls if direction == "ltr"]
    assert across == ["12", "!?"]  # 1234 is too long: its digits stay in the column
    column = lay.lines[0].text
    assert "12" in column and "1234" in column
    # each tate-chu-yoko run advances one em, so the column is measured as it is drawn
    font = font_at(NOTO, 20)
    upright = font.getlength("あと分だ残り", direction="ttb", features=["vert"]) + \
        font.getlength("1234", direction="ttb", features=["vert"])
    assert lay.lines[0].length == pytest.approx(upright + 2 * 20, abs=0.01)


def test_tate_chu_yoko_only_in_vertical_text():
    lay = layout_text("あと12分だ!?", np.ones((60, 600), bool), NOTO, 20, 20, vertical=False, lang=None)
    assert all(direction == "ltr" and anchor == "ls" for anchor, _xy, _t, _f, direction in draw_calls(lay))


def test_a_kanji_name_in_english_text_is_one_word():
    from app.render.layout import atoms

    assert [a.text for a in atoms("Mr. 山田 said hi", False)] == ["Mr.", "山田", "said", "hi"]
    assert [a.text for a in atoms("山田さんが来た", False)] == list("山田さんが来た")
