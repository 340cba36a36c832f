"""Boxes compared: intersection over union, and the one-to-one matching of two lists of boxes
(greedy from the highest IoU). Used where a page is read again (app.core.document.edits: a block keeps its
hand-set place) and where found blocks are scored against truth (app.core.reading.evaluation)."""
from __future__ import annotations

from collections.abc import Sequence

IOU_THRESHOLD = 0.5


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two (x0, y0, x1, y1) boxes (0 when either is empty)."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def match_boxes(truth: Sequence[Sequence[float]], found: Sequence[Sequence[float]],
                threshold: float = IOU_THRESHOLD) -> list[tuple[int, int]]:
    """One-to-one (truth index, found index) pairs, greedy from the highest IoU, each >= threshold."""
    pairs = sorted(((iou(t, f), ti, fi) for ti, t in enumerate(truth) for fi, f in enumerate(found)),
                   key=lambda p: (-p[0], p[1], p[2]))
    used_t: set[int] = set()
    used_f: set[int] = set()
    out = []
    for value, ti, fi in pairs:
        if value < threshold or value <= 0.0:
            break
        if ti not in used_t and fi not in used_f:
            used_t.add(ti)
            used_f.add(fi)
            out.append((ti, fi))
    return sorted(out)
