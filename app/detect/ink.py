"""The ink of the text in a block: what the writing-direction and false-block rules read.

`text_ink` keeps the dark pixels (Otsu) of the box that belong to its text: inside the bubble
when there is one (the largest paper region not touching the box's edge, holes filled), without
components that touch the box's edge (the bubble's outline, panel borders, speed lines and other
artwork running through the box) and without specks much smaller than the largest component
(screentone dots where the box cuts through a bubble's outline). No Qt; numpy + OpenCV (imported when first used).
"""
from __future__ import annotations

import numpy as np

Box = tuple[float, float, float, float]

MIN_INK_PX = 12  # fewer text pixels than this: the block holds no text
STROKE_LENGTH = 0.3  # x the box's shorter side: a straight stroke at least this long is not text
STRAIGHT_SHARE = 0.6  # this share of the ink on straight strokes: the box is on lines
SPECK = 0.15  # components smaller than this x the largest one are screentone dots or specks


def _crop(gray: np.ndarray, box: Box) -> np.ndarray:
    h, w = gray.shape[:2]
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    return gray[max(0, y0):min(h, y1), max(0, x0):min(w, x1)]


def _dark(gray: np.ndarray, box: Box) -> np.ndarray | None:
    """(h, w) uint8 mask of the dark pixels of `box` (Otsu, never lighter than 160 of 255);
    None for a box too small to hold text."""
    import cv2

    crop = np.ascontiguousarray(_crop(gray, box), dtype=np.uint8)
    if crop.size == 0 or min(crop.shape) < 4:
        return None
    thresh, _ = cv2.threshold(crop, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    return (crop <= min(thresh, 160)).astype(np.uint8)


def text_ink(gray: np.ndarray, box: Box) -> np.ndarray | None:
    """(h, w) uint8 mask (1 = ink of the text) of `box` in the grayscale page `gray` (H, W uint8);
    None when the box is too small to hold text."""
    import cv2

    ink = _dark(gray, box)
    if ink is None:
        return None
    h, w = ink.shape
    # the bubble's inside: the largest paper region that does not touch the box's edge
    n, labels, stats, _ = cv2.connectedComponentsWithStats(1 - ink, connectivity=4)
    inner = [i for i in range(1, n) if stats[i, 0] > 0 and stats[i, 1] > 0
             and stats[i, 0] + stats[i, 2] < w and stats[i, 1] + stats[i, 3] < h]
    if inner:
        best = max(inner, key=lambda i: stats[i, 4])
        if stats[best, 4] > 0.15 * h * w:
            region = (labels == best).astype(np.uint8)
            contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            filled = np.zeros_like(region)
            cv2.drawContours(filled, contours, -1, 1, thickness=-1)
            ink &= filled
    n, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    x, y, cw, ch, area = stats[:, 0], stats[:, 1], stats[:, 2], stats[:, 3], stats[:, 4]
    keep = (x > 0) & (y > 0) & (x + cw < w) & (y + ch < h) & (area >= 3)
    keep[0] = False
    side = np.maximum(cw, ch)
    if keep.any():  # screentone dots around a bubble whose box cuts through its outline
        keep &= side >= SPECK * side[keep].max()
    return keep[labels].astype(np.uint8)


def glyph_size(ink: np.ndarray) -> float:
    """Typical glyph size in pixels: the 80th percentile of the ink components' longer sides."""
    import cv2

    n, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    if n < 2:
        return 0.0
    sides = np.maximum(stats[1:, 2], stats[1:, 3])[stats[1:, 4] >= 4]
    return float(np.percentile(sides, 80)) if len(sides) else 0.0


def holds_text(gray: np.ndarray, box: Box) -> bool:
    """Does `box` of the grayscale page hold any text ink? (Strokes that run through the box,
    a bubble's outline and specks are not text.)"""
    ink = text_ink(gray, box)
    return ink is not None and int(ink.sum()) >= MIN_INK_PX


def straight_share(gray: np.ndarray, box: Box) -> float:
    """Share of the dark pixels of `box` that lie on long straight strokes (Hough segments at
    least STROKE_LENGTH x the box's shorter side, dashes joined): 1.0 for a box on a panel
    border or on speed lines, low for text and curved artwork."""
    import cv2

    ink = _dark(gray, box)
    if ink is None or not ink.any():
        return 0.0
    length = max(8, int(STROKE_LENGTH * min(ink.shape)))
    lines = cv2.HoughLinesP(ink * 255, 1, np.pi / 180, threshold=max(8, length // 2),
                            minLineLength=length, maxLineGap=max(3, length // 6))
    if lines is None:
        return 0.0
    cover = np.zeros_like(ink)
    for x0, y0, x1, y1 in lines.reshape(-1, 4):
        cv2.line(cover, (int(x0), int(y0)), (int(x1), int(y1)), 1, thickness=3)
    return float((ink & cover).sum()) / float(ink.sum())


def is_line_art(gray: np.ndarray, box: Box) -> bool:
    """A detection on lines, not text: its ink is mostly long straight strokes (a panel border,
    a dashed line, speed lines, hatching: STRAIGHT_SHARE or more) and no text is left once those
    strokes are set aside. Straight strokes alone do not decide: a rounded-box bubble's sides
    are straight strokes too, but it holds text."""
    return straight_share(gray, box) >= STRAIGHT_SHARE and not holds_text(gray, box)
