"""The ink of the text in a block: what the writing-direction and false-block rules read.

`text_ink` keeps the pixels of the text's colour (Otsu: the dark ones; the light ones when the
ground around the text, the box's outer ring, is dark) that belong to its text: inside the bubble
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
DARKEST_GAP = 50  # grey levels between the text's black and a tone's grey, for is_line_art to split them,
TONE_SHARE = 0.2  # when the grey covers this share of the box (a tone, not the grey edges of strokes)
LIGHT_GROUND = 0.75  # a box whose outer ring is this dark may hold light text on a dark ground ...
HALO_NEAR = 0.7  # ... unless this share of its light pixels lies within HALO_PX of dark ink they
HALO_PX = 4  # enclose (white halos around black glyphs)
SPECK = 0.15  # components smaller than this x the largest one are screentone dots or specks


def _crop(gray: np.ndarray, box: Box) -> np.ndarray:
    h, w = gray.shape[:2]
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    return gray[max(0, y0):min(h, y1), max(0, x0):min(w, x1)]


def _dark(gray: np.ndarray, box: Box) -> np.ndarray | None:
    """(h, w) uint8 mask of the pixels of `box` in the text's colour: the dark ones (Otsu,
    never lighter than 160 of 255), or the light ones when the ground around the text is dark:
    the box's outer ring (LIGHT_GROUND of it or more) and most of its middle (white text on a
    night sky, a shadow, a black caption box; a white bubble on dark art has a light middle)
    and the dark its light pixels enclose is no glyphs (black text in white halos keeps its
    black); None for a box too small to hold text."""
    import cv2

    crop = np.ascontiguousarray(_crop(gray, box), dtype=np.uint8)
    if crop.size == 0 or min(crop.shape) < 4:
        return None
    thresh, _ = cv2.threshold(crop, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    dark = crop <= min(thresh, 160)
    h, w = dark.shape
    ring = np.concatenate([dark[0], dark[-1], dark[1:-1, 0], dark[1:-1, -1]])
    dark = dark.astype(np.uint8)
    if ring.mean() >= LIGHT_GROUND and dark[h // 4:h - h // 4, w // 4:w - w // 4].mean() >= 0.5:
        light = (crop > thresh).astype(np.uint8)
        if not _in_halos(light):
            return light
    return dark


def _in_halos(light: np.ndarray) -> bool:
    """Are the light pixels of a box white halos around black glyphs (black text printed in a
    halo on a dark ground) rather than light glyphs? A halo is a thin band around the dark ink
    it encloses: HALO_NEAR of the light pixels or more lie within HALO_PX of enclosed dark
    pixels; a light glyph's pixels lie mostly beside the ground, its loops (口, の) enclose little."""
    import cv2

    n, labels = cv2.connectedComponents(1 - light, connectivity=4)
    edge = np.unique(np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]]))
    enclosed = ((labels > 0) & ~np.isin(labels, edge)).astype(np.uint8)
    if not enclosed.any():
        return False
    k = 2 * HALO_PX + 1
    near = cv2.dilate(enclosed, np.ones((k, k), np.uint8))
    return float((light & near).sum()) >= HALO_NEAR * max(1.0, float(light.sum()))


def text_ink(gray: np.ndarray, box: Box) -> np.ndarray | None:
    """(h, w) uint8 mask (1 = ink of the text) of `box` in the grayscale page `gray` (H, W uint8);
    None when the box is too small to hold text."""
    return _text_of(_dark(gray, box))


def _text_of(ink: np.ndarray | None) -> np.ndarray | None:
    """text_ink's rule on a mask of the box's pixels in the text's colour."""
    import cv2

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


def _darkest(gray: np.ndarray, box: Box) -> np.ndarray | None:
    """(h, w) uint8 mask of the darkest level of `box` when its dark pixels fall in two levels
    (Otsu again over them, DARKEST_GAP apart or more) and the grey one covers TONE_SHARE of the
    box or more: black text over a grey tone of lines or a grid, whose lines the first split
    counts as ink with the text; else None."""
    import cv2

    crop = np.ascontiguousarray(_crop(gray, box), dtype=np.uint8)
    if crop.size == 0 or min(crop.shape) < 4:
        return None
    first, _ = cv2.threshold(crop, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    dark = crop[crop <= min(first, 160)]
    if dark.size < MIN_INK_PX:
        return None
    second, _ = cv2.threshold(np.ascontiguousarray(dark.reshape(1, -1)), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    if second > min(first, 160) - DARKEST_GAP or (dark > second).sum() < TONE_SHARE * crop.size:
        return None
    return (crop <= second).astype(np.uint8)


def is_line_art(gray: np.ndarray, box: Box) -> bool:
    """A detection on lines, not text: its ink is mostly long straight strokes (a panel border,
    a dashed line, speed lines, hatching: STRAIGHT_SHARE or more) and no text is left once those
    strokes are set aside, nor in the darkest level of its ink (black text on a grey tone of
    lines). Straight strokes alone do not decide: a rounded-box bubble's sides are straight
    strokes too, but it holds text."""
    if straight_share(gray, box) < STRAIGHT_SHARE or holds_text(gray, box):
        return False
    text = _text_of(_darkest(gray, box))
    return text is None or int(text.sum()) < MIN_INK_PX
