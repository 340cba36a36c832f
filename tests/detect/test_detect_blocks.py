"""Mapping, merging, vertical flag, ids and crops, on real ultralytics `Results` from known boxes."""
from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from PIL import Image

from app.core.reading.pipeline import build_blocks
from app.detect import Detection, build_class_map, build_regions, crop, detections_from_result, pad_box
from app.detect.detector import import_ultralytics
from app.errors import UserError

import_ultralytics()  # offline, and without its process-wide patches (PIL.Image.open, threads)
from ultralytics.engine.results import Results  # noqa: E402

NAMES = {0: "bubble", 1: "text", 2: "panel"}
CLASS_MAP = build_class_map(NAMES)
W, H = 400, 600


def results(rows, names=NAMES, size=(W, H), masks=None) -> Results:
    """rows: [(x0, y0, x1, y1, score, class id)] -> a Results as a detector's predict returns it."""
    w, h = size
    boxes = torch.tensor(rows, dtype=torch.float32).reshape(-1, 6)
    return Results(np.zeros((h, w, 3), np.uint8), path="page.png", names=names, boxes=boxes, masks=masks)


def dets(rows, **kw) -> list[Detection]:
    return detections_from_result(results(rows, **kw), CLASS_MAP)


def test_class_names_map_to_kinds():
    names = {0: "speech_bubble", 1: "Balloon", 2: "text", 3: "frame text", 4: "free-text", 5: "panel", 6: "face"}
    assert build_class_map(names) == {0: "bubble", 1: "bubble", 2: "text", 3: "text", 4: "text",
                                      5: "other", 6: "other"}
    over = build_class_map(names, {"PANEL": "text", 6: "bubble"})
    assert over[5] == "text" and over[6] == "bubble" and over[0] == "bubble"
    # a detector whose names say nothing is a text detector
    assert build_class_map({0: "0"}) == {0: "text"}
    assert build_class_map({0: "0"}, {0: "other"}) == {0: "other"}
    with pytest.raises(ValueError, match="not one of"):
        build_class_map(names, {"text": "speech"})


def test_results_convert_to_detections_best_first():
    out = dets([(10, 20, 110, 220, 0.5, 1), (200, 30, 380, 200, 0.9, 0), (0, 0, 400, 300, 0.7, 2)])
    assert [(d.kind, d.label, d.score) for d in out] == [
        ("bubble", "bubble", pytest.approx(0.9)), ("other", "panel", pytest.approx(0.7)),
        ("text", "text", pytest.approx(0.5))]
    assert out[0].box == pytest.approx((200, 30, 380, 200))
    assert all(d.polygon is None for d in out)
    assert dets([]) == []


def test_masks_become_polygons():
    mask = torch.zeros((1, H, W))
    mask[0, 100:300, 50:250] = 1.0
    (d,) = dets([(50, 100, 250, 300, 0.8, 0)], masks=mask)
    xs = [p[0] for p in d.polygon]
    ys = [p[1] for p in d.polygon]
    assert len(d.polygon) >= 4
    assert min(xs) == pytest.approx(50, abs=2) and max(xs) == pytest.approx(250, abs=2)
    assert min(ys) == pytest.approx(100, abs=2) and max(ys) == pytest.approx(300, abs=2)
    (block,) = build_regions([d], (W, H))
    assert block.polygon == d.polygon


def test_duplicates_merge_into_one_block_with_best_score():
    out = build_regions(dets([(100, 100, 200, 300, 0.6, 1), (104, 98, 202, 305, 0.8, 1),
                             (120, 150, 180, 250, 0.4, 1)]), (W, H))
    (b,) = out
    assert b.box == (100, 98, 202, 305) and b.score == pytest.approx(0.8)
    assert b.kind == "text" and b.vertical


def test_text_inside_bubble_is_absorbed_and_bubble_grows():
    rows = [(100, 100, 300, 260, 0.9, 0),  # bubble
            (150, 110, 190, 250, 0.8, 1),  # line 1 of the bubble (inside)
            (200, 110, 240, 265, 0.7, 1),  # line 2, pokes 5 px out of the bubble
            (320, 400, 380, 560, 0.6, 1)]  # free text elsewhere
    out = build_regions(dets(rows), (W, H))
    assert [b.kind for b in out] == ["bubble", "text"]
    bubble, free = out
    assert bubble.box == (100, 100, 300, 265)
    assert bubble.vertical  # decided by its tall text lines, although the bubble is wide
    assert free.box == (320, 400, 380, 560)


def test_text_across_bubble_edge_or_between_bubbles():
    rows = [(0, 0, 200, 200, 0.9, 0), (210, 0, 400, 200, 0.9, 0),
            (150, 50, 250, 100, 0.8, 1),  # half in each: stays its own block
            (20, 20, 190, 60, 0.7, 1),    # inside the left bubble
            (100, 150, 230, 190, 0.6, 1)]  # 70% in the left bubble, 15% in the right: not absorbed
    out = build_regions(dets(rows), (W, H), order="ltr")
    kinds = sorted((b.kind, b.box) for b in out)
    assert kinds == [("bubble", (0, 0, 200, 200)), ("bubble", (210, 0, 400, 200)),
                     ("text", (100, 150, 230, 190)), ("text", (150, 50, 250, 100))]
    left = next(b for b in out if b.box == (0, 0, 200, 200))
    assert not left.vertical  # its absorbed line is wide


def test_text_in_overlapping_bubbles_goes_to_the_larger_overlap():
    rows = [(0, 0, 220, 200, 0.9, 0), (180, 0, 400, 200, 0.8, 0), (190, 40, 260, 160, 0.7, 1)]
    out = build_regions(dets(rows), (W, H))
    assert [b.kind for b in out] == ["bubble", "bubble"]
    right = next(b for b in out if b.box[0] == 180)
    assert right.box == (180, 0, 400, 200)


def test_other_kinds_dropped_and_boxes_clamped():
    rows = [(0, 0, 400, 600, 0.99, 2), (-20, 550, 60, 640, 0.5, 1), (500, 10, 600, 90, 0.5, 1)]
    out = build_regions(dets(rows), (W, H))
    assert [(b.kind, b.box) for b in out] == [("text", (0, 550, 60, 600))]


def test_vertical_flag_by_shape():
    out = build_regions(dets([(10, 10, 50, 200, 0.9, 1), (100, 10, 300, 60, 0.9, 1),
                             (320, 10, 380, 70, 0.9, 0)]), (W, H), order="ltr")
    assert [b.vertical for b in out] == [True, False, False]


def test_ids_and_order_are_stable_and_input_order_free():
    rows = [(300, 20, 380, 200, 0.9, 1), (150, 30, 250, 180, 0.8, 0), (20, 10, 100, 220, 0.7, 1),
            (250, 300, 390, 450, 0.95, 0), (30, 320, 200, 480, 0.6, 1)]
    first = build_blocks(dets(rows), (W, H))
    assert [b.id for b in first] == ["b1", "b2", "b3", "b4", "b5"]
    assert [b.order for b in first] == [1, 2, 3, 4, 5]
    assert [b.box[0] for b in first] == [300, 150, 20, 250, 30]
    rng = random.Random(0)
    for _ in range(5):
        shuffled = rows[:]
        rng.shuffle(shuffled)
        assert build_blocks(dets(shuffled), (W, H)) == first
    ltr = build_blocks(dets(rows), (W, H), order="ltr")
    assert [b.box[0] for b in ltr] == [20, 150, 300, 30, 250]


def test_pad_box_grows_and_clamps():
    assert pad_box((100, 100, 200, 300), (W, H), pad=0.1) == (90, 90, 210, 310)
    assert pad_box((100, 100, 110, 300), (W, H), pad=0.05) == (98, 98, 112, 302)  # at least 2 px
    assert pad_box((0, 0, 50, 50), (W, H)) == (0, 0, 53, 53)
    assert pad_box((380, 580, 400, 600), (W, H)) == (378, 578, 400, 600)
    assert pad_box((10.4, 10.6, 20.2, 20.7), (W, H), pad=0) == (10, 10, 21, 21)
    assert pad_box((200, 300, 100, 100), (W, H), pad=0) == (100, 100, 200, 300)  # drawn backwards
    with pytest.raises(UserError, match="outside the 400x600 page"):
        pad_box((500, 10, 600, 90), (W, H))


def test_crop_from_full_resolution_source():
    arr = np.zeros((H, W), np.uint8)
    arr[100:300, 100:200] = 255
    page = Image.fromarray(arr, "L")
    out = crop(page, (100, 100, 200, 300))
    assert out.mode == "RGB"
    assert out.size == (112, 212)  # 6% of the 100 px side on each edge
    px = np.asarray(out)
    assert px[6, 6].tolist() == [255, 255, 255] and px[0, 0].tolist() == [0, 0, 0]
    assert crop(page, (100, 100, 200, 300), pad=0).size == (100, 200)
