"""How sure the reading order of a page is: a confidence in [0, 1] and its doubts, in words.

The order comes out of rules (app.detect.panels, app.detect.order) that are sometimes wrong; the
page knows where it leaned on a guess. Each sign of a guess is measured on the page (`signs`)
and has a severity (`SEVERITY`); the confidence is 1 minus the gravest. Three signs say alone
that the order is a guess (severity 0.5 or more: the page is marked "check the order", below
CHECK_BELOW):

- inside a panel, the two rules a reader might follow, by columns (right first: the rule the
  app applies) and by rows (top first), give different orders. A page composed for reading
  lays each panel's bubbles along its reading path, where both agree; where they disagree
  the blocks could be read either way, or the panel is two panels seen as one;
- the panel finder was not sure (the page read by the page-wide rule), on a page with three
  blocks or more;
- a panel holds CROWDED text boxes or more (likely several panels seen as one).

The others lower the confidence without marking the page: close calls between neighbours (two
blocks whose columns overlap by about the share, COLUMN_OVERLAP, that decides whether they
share one), a block read before one wholly above it, a block lying across two panels, text in
no panel, a panel holding many blocks, panels that reorder the page-wide order much.

Measured against the annotators' order of real books in bench/real_pages.py: of the pages out of
order, the share marked; of the marked, the share out of order (docs/accuracy.md). No Qt.
"""
from __future__ import annotations

from collections.abc import Sequence

Box = tuple[float, float, float, float]

CHECK_BELOW = 0.5  # a page whose order confidence is below this is marked "check the order"
# severity of each sign at its full measure (signs run from 0 to 1; "blocks" is not a doubt)
SEVERITY = {"rows_or_columns": (0.5, 0.5), "unsure": (0.6, 0.0), "crowded": (0.55, 0.0), "edges": (0.0, 0.3),
            "higher_later": (0.0, 0.15), "straddling": (0.0, 0.2), "loose": (0.0, 0.2), "busiest": (0.0, 0.3),
            "panels_moved": (0.0, 0.4)}  # (severity as soon as the sign shows, more at its full measure)
EDGE = (0.3, 0.7)  # a column overlap in this band (around COLUMN_OVERLAP) is a close call
STRADDLE = 0.25  # a block with this share of it in a second panel lies across the two
DOUBT_WORDS = {
    "unsure": "the panels were not found for sure (read by the page-wide rule)",
    "crowded": "a panel holds many text boxes (maybe several panels seen as one)",
    "busiest": "a panel holds many text boxes (maybe several panels seen as one)",
    "edges": "close calls between neighbours (columns that almost overlap)",
    "higher_later": "a block is read before one above it",
    "straddling": "a block lies across two panels",
    "loose": "text lies outside every panel",
    "panels_moved": "the order rests on the panels found",
    "rows_or_columns": "inside a panel, reading by columns and by rows disagree",
}


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def _area(b: Box) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def _tau(ranks: list[int]) -> float:
    n = len(ranks)
    if n < 2:
        return 1.0
    s = sum((1 if ranks[i] < ranks[j] else -1) for i in range(n) for j in range(i + 1, n) if ranks[i] != ranks[j])
    return s / (n * (n - 1) / 2)


def _span(boxes: Sequence[Box]) -> Box:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def signs(boxes: Sequence[Box], order: str, layout=None, with_page: bool = True) -> dict[str, float]:
    """The page's signs of a guessed order (module docstring), from its blocks' `boxes` in the
    order read and the panel `layout` found (app.detect.panels.PanelLayout, None without the page)."""
    from app.detect.order import COLUMN_OVERLAP, panel_of, reading_order

    n = len(boxes)
    sure = layout is not None and layout.sure
    panels = list(layout.panels) if sure else []
    members: list[list[int]] = [[] for _ in (panels or [None])]
    for i, b in enumerate(boxes):
        members[panel_of(b, panels) if panels else 0].append(i)
    edges = 0
    for m in members:
        for x, i in enumerate(m):
            for j in m[x + 1:]:
                a, b = boxes[i], boxes[j]
                share = _overlap(a[0], a[2], b[0], b[2]) / max(1e-6, min(a[2] - a[0], b[2] - b[0]))
                edges += EDGE[0] < share < EDGE[1] and abs(share - COLUMN_OVERLAP) < 0.2
    higher_later = sum(boxes[k + 1][3] <= boxes[k][1] for k in range(n - 1))
    straddling = 0
    for b in boxes if panels else ():
        shares = sorted((_overlap(b[0], b[2], p[0], p[2]) * _overlap(b[1], b[3], p[1], p[3]) / max(1e-6, _area(b))
                         for p in panels), reverse=True)
        straddling += len(shares) > 1 and shares[1] >= STRADDLE
    plain = reading_order(boxes, order)
    disagree = 0.0
    for m in members:
        if len(m) > 1:
            inside = [boxes[i] for i in m]
            columns, rows = reading_order(inside, order, [_span(inside)]), reading_order(inside, order)
            disagree += (1.0 - _tau([rows.index(i) for i in columns])) / 2.0
    return {
        "unsure": float(with_page and not sure and n >= 3),
        "crowded": float(bool(layout.crowded) if sure else 0),
        "busiest": max(0.0, max(len(m) for m in members) - 2.0) / 4.0,
        "edges": min(3.0, float(edges)) / 3.0,
        "higher_later": min(3.0, float(higher_later)) / 3.0,
        "straddling": min(2.0, float(straddling)) / 2.0,
        "loose": min(2.0, float(len(layout.loose) if sure else 0)) / 2.0,
        "panels_moved": (1.0 - _tau(plain)) / 2.0,
        "rows_or_columns": min(1.0, disagree),
    }


def order_confidence(found: dict[str, float]) -> tuple[float, tuple[str, ...]]:
    """(confidence in [0, 1], doubts in words, the gravest first) of a page with these `signs`."""
    graves = sorted(((base + scale * min(1.0, value), k) for k, (base, scale) in SEVERITY.items()
                     if (value := found.get(k, 0.0)) > 0), reverse=True)
    confidence = round(1.0 - max((g for g, _ in graves), default=0.0), 4)
    doubts = tuple(dict.fromkeys(DOUBT_WORDS[k] for g, k in graves if g >= 0.1))
    return confidence, doubts


def needs_check(confidence: float) -> bool:
    """Is the order of a page of this confidence worth checking by eye ("check the order")?"""
    return confidence < CHECK_BELOW
