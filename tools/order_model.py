"""A learned reading order: a small pairwise "which comes first" model over the blocks' geometry.

For two blocks a and b of a page the model gives P(a is read before b) from features of the
pair (`pair_features`): where one lies from the other (centres, right edges, tops; wholly above,
wholly to the right; sharing a column or a row), the panels the layout rules put them in (the
same panel, which panel first), and the rules' own verdicts (the panel-by-panel order, the
page-wide order), with x mirrored for right-to-left reading. A block's score is the sum of
its chances of coming before each other block; the blocks are read by score (ties: the rules'
order).

The model is a two-layer perceptron (HIDDEN units, tanh), trained by tools/train_order.py
--order on generated pages only (a JSON file of a few hundred numbers); it runs in numpy, well
under a millisecond a page. The app does not use it: measured on the two annotated books it was
never trained on (bench/real_pages.py --learned MODEL), it reads fewer pages in the annotators'
order than the rules do, on each book (docs/accuracy.md). It stays here, with its trainer, to
be measured again when the rules or the synthetic pages change. No Qt.
"""
from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

Box = tuple[float, float, float, float]

HIDDEN = 12
FEATURES = ("dcx", "dcy", "dright", "dtop", "above", "right_of", "same_column_higher", "same_row_righter",
            "panel_first", "same_panel", "rules_first", "pagewide_first", "rules_gap")


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def _sign(v: float) -> float:
    return float(np.sign(v))


def pair_features(a: Box, b: Box, size: tuple[float, float], panel_a: int, panel_b: int,
                  rule_a: int, rule_b: int, wide_a: int, wide_b: int, n: int) -> list[float]:
    """The features of the pair (a, b) (FEATURES), boxes already mirrored for right-to-left
    reading (x grows the way the eye goes); panel_*, rule_*, wide_*: the blocks' panel rank, their
    places in the rules' order and in the page-wide order; n: the page's blocks."""
    w, h = size
    sign = _sign
    xo = _overlap(a[0], a[2], b[0], b[2]) / max(1e-6, min(a[2] - a[0], b[2] - b[0]))
    yo = _overlap(a[1], a[3], b[1], b[3]) / max(1e-6, min(a[3] - a[1], b[3] - b[1]))
    return [
        ((a[0] + a[2]) - (b[0] + b[2])) / (2 * w),
        ((a[1] + a[3]) - (b[1] + b[3])) / (2 * h),
        (a[0] - b[0]) / w,  # mirrored: x0 is the edge read first
        (a[1] - b[1]) / h,
        float(a[3] <= b[1]) - float(b[3] <= a[1]),
        float(a[2] <= b[0]) - float(b[2] <= a[0]),
        xo * sign(b[1] - a[1]),
        yo * sign(b[0] - a[0]),
        sign(panel_b - panel_a),
        float(panel_a == panel_b) * sign(rule_b - rule_a),
        sign(rule_b - rule_a),
        sign(wide_b - wide_a),
        (rule_b - rule_a) / max(1, n),
    ]


@functools.lru_cache(maxsize=4)
def load_model(path: str) -> dict:
    """A model written by tools/train_order.py --order: {"w1", "b1", "w2"} as numpy arrays."""
    file = Path(path)
    raw = json.loads(file.read_text(encoding="utf-8"))
    model = {k: np.asarray(raw[k], dtype=np.float64) for k in ("w1", "b1", "w2")}
    model["columns"] = np.asarray([FEATURES.index(f) for f in raw.get("features", FEATURES)])
    return model


def before(x: np.ndarray, model: dict) -> np.ndarray:
    """P(a before b) for rows of pair features `x` (k, len(FEATURES)); antisymmetric by
    construction: the score of (b, a) is minus that of (a, b). A model names the features it
    was trained on ("features"; default all)."""
    if "columns" in model:  # a model trained on some of the features
        x = x[:, model["columns"]]

    def score(f: np.ndarray) -> np.ndarray:
        return np.tanh(f @ model["w1"] + model["b1"]) @ model["w2"]
    return 1 / (1 + np.exp(-(score(x) - score(-x))))


def mirrored(boxes: Sequence[Box], width: float, order: str) -> list[Box]:
    """The boxes with x mirrored for right-to-left reading (the eye's way is +x either way)."""
    if order != "rtl":
        return [tuple(b) for b in boxes]
    return [(width - b[2], b[1], width - b[0], b[3]) for b in boxes]


def page_pairs(boxes: Sequence[Box], size: tuple[float, float], order: str, panel_rank: Sequence[int],
               rules: Sequence[int], pagewide: Sequence[int]) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """(features of every ordered pair i < j of the page's blocks, the pairs); `rules`,
    `pagewide`: the blocks' places in those orders; `panel_rank`: each block's panel's rank."""
    m = mirrored(boxes, size[0], order)
    n = len(boxes)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    x = np.array([pair_features(m[i], m[j], size, panel_rank[i], panel_rank[j], rules[i], rules[j],
                                pagewide[i], pagewide[j], n) for i, j in pairs], dtype=np.float64)
    return x.reshape(len(pairs), len(FEATURES)), pairs


def learned_order(boxes: Sequence[Box], size: tuple[float, float], order: str, panel_rank: Sequence[int],
                  rules: Sequence[int], pagewide: Sequence[int], model: dict) -> list[int]:
    """Indices of `boxes` in the model's reading order (see page_pairs for the arguments)."""
    n = len(boxes)
    if n < 2:
        return list(range(n))
    x, pairs = page_pairs(boxes, size, order, panel_rank, rules, pagewide)
    p = before(x, model)
    score = np.zeros(n)
    for (i, j), pij in zip(pairs, p, strict=True):
        score[i] += pij
        score[j] += 1 - pij
    return sorted(range(n), key=lambda i: (-round(float(score[i]), 6), rules[i]))
