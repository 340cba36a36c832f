"""How sure the reading order of a page is: a confidence in [0, 1] and its doubts, in words.

The order comes out of rules (app.detect.panels, app.detect.order) that are sometimes wrong; the
page knows where it leaned on a guess. Each sign of a guess is a feature of the page (`signs`):

- the panel finder was not sure (the page read by the page-wide rule), on a page with text;
- a panel holds many text boxes (CROWDED or near it: likely several panels seen as one);
- close calls inside a panel: two blocks whose columns overlap by about the share
  (COLUMN_OVERLAP) that decides whether they share a column, so a few pixels flip their order;
- a block read before one lying wholly above it (the column rule's "right first" against "top
  first");
- a block lying across two panels, text in no panel;
- how much the panels changed the page-wide order (the order rests on the panels found);
- inside a panel, the column rule (right first) and the row rule (top first) disagree: the
  blocks could be read either way, or the panel is two panels seen as one.

The signs are weighed by a logistic model, P(out of order) = sigmoid(bias + sum of weight x
sign), fitted on generated pages only (tools/train_order.py, never on published pages) and
shipped as resources/layout/order-confidence.json; the confidence is 1 - P. A page whose
confidence is below the file's `check_below` gets the "check the order" mark. Measured against
the annotators' order of real books in bench/real_pages.py (docs/accuracy.md). No Qt; numpy.
"""
from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from pathlib import Path

from app.paths import resource_path

Box = tuple[float, float, float, float]

MODEL = "layout/order-confidence.json"
EDGE = (0.3, 0.7)  # a column overlap in this band (around COLUMN_OVERLAP) is a close call
STRADDLE = 0.25  # a block with this share of it in a second panel lies across the two
SIGNS = ("unsure", "crowded", "busiest", "edges", "higher_later", "straddling", "loose", "panels_moved",
         "rows_or_columns", "blocks")
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
        "crowded": float(min(2, len(layout.crowded) if sure else 0)),
        "busiest": max(0.0, max(len(m) for m in members) - 2.0) / 4.0,
        "edges": min(3.0, float(edges)) / 3.0,
        "higher_later": min(3.0, float(higher_later)) / 3.0,
        "straddling": min(2.0, float(straddling)) / 2.0,
        "loose": min(2.0, float(len(layout.loose) if sure else 0)) / 2.0,
        "panels_moved": (1.0 - _tau(plain)) / 2.0,
        "rows_or_columns": min(1.0, disagree),
        "blocks": math.log(max(1, n)),
    }


@functools.lru_cache(maxsize=4)
def load_model(path: str | None = None) -> dict:
    """The shipped (or given) confidence model: {"bias", "weights": {sign: w}, "check_below"}."""
    file = Path(path) if path else resource_path(MODEL)
    return json.loads(file.read_text(encoding="utf-8"))


def order_confidence(found: dict[str, float], model: dict | None = None) -> tuple[float, tuple[str, ...]]:
    """(confidence in [0, 1], doubts in words, the weightiest first) of a page with these `signs`."""
    model = model or load_model()
    weights = model["weights"]
    z = model["bias"] + sum(weights.get(k, 0.0) * v for k, v in found.items())
    confidence = round(1.0 - 1.0 / (1.0 + math.exp(-z)), 4)
    pushes = sorted(((weights.get(k, 0.0) * v, k) for k, v in found.items() if k in DOUBT_WORDS), reverse=True)
    doubts = tuple(dict.fromkeys(DOUBT_WORDS[k] for w, k in pushes if w > 0.25))
    return confidence, doubts


def needs_check(confidence: float, model: dict | None = None) -> bool:
    """Is the order of a page of this confidence worth checking by eye ("check the order")?"""
    return confidence < (model or load_model())["check_below"]
