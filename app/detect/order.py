"""Reading order: manga (right to left) or comics/webtoons (left to right), top to bottom.

With the page's panels (app.detect.panels, in reading order) each box belongs to the panel it
overlaps most (the nearest one when it overlaps none); panels are read one after the other and
the boxes inside each by the column rule (`_order_columns`: the box reaching furthest right
first, down its column), or, in a panel the finder calls crowded (maybe several panels seen as
one), by the page-wide rule below. Without panels the whole page is one panel.

Boxes are grouped into row bands: a box joins a band when its vertical extent overlaps the
band's by at least `BAND_OVERLAP` of the shorter of the two; bands run top to bottom. Inside a
band, boxes whose horizontal extents overlap form a column (a tall bubble beside two stacked
small ones, two bubbles stacked inside one row); columns run right to left (rtl) or left to
right (ltr) and each column top to bottom. Ties break on coordinates, so the order is
deterministic for a given set of boxes.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence

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


def panel_of(box: Box, panels: Sequence[Box]) -> int:
    """Index of the panel `box` overlaps most (of two it lies in alike, the smaller: an inset
    panel, a panel inside an L-shaped one's box); the nearest panel (by centres) when it
    overlaps none."""
    def inter(p: Box) -> float:
        return _overlap(box[0], box[2], p[0], p[2]) * _overlap(box[1], box[3], p[1], p[3])

    def size(p: Box) -> float:
        return (p[2] - p[0]) * (p[3] - p[1])

    best = max(range(len(panels)), key=lambda k: (round(inter(panels[k]), 3), -size(panels[k]), -k))
    if inter(panels[best]) > 0:
        return best
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return min(range(len(panels)), key=lambda k: ((panels[k][0] + panels[k][2]) / 2 - cx) ** 2
               + ((panels[k][1] + panels[k][3]) / 2 - cy) ** 2)


def reading_order(boxes: Sequence[Box], order: str = "rtl", panels: Sequence[Box] | None = None,
                  crowded: Collection[int] = ()) -> list[int]:
    """Indices of `boxes` ((x0, y0, x1, y1) pixels) in reading order; `panels`: the page's panel
    boxes in reading order (None or empty: the page is one panel); `crowded`: indices of panels
    that may be several seen as one, whose boxes are read by the page-wide rule."""
    if order not in ORDERS:
        raise ValueError(f"reading order {order!r}: use rtl (manga) or ltr (comics, webtoons)")
    if panels:
        members: list[list[int]] = [[] for _ in panels]
        for i, box in enumerate(boxes):
            members[panel_of(box, panels)].append(i)
        inside = _order_columns if order == "rtl" else (lambda b: _order_within(b, rtl=False))
        result = []
        for k, idx in enumerate(members):
            rule = (lambda b: _order_within(b, order == "rtl")) if k in crowded else inside
            result.extend(idx[j] for j in rule([boxes[i] for i in idx]))
        return result
    return _order_within(boxes, order == "rtl")


def _order_columns(boxes: Sequence[Box]) -> list[int]:
    """Indices of the boxes of one manga panel in reading order: the box reaching furthest right
    first; of the boxes sharing its column (x-overlap >= COLUMN_OVERLAP of the narrower), the
    top one. Bubbles read like the columns of vertical text, right to left."""
    left = list(range(len(boxes)))
    result: list[int] = []
    while left:
        first = max(left, key=lambda i: (round(boxes[i][2], 3), -round(boxes[i][1], 3), -i))
        fx0, fx1 = boxes[first][0], boxes[first][2]
        column = [i for i in left if _overlap(boxes[i][0], boxes[i][2], fx0, fx1)
                  > COLUMN_OVERLAP * min(fx1 - fx0, boxes[i][2] - boxes[i][0])]
        pick = min(column or [first], key=lambda i: (round(boxes[i][1], 3), -round(boxes[i][2], 3), i))
        result.append(pick)
        left.remove(pick)
    return result


def _order_within(boxes: Sequence[Box], rtl: bool) -> list[int]:
    """Indices of `boxes` of one panel in reading order (rows bands, then columns)."""

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


def insertion_index(boxes: Sequence[Box], new: Box, order: str = "rtl", panels: Sequence[Box] | None = None) -> int:
    """Where a new box goes among `boxes` (kept in their current order, which the user may have
    changed): right after the box that precedes it in the computed reading order (first when
    none does). A box drawn by hand is numbered as a detected one would be."""
    ranked = reading_order([*boxes, new], order, panels)
    k = ranked.index(len(boxes))
    return 0 if k == 0 else ranked[k - 1] + 1
