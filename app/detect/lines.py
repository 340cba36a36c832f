"""Where the lines of a block's text lie, from its ink: the columns of vertical text (right to
left) or the rows of horizontal text (top to bottom).

`ink_lines(gray, box, vertical)` cuts the text's ink (app.detect.ink.text_ink, read on the box
grown by a small margin so that glyphs touching a tight detector box are kept) along empty
columns (vertical text) or empty rows (horizontal text). Each strip is one line; its rectangle is
the strip across and the extent of its ink along it. Strips much thinner than the thickest one
(ruby beside the text, specks) are left out. The exports that place selectable text over the
glyphs (app.core.exports.mokuro) read these rectangles. No Qt; numpy + OpenCV.
"""
from __future__ import annotations

import numpy as np

from app.detect.ink import MIN_INK_PX, glyph_size, text_ink

Box = tuple[float, float, float, float]

MARGIN = 0.08  # x the box's shorter side (at least 3 px): the ink is read on the box grown by this
GAP_MERGE = 0.15  # x the glyph size: narrower gaps between strips are inside one line
THIN = 0.45  # x the thickest strip: thinner strips are ruby or specks, not lines


def _strips(profile: np.ndarray, merge: float) -> list[list[int]]:
    idx = np.flatnonzero(profile > 0)
    if len(idx) == 0:
        return []
    strips = [[int(idx[0]), int(idx[0]) + 1]]
    for i in idx[1:]:
        if i - strips[-1][1] < merge:
            strips[-1][1] = int(i) + 1
        else:
            strips.append([int(i), int(i) + 1])
    return strips


def ink_lines(gray: np.ndarray, box: Box, vertical: bool) -> tuple[list[Box], float] | None:
    """The line rectangles (x0, y0, x1, y1 in page pixels, in reading order: columns right to
    left, rows top to bottom) of the text in `box` of the grayscale page `gray`, and the glyph
    size in pixels; None when the box holds too little ink to tell."""
    h, w = gray.shape[:2]
    x0, y0, x1, y1 = box
    m = max(3.0, MARGIN * min(x1 - x0, y1 - y0))
    grown = (max(0.0, x0 - m), max(0.0, y0 - m), min(float(w), x1 + m), min(float(h), y1 + m))
    ink = text_ink(gray, grown)
    if ink is None or int(ink.sum()) < MIN_INK_PX:
        return None
    s = glyph_size(ink)
    if s <= 0:
        return None
    gx, gy = int(round(grown[0])), int(round(grown[1]))
    across = 0 if vertical else 1  # columns: the profile over x (summed down axis 0)
    strips = _strips(ink.sum(axis=across), max(2.0, GAP_MERGE * s))
    if not strips:
        return None
    thickest = max(b - a for a, b in strips)
    lines = []
    for a, b in strips:
        if b - a < THIN * thickest:
            continue
        part = ink[:, a:b] if vertical else ink[a:b, :]
        along = np.flatnonzero(part.sum(axis=1 if vertical else 0))
        if len(along) == 0:
            continue
        lo, hi = int(along[0]), int(along[-1]) + 1
        rect = (gx + a, gy + lo, gx + b, gy + hi) if vertical else (gx + lo, gy + a, gx + hi, gy + b)
        # clipped to the block's own box: the margin only keeps glyphs that touch its edge
        rect = (max(x0, rect[0]), max(y0, rect[1]), min(x1, rect[2]), min(y1, rect[3]))
        if rect[2] > rect[0] and rect[3] > rect[1]:
            lines.append(tuple(float(v) for v in rect))
    if not lines:
        return None
    if vertical:
        lines.sort(key=lambda r: -r[0])  # right to left
    else:
        lines.sort(key=lambda r: r[1])  # top to bottom
    return lines, float(s)
