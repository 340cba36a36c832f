"""Panels of a page, in reading order, from its gutters (recursive XY cut).

Panels are separated by gutters: bands of paper that run straight across a part of the page.
The page is cut along every gutter that crosses its whole width (rows of panels), each row
along every gutter that crosses its whole height (panels side by side), and so on down to
pieces that no gutter crosses. Rows read top to bottom; panels in a row right to left ("rtl",
manga) or left to right ("ltr", comics and webtoons). Bubbles and text often straddle a gutter:
their boxes (`ignore`) count as paper while gutters are searched, so a bubble that overlaps two
panels does not hide the gutter between them.

A gutter line may hold a speck or two (GUTTER_SPECKS), not a panel's border. Where panels have
borders, only the paper runs with a border line on both sides are gutters (a white band inside a
panel, beside its border, is not); a page without borders is cut at its plain paper runs. A page
with no gutter is one panel. No Qt; numpy only.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Box = tuple[float, float, float, float]

PAPER_FRACTION = 0.85  # a pixel is paper when lighter than this x the page's paper level
GUTTER_SPECKS = 0.002  # a gutter line has at most this share (and at least 2 px) of non-paper
BORDER_INK = 0.5  # a border line: at least this share of a line beside the gutter is not paper
BORDER_REACH = 4  # px: how far from the gutter's edge the border line may be
MIN_GUTTER = 0.004  # of the page's longer side (at least 3 px)
MIN_PANEL = 0.04  # of the page's side: thinner pieces are no panels (a margin, a sliver)
MAX_DEPTH = 8


def paper_mask(gray: np.ndarray, ignore: Sequence[Box] = ()) -> np.ndarray:
    """(H, W) bool: paper-coloured pixels of the grayscale page, with the `ignore` boxes as paper."""
    level = float(np.percentile(gray[:: max(1, gray.shape[0] // 256), :: max(1, gray.shape[1] // 256)], 95))
    paper = gray >= PAPER_FRACTION * level
    h, w = paper.shape
    for x0, y0, x1, y1 in ignore:
        paper[max(0, int(y0)):min(h, int(np.ceil(y1))), max(0, int(x0)):min(w, int(np.ceil(x1)))] = True
    return paper


def _cuts(ink: np.ndarray, length: int, min_gutter: int, min_piece: int) -> list[tuple[int, int]]:
    """Pieces [(a, b)) between gutters along one axis; `ink[i]`: the share of line i (`length`
    pixels long) that is not paper. Margins (paper at either end) are trimmed."""
    full = ink * length <= max(2.0, GUTTER_SPECKS * length)
    content = np.flatnonzero(~full)
    if len(content) == 0:
        return []
    lo, hi = int(content[0]), int(content[-1]) + 1
    runs, i = [], lo
    while i < hi:
        if full[i]:
            j = i
            while j < hi and full[j]:
                j += 1
            if j - i >= min_gutter:
                runs.append((i, j))
            i = j
        else:
            i += 1

    def bordered(run: tuple[int, int]) -> bool:
        a, b = run
        return (ink[max(lo, a - BORDER_REACH):a].max(initial=0.0) >= BORDER_INK
                and ink[b:min(hi, b + BORDER_REACH)].max(initial=0.0) >= BORDER_INK)

    if any(bordered(r) for r in runs):
        runs = [r for r in runs if bordered(r)]
    pieces, start = [], lo
    for a, b in runs:
        if a - start >= min_piece and hi - b >= min_piece:
            pieces.append((start, a))
            start = b
    pieces.append((start, hi))
    return pieces


def find_panels(gray: np.ndarray, order: str = "rtl", ignore: Sequence[Box] = ()) -> list[Box]:
    """Panel boxes (x0, y0, x1, y1) of the grayscale page `gray` (H, W uint8) in reading order."""
    paper = paper_mask(gray, ignore)
    h, w = paper.shape
    min_gutter = max(3, int(MIN_GUTTER * max(h, w)))
    rtl = order == "rtl"
    out: list[Box] = []

    def split(x0: int, y0: int, x1: int, y1: int, depth: int) -> None:
        region = paper[y0:y1, x0:x1]
        rows = _cuts(1.0 - region.mean(axis=1), x1 - x0, min_gutter, int(MIN_PANEL * h))
        if len(rows) > 1 and depth < MAX_DEPTH:
            for a, b in rows:
                split(x0, y0 + a, x1, y0 + b, depth + 1)
            return
        if rows:  # trim to the content before looking for columns
            y0, y1 = y0 + rows[0][0], y0 + rows[0][1]
            region = paper[y0:y1, x0:x1]
        cols = _cuts(1.0 - region.mean(axis=0), y1 - y0, min_gutter, int(MIN_PANEL * w))
        if len(cols) > 1 and depth < MAX_DEPTH:
            for a, b in (reversed(cols) if rtl else cols):
                split(x0 + a, y0, x0 + b, y1, depth + 1)
            return
        if cols:
            x0, x1 = x0 + cols[0][0], x0 + cols[0][1]
        if x1 > x0 and y1 > y0:
            out.append((float(x0), float(y0), float(x1), float(y1)))

    split(0, 0, w, h, 0)
    return out or [(0.0, 0.0, float(w), float(h))]
