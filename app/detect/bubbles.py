"""The speech bubble around a text box: the paper region the text sits in, bounded by an outline.

Text detectors (comic-text-segmenter, manga-text-detector) give boxes tight around the glyphs.
The bubble around such a box is found from the page itself: the box is taken as paper (its
glyphs set aside: the dark components inside it; a dark line running on beyond the box, the
bubble's outline where the box overlaps it, stays), and the paper-coloured pixels connected to
the paper the box mostly lies on (4-connected) are the bubble's inside, up to its outline. When that region runs off too far (more than MAX_GROWTH x the box's
area, or MAX_PAGE_SHARE of the page), reaches the page's edge or is ragged (less than
MIN_SOLIDITY of its convex hull: the paper around artwork), the text is not in a closed bubble
(on artwork, on a background, in a bubble whose outline is open): there is none.

The bubble's shape is the region with its holes filled, grown by OUTLINE_PX (the outline's
inside edge): a box and a polygon (the outer contour) in page pixels. No Qt; numpy + OpenCV.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Box = tuple[float, float, float, float]

PAPER_FRACTION = 0.85  # lighter than this x the page's paper level: paper (bubbles are paper)
MAX_GROWTH = 4.0  # the bubble's area at most this x the text box's (tight boxes fill a bubble's middle)
MAX_PAGE_SHARE = 0.2  # ... and at most this share of the page
MIN_GROWTH = 1.05  # a region hardly larger than the box: the box already is the bubble
MIN_SOLIDITY = 0.85  # the bubble's area over its convex hull's: less is paper around artwork
SEARCH = 3.0  # look this many box sides around the box (a bubble is not much larger)
OUTLINE_PX = 2
POLYGON_EPS = 0.01  # of the contour's length: polygon simplification


@dataclass(frozen=True)
class Bubble:
    box: Box
    polygon: tuple[tuple[float, float], ...]
    area: float  # pixels inside


def paper_level(gray: np.ndarray) -> float:
    return float(np.percentile(gray[:: max(1, gray.shape[0] // 256), :: max(1, gray.shape[1] // 256)], 95))


def _glyphs_in_box(paper: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """(box-sized uint8) the dark pixels of `box` in the window's `paper` mask that belong to
    its text: dark components lying inside the box. A dark line running on outside the box
    (the bubble's outline where the box overlaps it, artwork) is not the text's and stays."""
    import cv2

    bx0, by0, bx1, by1 = box
    h, w = paper.shape
    ex0, ey0, ex1, ey1 = max(0, bx0 - 1), max(0, by0 - 1), min(w, bx1 + 1), min(h, by1 + 1)
    dark = (1 - paper[ey0:ey1, ex0:ex1]).astype(np.uint8)
    n, labels = cv2.connectedComponents(dark, connectivity=8)
    ring = np.ones(labels.shape, dtype=bool)
    ring[by0 - ey0:by1 - ey0, bx0 - ex0:bx1 - ex0] = False  # the pixels just outside the box
    crossing = np.zeros(n, dtype=bool)
    crossing[np.unique(labels[ring])] = True
    crossing[0] = False
    inner = labels[by0 - ey0:by1 - ey0, bx0 - ex0:bx1 - ex0]
    return ((inner > 0) & ~crossing[inner]).astype(np.uint8)


def bubble_around(gray: np.ndarray, box: Box, level: float | None = None) -> Bubble | None:
    """The bubble holding the text `box` ((x0, y0, x1, y1) pixels of the grayscale page `gray`),
    or None when the text is not inside a closed bubble."""
    import cv2

    h, w = gray.shape[:2]
    x0, y0, x1, y1 = (float(v) for v in box)
    bw, bh = max(1.0, x1 - x0), max(1.0, y1 - y0)
    side = max(bw, bh)
    # a window around the box: a bubble reaching beyond it is no bubble (or a huge one)
    wx0, wy0 = max(0, int(x0 - SEARCH * side)), max(0, int(y0 - SEARCH * side))
    wx1, wy1 = min(w, int(np.ceil(x1 + SEARCH * side))), min(h, int(np.ceil(y1 + SEARCH * side)))
    if wx1 - wx0 < 4 or wy1 - wy0 < 4:
        return None
    window = gray[wy0:wy1, wx0:wx1]
    level = paper_level(gray) if level is None else level
    paper = (window >= PAPER_FRACTION * level).astype(np.uint8)
    bx0, by0 = max(0, int(round(x0)) - wx0), max(0, int(round(y0)) - wy0)
    bx1, by1 = min(wx1 - wx0, int(round(x1)) - wx0), min(wy1 - wy0, int(round(y1)) - wy0)
    if bx1 <= bx0 or by1 <= by0:
        return None
    paper[by0:by1, bx0:bx1] |= _glyphs_in_box(paper, (bx0, by0, bx1, by1))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(paper, connectivity=4)
    inside = labels[by0:by1, bx0:bx1]
    counts = np.bincount(inside.ravel(), minlength=n)
    counts[0] = 0
    label = int(counts.argmax())  # the paper the box mostly lies on
    if label == 0:
        return None
    sx, sy, sw, sh, count = stats[label]
    touches_window = sx == 0 or sy == 0 or sx + sw >= wx1 - wx0 or sy + sh >= wy1 - wy0
    at_page_edge = ((sx == 0 and wx0 == 0) or (sy == 0 and wy0 == 0)
                    or (sx + sw >= wx1 - wx0 and wx1 == w) or (sy + sh >= wy1 - wy0 and wy1 == h))
    if touches_window or at_page_edge:
        return None
    if count > MAX_GROWTH * bw * bh or count > MAX_PAGE_SHARE * h * w:
        return None
    region = (labels == label).astype(np.uint8)
    contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    contour = max(contours, key=cv2.contourArea)
    filled = np.zeros_like(region)
    cv2.drawContours(filled, [contour], -1, 1, thickness=-1)
    area = float(filled.sum())
    if area < MIN_GROWTH * bw * bh:
        return None
    if area < MIN_SOLIDITY * float(cv2.contourArea(cv2.convexHull(contour))):
        return None  # a ragged region: the paper around artwork, not a bubble
    if OUTLINE_PX > 0:
        k = 2 * OUTLINE_PX + 1
        filled = cv2.dilate(filled, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
        contours, _ = cv2.findContours(filled, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        contour = max(contours, key=cv2.contourArea)
    approx = cv2.approxPolyDP(contour, POLYGON_EPS * cv2.arcLength(contour, True), True).reshape(-1, 2)
    cx, cy, cw, ch = cv2.boundingRect(contour)
    out = (float(wx0 + cx), float(wy0 + cy), float(wx0 + cx + cw), float(wy0 + cy + ch))
    out = (min(out[0], x0), min(out[1], y0), max(out[2], x1), max(out[3], y1))
    polygon = tuple((float(wx0 + px), float(wy0 + py)) for px, py in approx) if len(approx) >= 3 else ()
    return Bubble(out, polygon, area)
