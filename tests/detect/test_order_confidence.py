"""The order confidence of a page (app.detect.confidence): which signs mark a page "check the
order", on pages drawn here and on the signs themselves."""
from __future__ import annotations

from PIL import Image, ImageDraw

from app.detect import Detection
from app.detect.blocks import gray_page, read_page
from app.detect.confidence import CHECK_BELOW, DOUBT_WORDS, needs_check, order_confidence, signs
from app.detect.panels import PanelLayout


def _page(boxes_by_panel):
    """2 x 2 framed panels on a white page; a bubble with a column of glyphs at each given box."""
    page = Image.new("L", (600, 800), 255)
    draw = ImageDraw.Draw(page)
    panels = [(310, 14, 586, 393), (14, 14, 290, 393), (310, 407, 586, 786), (14, 407, 290, 786)]
    for p in panels:
        draw.rectangle(p, outline=0, width=3)
    texts = []
    for box in boxes_by_panel:
        x0, y0, x1, y1 = box
        draw.ellipse((x0 - 20, y0 - 25, x1 + 20, y1 + 25), fill=255, outline=0, width=3)
        for y in range(y0 + 2, y1 - 10, 16):
            draw.rectangle((x0 + 3, y, x1 - 3, y + 10), fill=0)
        texts.append(box)
    return page, texts


def _read(page, texts):
    return read_page([Detection(t, "text", 0.9) for t in texts], page.size, "rtl", page=gray_page(page))


def test_a_plain_grid_is_sure():
    # one bubble a panel: nothing to guess
    page, texts = _page([(420, 100, 470, 260), (130, 100, 180, 260), (420, 500, 470, 660), (130, 500, 180, 660)])
    reading = _read(page, texts)
    assert len(reading.regions) == 4 and len(reading.panels) == 4
    assert reading.confidence >= CHECK_BELOW and not needs_check(reading.confidence)
    assert reading.doubts == ()


def test_a_panel_read_either_way_is_marked():
    # in the top right panel a bubble low on the right and one high on its left: by columns the
    # right one first, by rows the high one first
    page, texts = _page([(510, 230, 550, 370), (340, 40, 380, 180), (130, 100, 180, 260)])
    reading = _read(page, texts)
    assert reading.signs["rows_or_columns"] > 0
    assert needs_check(reading.confidence)
    assert reading.doubts[0] == DOUBT_WORDS["rows_or_columns"]
    # the same two bubbles one above the other in one column: both rules agree
    page, texts = _page([(460, 40, 500, 180), (460, 230, 500, 370), (130, 100, 180, 260)])
    reading = _read(page, texts)
    assert reading.signs["rows_or_columns"] == 0 and not needs_check(reading.confidence)


def test_an_unsure_finder_or_a_crowded_panel_marks_the_page():
    boxes = [(300, 0, 400, 100), (150, 0, 250, 100), (0, 0, 100, 100)]
    unsure = signs(boxes, "rtl", PanelLayout(((0.0, 0.0, 500.0, 500.0),), sure=False))
    assert unsure["unsure"] == 1.0 and needs_check(order_confidence(unsure)[0])
    assert signs(boxes, "rtl", PanelLayout(((0.0, 0.0, 500.0, 500.0),), sure=False), with_page=False)["unsure"] == 0.0
    crowded = signs(boxes, "rtl", PanelLayout(((0.0, 0.0, 500.0, 500.0),), sure=True, crowded=(0,)))
    confidence, doubts = order_confidence(crowded)
    assert needs_check(confidence) and DOUBT_WORDS["crowded"] in doubts


def test_lesser_signs_lower_the_confidence_without_marking():
    for name in ("edges", "higher_later", "straddling", "loose", "busiest", "panels_moved"):
        confidence, doubts = order_confidence({name: 1.0})
        assert CHECK_BELOW <= confidence < 0.95 and doubts == (DOUBT_WORDS[name],), name
    assert order_confidence({}) == (1.0, ())
