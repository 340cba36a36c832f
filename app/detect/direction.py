"""Writing direction of a block from its ink: columns (vertical) or rows (horizontal).

A round bubble can hold vertical text, so the box's shape is a poor guide. Inside the box the
text's own layout decides:

1. The text's ink (app.detect.ink.text_ink): dark pixels of the box inside the bubble, without
   what touches the box's edge (the bubble's outline, artwork around it).
2. The glyph size `s`: the longer side of the ink components, the 60th percentile weighted by
   their ink (GLYPH_SHARE; most kana and kanji are one component that spans most of the em;
   screentone dots and dakuten weigh little). Specks far from every glyph (screentone dots
   inside the box) are set aside. A text line is at least one em thick, so where the thinner
   of the two median strip thicknesses (step 3) is larger than `s` (kanji made of several
   components: 級, 明), it is the em and the strips are cut again with it.
3. Strips: cutting the ink along empty columns gives candidate text columns, along empty rows
   candidate text lines (gaps narrower than GAP_MERGE x s are parts of one glyph, not gaps).
4. The decision:
   - strips across x only: columns if they are longer than LINE_MIN glyphs and not much wider
     than a glyph (COLUMN_MAX), else one line of separate characters;
   - strips across y only: the same test the other way round;
   - strips both ways (a grid of characters): the longer strips and the wider gaps (between
     lines, wider than between characters) decide;
   - no strips at all (one glyph, or glyphs touching): nothing tells, so manga's default,
     vertical, unless the ink is clearly wider than tall (BLOB_WIDE). A single character has
     no direction of its own: the synthetic truth flags it at random, so the accuracy on
     blocks of two or more characters is the one that measures the rule (docs/accuracy.md).
   None when the box holds too little ink to tell: the caller falls back to the box's shape.

Measured on synthetic pages (bench/layout_accuracy.py): see docs/accuracy.md. No Qt; numpy + OpenCV.
"""
from __future__ import annotations

import math

import numpy as np

from app.detect.ink import MIN_INK_PX, text_ink

Box = tuple[float, float, float, float]

PROFILE_FLOOR = 0.05  # x s: a column/row with fewer ink pixels is empty (thin art lines crossing)
GAP_MERGE = 0.12  # x s: narrower gaps are inside a glyph
LINE_MIN = 1.8  # glyphs: a strip at least this long is a line of text
COLUMN_MAX = 2.5  # x s: a text line is not much thicker than a glyph
GRID_GAP_WEIGHT = 1.5  # weight of the gap ratio against the length ratio in a grid
BLOB_WIDE = 1.2  # one glyph (or touching glyphs): vertical, manga's default, unless this much wider than tall
GLYPH_SHARE = 0.6  # the glyph size: this share of the ink lies in components no larger
SPECK_SIDE = 0.3  # x s: a component this small ...
SPECK_AWAY = 0.5  # x s: ... this far from every component of at least half a glyph is a speck, not text


def _strips(ink: np.ndarray, axis: int, s: float) -> tuple[int, float, float, float]:
    """Cut `ink` along empty columns (axis 0) or rows (axis 1): (number of strips, median strip
    thickness, mean strip length (the ink's extent along the strip), median gap)."""
    profile = ink.sum(axis=axis)
    on = profile > max(1.0, PROFILE_FLOOR * s)
    idx = np.flatnonzero(on)
    if len(idx) == 0:
        return 0, 0.0, 0.0, 0.0
    strips = [[int(idx[0]), int(idx[0]) + 1]]
    for i in idx[1:]:
        if i - strips[-1][1] < max(2.0, GAP_MERGE * s):
            strips[-1][1] = int(i) + 1
        else:
            strips.append([int(i), int(i) + 1])
    lengths = []
    for a, b in strips:
        part = ink[:, a:b] if axis == 0 else ink[a:b, :]
        along = np.flatnonzero(part.sum(axis=1 - axis))
        lengths.append(float(along[-1] - along[0] + 1) if len(along) else 0.0)
    gaps = [strips[i + 1][0] - strips[i][1] for i in range(len(strips) - 1)]
    return (len(strips), float(np.median([b - a for a, b in strips])), float(np.mean(lengths)),
            float(np.median(gaps)) if gaps else 0.0)


def _glyph_size(stats: np.ndarray) -> float:
    """The components' longer side below which GLYPH_SHARE of the ink lies (0 without ink);
    `stats`: (n, 5) x, y, w, h, area of the ink components, background left out."""
    if len(stats) == 0:
        return 0.0
    side = np.maximum(stats[:, 2], stats[:, 3])
    order = np.argsort(side, kind="stable")
    weight = np.cumsum(stats[order, 4]) / stats[:, 4].sum()
    return float(side[order][min(len(order) - 1, int(np.searchsorted(weight, GLYPH_SHARE)))])


def _without_specks(labels: np.ndarray, stats: np.ndarray, s: float) -> np.ndarray:
    """The ink (uint8 mask from the component `labels` and their `stats`, background row 0
    included) without components smaller than SPECK_SIDE x s lying farther than SPECK_AWAY x s
    from every component of half a glyph or more (screentone dots, not a dakuten or a period)."""
    side = np.maximum(stats[:, 2], stats[:, 3])
    keep = np.ones(len(stats), dtype=bool)
    keep[0] = False
    big = np.flatnonzero(side[1:] >= 0.5 * s) + 1
    small = np.flatnonzero(side[1:] < SPECK_SIDE * s) + 1
    if len(big) and len(small):
        x0, y0 = stats[:, 0], stats[:, 1]
        x1, y1 = x0 + stats[:, 2], y0 + stats[:, 3]
        for i in small:
            dx = np.maximum(0, np.maximum(x0[big] - x1[i], x0[i] - x1[big]))
            dy = np.maximum(0, np.maximum(y0[big] - y1[i], y0[i] - y1[big]))
            keep[i] = float(np.min(np.hypot(dx, dy))) <= SPECK_AWAY * s
    return keep[labels].astype(np.uint8)


def ink_is_vertical(ink: np.ndarray) -> bool | None:
    """True for columns, False for rows, None when `ink` (a text mask) holds too little to tell."""
    ys, xs = np.nonzero(ink)
    if len(xs) < MIN_INK_PX:
        return None
    import cv2

    _, labels, stats, _ = cv2.connectedComponentsWithStats(np.ascontiguousarray(ink, dtype=np.uint8), connectivity=8)
    s = _glyph_size(stats[1:])
    if s <= 0:
        return None
    ink = _without_specks(labels, stats, s)
    ys, xs = np.nonzero(ink)
    ink = ink[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    nx, tx, lx, gx = _strips(ink, 0, s)  # candidate columns
    ny, ty, ly, gy = _strips(ink, 1, s)  # candidate lines
    if min(tx, ty) > s:  # glyphs of several components: the em is the line's thickness
        s = min(tx, ty)
        nx, tx, lx, gx = _strips(ink, 0, s)
        ny, ty, ly, gy = _strips(ink, 1, s)
    if nx >= 2 and ny < 2:
        return lx / s >= LINE_MIN and tx <= COLUMN_MAX * s
    if ny >= 2 and nx < 2:
        return not (ly / s >= LINE_MIN and ty <= COLUMN_MAX * s)
    if nx < 2 and ny < 2:
        return ink.shape[1] <= BLOB_WIDE * ink.shape[0]
    evidence = math.log(max(lx, 1.0) / max(ly, 1.0)) + GRID_GAP_WEIGHT * math.log((gx + 1.0) / (gy + 1.0))
    return evidence > 0


def writing_direction(gray: np.ndarray, box: Box) -> bool | None:
    """Is the text in `box` ((x0, y0, x1, y1) pixels of the grayscale page `gray`) vertical?
    None when the box holds too little ink to tell."""
    ink = text_ink(gray, box)
    return None if ink is None else ink_is_vertical(ink)
