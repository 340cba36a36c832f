"""Reading order: manga (right to left) or comics/webtoons (left to right), top to bottom.

Boxes are grouped into row bands: a box joins a band when its vertical extent overlaps the
band's by at least `BAND_OVERLAP` of the shorter of the two; bands run top to bottom. Inside a
band, boxes whose horizontal extents overlap form a column (a tall bubble beside two stacked
small ones, two bubbles stacked inside one row); columns run right to left (rtl) or left to
right (ltr) and each column top to bottom. Ties break on coordinates, so the order is
deterministic for a given set of boxes.
"""
from __future__ import annotations

from collections.abc import Sequence

Box = tuple[float, float, float, float]

ORDERS = ("rtl", "ltr")
BAND_OVERLAP = 0.5  # of the shorter height, to share a row band
COLUMN_OVERLAP = 0.5  # of the narrower width, to share a column inside a band


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def _group(indices: list[int], boxes: Sequence[Box], lo: int, hi: int, ratio: float) -> list[list[int]]:
    """Greedy 1-D grouping along one axis (lo/hi = 0/2 for x, 1/3 for y); indices pre-sorted."""
    groups: list[tuple[float, float, list[int]]] = []
    for i in indices:
        a0, a1 = boxes[i][lo], boxes[i][hi]
        for g, (g0, g1, members) in enumerate(groups):
            if _overlap(a0, a1, g0, g1) >= ratio * max(1e-6, min(a1 - a0, g1 - g0)):
                members.append(i)
                groups[g] = (min(g0, a0), max(g1, a1), members)
                break
        else:
            groups.append((a0, a1, [i]))
    return [members for _, _, members in groups]


def reading_order(boxes: Sequence[Box], order: str = "rtl") -> list[int]:
    """Indices of `boxes` ((x0, y0, x1, y1) pixels) in reading order."""
    if order not in ORDERS:
        raise ValueError(f"reading order {order!r}: use rtl (manga) or ltr (comics, webtoons)")
    rtl = order == "rtl"

    def across(i: int) -> float:  # reading position across a row: right edge first for rtl
        return -boxes[i][2] if rtl else boxes[i][0]

    by_top = sorted(range(len(boxes)), key=lambda i: (round(boxes[i][1], 3), round(across(i), 3), i))
    result: list[int] = []
    for band in _group(by_top, boxes, 1, 3, BAND_OVERLAP):
        by_across = sorted(band, key=lambda i: (round(across(i), 3), round(boxes[i][1], 3), i))
        columns = _group(by_across, boxes, 0, 2, COLUMN_OVERLAP)
        # columns in reading direction by their centre, each top to bottom
        def centre(col: list[int]) -> float:
            x0 = min(boxes[i][0] for i in col)
            x1 = max(boxes[i][2] for i in col)
            return -(x0 + x1) if rtl else (x0 + x1)

        for col in sorted(columns, key=lambda c: (round(centre(c), 3), min(c))):
            result.extend(sorted(col, key=lambda i: (round(boxes[i][1], 3), round(across(i), 3), i)))
    return result
