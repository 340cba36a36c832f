"""bench/real_pages.py on a small OpenMantra-format folder drawn here (the real books are CC
BY-NC and stay out of the tests): each figure it reports, on pages whose answers are known."""
from __future__ import annotations

import json

from PIL import Image, ImageDraw

from bench.real_pages import kendall_tau, run


def _rect(box) -> dict:
    x0, y0, x1, y1 = box
    return {"x": x0, "y": y0, "w": x1 - x0, "h": y1 - y0}


def _page(path):
    """2 x 2 bordered panels, a bubble with a column of glyphs in each: (frames, text boxes in
    manga order)."""
    page = Image.new("L", (600, 800), 255)
    draw = ImageDraw.Draw(page)
    frames = [(310, 14, 586, 393), (14, 14, 290, 393), (310, 407, 586, 786), (14, 407, 290, 786)]
    texts = []
    for x0, y0, x1, y1 in frames:
        draw.rectangle((x0, y0, x1, y1), outline=0, width=3)
        cx, cy = (x0 + x1) // 2, y0 + 130
        draw.ellipse((cx - 60, cy - 90, cx + 60, cy + 90), fill=255, outline=0, width=3)
        box = (cx - 25, cy - 60, cx + 25, cy + 60)
        for y in range(box[1] + 2, box[3] - 10, 16):
            draw.rectangle((box[0] + 3, y, box[2] - 3, y + 10), fill=0)
        texts.append(box)
    page.save(path)
    return frames, texts


def _data(tmp_path, orders):
    (tmp_path / "images").mkdir()
    frames, texts = _page(tmp_path / "images" / "p.png")
    pages = [{"page_index": i, "image_paths": {"ja": "images/p.png"}, "frame": [_rect(f) for f in frames],
              "text": [{**_rect(texts[k]), "text_ja": "あいう", "text_en": "abc"} for k in order]}
             for i, order in enumerate(orders)]
    (tmp_path / "annotation.json").write_text(json.dumps([{"book_title": "drawn", "pages": pages}]))
    return tmp_path


def test_kendall_tau():
    assert kendall_tau([0, 1, 2, 3]) == 1.0
    assert kendall_tau([3, 2, 1, 0]) == -1.0
    assert abs(kendall_tau([1, 0, 2]) - 1 / 3) < 1e-9
    assert kendall_tau([0]) == 1.0


def test_the_figures_on_pages_with_known_answers(tmp_path):
    # page 0 annotated in manga order; page 1 the same page annotated with its tiers swapped
    data = _data(tmp_path, [[0, 1, 2, 3], [2, 3, 0, 1]])
    result = run(data, None, "rtl", None, set())
    s = result["books"]["drawn"]
    assert s["pages"] == 2 and s["order_pages"] == 2 and s["text_boxes"] == 8
    assert s["order_exact_pages"] == 1 and s["order_exact"] == 0.5
    assert abs(s["kendall_tau"] - (1.0 + kendall_tau([2, 3, 0, 1])) / 2) < 1e-9
    assert s["panel_precision"] == 1.0 and s["panel_recall"] == 1.0 and s["pages_panels_merged"] == 0
    assert s["dropped"] == 0
    assert s["with_bubble"] == 8 and s["bubble_ok"] == 8
    assert s["direction_boxes"] == 8 and s["direction"] == 1.0  # tall boxes of three characters
    # the 'check the order' calibration: a plain grid of one bubble a panel is not marked, so
    # the page annotated otherwise is out of order unmarked
    assert s["marked"] == 0 and s["wrong_pages"] == 1 and s["wrong_marked"] == 0.0
    assert s["unmarked_right"] == 0.5 and s["marked_precision"] == 0.0
    assert result["all"]["order_exact_pages"] == 1
    assert result["failures"]["drawn"] and result["failures"]["drawn"][0].startswith("1:")
