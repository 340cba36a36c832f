"""Text masks: found from the crop (bubbles and free text), from a polygon, edited by strokes."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from app.render.masks import MaskStroke, apply_strokes, auto_mask, block_mask, dilate


def _bubble_page(dark_text=True):
    """A grey page with a white ellipse bubble (black outline) holding a text bar, and art in the
    box corners outside the bubble."""
    page = Image.new("L", (300, 200), 120)
    d = ImageDraw.Draw(page)
    d.rectangle((40, 30, 260, 170), fill=30)  # art behind the bubble, in the box's corners
    d.ellipse((50, 40, 250, 160), fill=0)
    d.ellipse((54, 44, 246, 156), fill=255 if dark_text else 20)
    ink = 0 if dark_text else 255
    text = Image.new("L", page.size, 0)
    td = ImageDraw.Draw(text)
    for y in (80, 100, 120):
        td.rectangle((110, y, 190, y + 6), fill=255)
    page.paste(ink, (0, 0), text)
    return np.asarray(page), np.asarray(text) > 0


@pytest.mark.parametrize("dark_text", [True, False])
def test_bubble_mask_takes_the_text_and_never_the_outline_or_the_corners(dark_text):
    gray, text = _bubble_page(dark_text)
    bm = auto_mask(gray, (50, 40, 251, 161), kind="bubble")
    x0, y0, x1, y1 = bm.page_box()
    full = np.zeros(gray.shape, bool)
    full[y0:y1, x0:x1] = bm.mask
    assert full[text].all(), "every text pixel is masked"
    assert full.sum() <= dilate(text, 2).sum(), "nothing beyond the dilated text"
    ring = np.zeros(gray.shape, np.uint8)
    import cv2

    cv2.ellipse(ring, (150, 100), (100, 60), 0, 0, 360, 1, 5)
    assert not (full & ring.astype(bool)).any(), "the bubble's outline stays"
    assert not full[40:50, 50:70].any(), "the art in the box corner stays"
    assert bm.body is not None and bm.body[60, 100]


def test_free_text_mask_covers_ink_in_its_tight_box(synth_case):
    text_blocks = [b for b in synth_case.truth["blocks"] if b["kind"] == "text"]
    assert text_blocks
    for b in text_blocks:
        bm = auto_mask(synth_case.page[..., 0], b["box"], kind="text")
        x0, y0, x1, y1 = bm.page_box()
        glyphs = synth_case.mask[y0:y1, x0:x1] > 127
        assert (bm.mask & glyphs).sum() >= 0.85 * glyphs.sum(), b["id"]  # worst measured: 0.89


def test_bubble_masks_cover_the_synthetic_text(synth_case):
    for b in synth_case.truth["blocks"]:
        if b["kind"] != "bubble":
            continue
        bm = auto_mask(synth_case.page[..., 0], b["box"], kind="bubble")
        x0, y0, x1, y1 = bm.page_box()
        glyphs = synth_case.mask[y0:y1, x0:x1] > 64
        assert (bm.mask & glyphs).sum() >= 0.99 * glyphs.sum(), b["id"]
        assert bm.mask.sum() < 0.6 * bm.mask.size, f"{b['id']}: the mask is the text, not the bubble"


def test_dilation_stops_at_the_bubble_outline():
    gray, text = _bubble_page()
    near = gray.copy()
    near[47:51, 140:161] = 0  # a stroke just under the inner edge of the outline (y = 44 there)
    bm = auto_mask(near, (50, 40, 251, 161), dilation=5, kind="bubble")
    x0, y0, x1, y1 = bm.page_box()
    full = np.zeros(gray.shape, bool)
    full[y0:y1, x0:x1] = bm.mask
    assert full[47:51, 140:161].all()
    assert not full[40:44, 140:161].any(), "the dilated mask is cut at the body, the outline stays"


def test_polygon_bounds_the_mask():
    gray, text = _bubble_page()
    polygon = ((100, 75), (200, 75), (200, 95), (100, 95))  # holds the first text bar only
    bm = auto_mask(gray, (50, 40, 251, 161), polygon=polygon, kind="text")
    x0, y0, x1, y1 = bm.page_box()
    full = np.zeros(gray.shape, bool)
    full[y0:y1, x0:x1] = bm.mask
    assert full[80:87, 110:191].all()
    assert not full[100:130].any(), "bars outside the polygon are not masked"
    assert not full[:, :99].any()


def test_flat_window_has_no_text():
    gray = np.full((100, 100), 200, np.uint8)
    assert not auto_mask(gray, (10, 10, 90, 90)).mask.any()


def test_strokes_add_and_erase_in_order_inside_the_block():
    gray, _text = _bubble_page()
    base = auto_mask(gray, (50, 40, 251, 161))
    add = MaskStroke(False, 5, ((70.0, 100.0), (90.0, 100.0)))
    out = apply_strokes(base, (add,))
    lx, ly = 70 - base.x0, 100 - base.y0
    assert not base.mask[ly, lx] and out.mask[ly, lx]
    erase = MaskStroke(True, 8, ((150.0, 103.0),))
    out2 = apply_strokes(base, (add, erase))
    assert base.mask[103 - base.y0, 150 - base.x0] and not out2.mask[103 - base.y0, 150 - base.x0]
    outside = MaskStroke(False, 10, ((10.0, 10.0), (290.0, 190.0)))
    out3 = block_mask(gray, (50, 40, 251, 161), strokes=(outside,))
    assert out3.mask.shape == base.mask.shape, "strokes never grow the block's window"


def test_a_drawn_box_round_a_bubble_is_cleaned_like_the_bubble():
    """A box drawn (B) round a missed bubble, wider than the bubble: the text goes, the outline
    and the art around the bubble stay, and the lettering is set in the bubble's body."""
    import cv2

    from app.render.inpaint import OpenCVInpainter
    from app.render.page import PageRenderer, RenderBlock
    from app.render.style import TextStyle

    gray, text = _bubble_page(True)
    bm = auto_mask(gray, (40, 30, 261, 171), kind="manual")
    full = np.zeros(gray.shape, bool)
    x0, y0, x1, y1 = bm.page_box()
    full[y0:y1, x0:x1] = bm.mask
    assert full[text].all()
    ring = np.zeros(gray.shape, np.uint8)
    cv2.ellipse(ring, (150, 100), (100, 60), 0, 0, 360, 1, 5)
    assert not (full & ring.astype(bool)).any(), "the bubble's outline stays"
    assert not full[30:40, 40:60].any(), "the art round the bubble stays"
    rgb = np.repeat(gray[..., None], 3, axis=2)
    block = RenderBlock("m", 1, "manual", (40, 30, 261, 171), None, "A longer line of English text here", True,
                        TextStyle())
    renderer = PageRenderer(rgb, OpenCVInpainter())
    assert renderer.shape(block).kind in ("ellipse", "rectangle")
    layer = renderer.layer(block)
    inked = np.zeros(gray.shape, bool)
    h, w = layer.rgba.shape[:2]
    inked[layer.y0:layer.y0 + h, layer.x0:layer.x0 + w] = layer.rgba[..., 3] > 0
    body = np.zeros(gray.shape, bool)
    body[y0:y1, x0:x1] = bm.body
    assert inked.any() and not (inked & ~body).any(), "the lettering stays inside the bubble"


def test_free_text_cleans_the_whole_glyphs_its_box_cuts():
    """A free-text box narrower than its text: the glyphs it cuts are taken whole; the
    screentone dots at its edges and the long art line through it are not followed."""
    page = Image.new("L", (400, 200), 255)
    d = ImageDraw.Draw(page)
    for x in range(60, 116, 9):  # screentone across the box's left edge, below the glyphs
        for y in range(130, 200, 9):
            d.ellipse((x, y, x + 4, y + 4), fill=0)
    d.line((0, 150, 399, 150), fill=0, width=3)  # a long art line
    glyphs = Image.new("L", page.size, 0)
    gd = ImageDraw.Draw(glyphs)
    for i in range(6):  # six "glyphs" 24 px tall on a line
        gx = 80 + i * 40
        gd.rectangle((gx, 100, gx + 5, 124), fill=255)
        gd.rectangle((gx, 100, gx + 24, 105), fill=255)
    page.paste(0, (0, 0), glyphs)
    gray, truth = np.asarray(page), np.asarray(glyphs) > 0
    box = (110, 106, 290, 152)  # cuts the tops of glyphs 2..6 off, and the right of the last one
    bm = auto_mask(gray, box, kind="text")
    full = np.zeros(gray.shape, bool)
    x0, y0, x1, y1 = bm.page_box()
    full[y0:y1, x0:x1] = bm.mask
    assert full[truth & (np.arange(400) >= 110)[None, :]].all(), "every glyph the box touches, whole"
    assert not full[truth & (np.arange(400) < 110)[None, :]].any(), "the glyph it does not touch stays"
    assert not full[150, :60].any() and not full[150, 320:].any(), "the art line is kept to the box"
    assert not full[:, :110].any(), "the screentone outside the box stays"


def test_a_drawn_box_round_a_small_one_glyph_bubble_cleans_the_glyph_and_letters_inside():
    """A small bubble holding one glyph (ん) on white paper, a box drawn loosely round it: the
    page's paper round the bubble covers more of the box's centre than the bubble's own, yet the
    body is the bubble: the glyph is cleaned, the outline stays, the lettering is set inside."""
    import cv2
    from PIL import ImageFont

    from app.fonts import font_file
    from app.render.inpaint import OpenCVInpainter
    from app.render.page import PageRenderer, RenderBlock
    from app.render.style import TextStyle

    page = Image.new("L", (200, 160), 255)
    d = ImageDraw.Draw(page)
    cx, cy, r = 100, 80, 16
    d.ellipse((cx - r - 3, cy - r - 3, cx + r + 3, cy + r + 3), fill=0)
    d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=255)
    font = ImageFont.truetype(str(font_file("cjk")), 22)
    d.text((cx, cy), "ん", font=font, fill=0, anchor="mm")
    glyph = Image.new("L", page.size, 0)
    ImageDraw.Draw(glyph).text((cx, cy), "ん", font=font, fill=255, anchor="mm")
    gray, glyph = np.asarray(page), np.asarray(glyph) > 128
    box = (cx - r - 15, cy - r - 15, cx + r + 16, cy + r + 16)
    bm = auto_mask(gray, box, kind="manual")
    full = np.zeros(gray.shape, bool)
    x0, y0, x1, y1 = bm.page_box()
    full[y0:y1, x0:x1] = bm.mask
    assert full[glyph].all(), "the glyph is cleaned"
    ring = np.zeros(gray.shape, np.uint8)
    cv2.circle(ring, (cx, cy), r + 2, 1, 2)
    assert not (full & ring.astype(bool)).any(), "the bubble's outline stays"
    body = np.zeros(gray.shape, bool)
    body[y0:y1, x0:x1] = bm.body
    disc = np.zeros(gray.shape, np.uint8)
    cv2.circle(disc, (cx, cy), r + 1, 1, -1)
    assert not (body & ~disc.astype(bool)).any(), "the body is the bubble, not the paper round it"
    rgb = np.repeat(gray[..., None], 3, axis=2)
    block = RenderBlock("m", 1, "manual", box, None, "Hm?", True, TextStyle())
    renderer = PageRenderer(rgb, OpenCVInpainter())
    cleaned = renderer.cleaned([block])[..., 0]
    assert cleaned[glyph].min() >= 240, "no trace of the glyph where it came near the outline"
    assert (cleaned[ring.astype(bool)] < 128).mean() > 0.5, "the outline is still drawn"
    layer = renderer.layer(block)
    inked = np.zeros(gray.shape, bool)
    h, w = layer.rgba.shape[:2]
    inked[layer.y0:layer.y0 + h, layer.x0:layer.x0 + w] = layer.rgba[..., 3] > 0
    assert inked.any() and not (inked & ~body).any(), "the lettering stays inside the bubble"
