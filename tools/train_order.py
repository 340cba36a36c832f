"""Fit the reading order's page confidence (app.detect.confidence) and the learned pairwise
order (app.detect.order_model) on generated pages only.

Draws synthetic pages (tools.synth: the classic grid pages and the layouts real books have,
`--layout mixed`), reads each with the app's layout rules (the truth's text boxes fed in as a
text detector's, app.detect.blocks.read_page), notes the page's signs of a guessed order and
whether the order came out exactly the truth's, and fits a logistic model P(out of order) over
the signs (numpy, L2). `check_below` is set so that MARK_SHARE of the training pages are marked.
With --order, the same pages train the pairwise "which comes first" model instead: every pair
of blocks the rules read, labelled by the truth's order, its features as the app computes them
(app.detect.order_model.page_pairs); a two-layer perceptron, Adam, written to
resources/layout/order-model.json. Never trained on published pages: the books measure both
(bench/real_pages.py).

    python tools/train_order.py [--pages 300] [--seeds 3001,3002] [--out FILE]
    python tools/train_order.py --order [--pages 300] [--seeds 3001,3002] [--out FILE]

About a second a page on a shared CPU.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from app.detect import Detection  # noqa: E402
from app.detect.blocks import gray_page, intersection, read_page  # noqa: E402
from app.detect.confidence import SIGNS  # noqa: E402

OUT = ROOT / "resources" / "layout" / "order-confidence.json"
MARK_SHARE = 0.15
L2 = 0.01


def exact_order(truth: list[tuple], regions) -> bool:
    """Do the blocks cover the truth's boxes (half of each or more) in the truth's order?"""
    placed = []
    for ti, t in enumerate(truth):
        a = max(1e-6, (t[2] - t[0]) * (t[3] - t[1]))
        cover = [k for k, r in enumerate(regions) if intersection(t, r.box) >= 0.5 * a]
        if not cover:
            return False
        placed.append((cover[0], ti))
    return [ti for _, ti in sorted(placed)] == list(range(len(truth)))


def truth_places(truth: list[tuple], regions) -> list[int | None]:
    """For each block read, the truth's place of the first box it covers (None: none)."""
    out = []
    for r in regions:
        covered = [ti for ti, t in enumerate(truth)
                   if intersection(t, r.box) >= 0.5 * max(1e-6, (t[2] - t[0]) * (t[3] - t[1]))]
        out.append(min(covered) if covered else None)
    return out


def pair_rows(reading, size, truth: list[tuple]) -> tuple[np.ndarray, np.ndarray]:
    """(pair features, labels: 1 when the first of the pair comes first in the truth) of one page."""
    from app.detect.order import panel_of, reading_order
    from app.detect.order_model import FEATURES, page_pairs

    boxes = [r.box for r in reading.regions]
    wide = reading_order(boxes, "rtl")
    pagewide = [wide.index(i) for i in range(len(boxes))]
    ranks = [panel_of(b, reading.panels) for b in boxes] if reading.panels else [0] * len(boxes)
    x, pairs = page_pairs(boxes, size, "rtl", ranks, list(range(len(boxes))), pagewide)
    places = truth_places(truth, reading.regions)
    keep = [k for k, (i, j) in enumerate(pairs) if places[i] is not None and places[j] is not None and places[i] != places[j]]
    y = np.array([float(places[pairs[k][0]] < places[pairs[k][1]]) for k in keep])
    return x[keep].reshape(len(keep), len(FEATURES)), y


def page_rows(seed: int, count: int, layout: str | None, pairs: bool = False) -> list:
    """(signs, in exact order) of `count` pages of run `seed` with 2+ blocks; with `pairs`, each
    page's (pair features, labels) instead."""
    from tools.synth import generate_page

    rows = []
    for i in range(count):
        image, truth = generate_page(seed, i, layout=layout)
        boxes = [tuple(float(v) for v in b["text_box"]) for b in truth["blocks"]]
        if len(boxes) < 2:
            continue
        if pairs:
            reading = read_page([Detection(b, "text", 0.9) for b in boxes], image.size, "rtl", page=gray_page(image))
            rows.append(pair_rows(reading, image.size, boxes))
            continue
        reading = read_page([Detection(b, "text", 0.9) for b in boxes], image.size, "rtl", page=gray_page(image))
        rows.append(([reading.signs[k] for k in SIGNS], exact_order(boxes, reading.regions)))
    return rows


def fit(x: np.ndarray, y: np.ndarray, steps: int = 4000, lr: float = 0.5) -> tuple[float, np.ndarray]:
    """Logistic regression by gradient descent: (bias, weights) for P(y = 1)."""
    w, b = np.zeros(x.shape[1]), 0.0
    pos = max(1.0, float(y.sum()))
    weight = np.where(y > 0, 0.5 * len(y) / pos, 0.5 * len(y) / max(1.0, len(y) - pos))  # classes balanced
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        g = weight * (p - y)
        w -= lr * (x.T @ g / len(y) + L2 * w)
        b -= lr * float(g.mean())
    return b, w


def fit_pairs(x: np.ndarray, y: np.ndarray, hidden: int, steps: int = 3000, lr: float = 0.01,
              seed: int = 0) -> dict:
    """The pairwise model (app.detect.order_model.before) fitted by Adam on the logistic loss."""
    rng = np.random.default_rng(seed)
    params = {"w1": rng.normal(0, 0.5, (x.shape[1], hidden)), "b1": np.zeros(hidden), "w2": rng.normal(0, 0.5, hidden)}
    moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in params.items()}
    for t in range(1, steps + 1):
        hp, hn = np.tanh(x @ params["w1"] + params["b1"]), np.tanh(-x @ params["w1"] + params["b1"])
        p = 1 / (1 + np.exp(-(hp @ params["w2"] - hn @ params["w2"])))
        g = (p - y) / len(y)  # d loss / d (score difference)
        dp, dn = np.outer(g, params["w2"]) * (1 - hp ** 2), -np.outer(g, params["w2"]) * (1 - hn ** 2)
        grads = {"w2": hp.T @ g - hn.T @ g, "w1": x.T @ dp - x.T @ dn, "b1": dp.sum(0) + dn.sum(0)}
        for k, grad in grads.items():
            m, v = moments[k]
            m = 0.9 * m + 0.1 * grad
            v = 0.999 * v + 0.001 * grad ** 2
            moments[k] = (m, v)
            params[k] -= lr * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    return params


def train_order(args) -> int:
    from app.detect.order_model import FEATURES, HIDDEN, before

    started = time.perf_counter()
    rows = []
    for seed in (int(s) for s in args.seeds.split(",")):
        for layout in (None, "mixed"):
            rows += page_rows(seed, args.pages, layout, pairs=True)
            print(f"  seed {seed} {layout or 'classic'}: {len(rows)} pages, {time.perf_counter() - started:.0f} s",
                  file=sys.stderr, flush=True)
    x = np.concatenate([r[0] for r in rows])
    y = np.concatenate([r[1] for r in rows])
    names = [f for f in FEATURES if f not in set(args.without.split(","))]
    columns = [FEATURES.index(f) for f in names]
    params = fit_pairs(x[:, columns], y, HIDDEN)
    right = float(((before(x, {**params, "columns": np.asarray(columns)}) > 0.5) == (y > 0.5)).mean())
    out = args.out or OUT.with_name("order-model.json")
    out.write_text(json.dumps({"features": names, **{k: np.round(v, 5).tolist() for k, v in params.items()},
                               "trained_on": {"seeds": args.seeds, "pages_per_seed_and_kind": args.pages,
                                              "pages": len(rows), "pairs": int(len(y))}}) + "\n", encoding="utf-8")
    print(f"{len(rows)} pages, {len(y)} pairs; pairs right on the training pages {right:.2%}; wrote {out}")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pages", type=int, default=300, help="pages per seed and kind (classic, mixed)")
    p.add_argument("--seeds", default="3001,3002")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--order", action="store_true", help="train the pairwise order model instead")
    p.add_argument("--without", default="", help="--order: features left out (comma-separated names)")
    args = p.parse_args()
    if args.order:
        return train_order(args)
    args.out = args.out or OUT
    started = time.perf_counter()
    rows = []
    for seed in (int(s) for s in args.seeds.split(",")):
        for layout in (None, "mixed"):
            rows += page_rows(seed, args.pages, layout)
            print(f"  seed {seed} {layout or 'classic'}: {len(rows)} pages, {time.perf_counter() - started:.0f} s",
                  file=sys.stderr, flush=True)
    x = np.array([r[0] for r in rows])
    y = np.array([0.0 if r[1] else 1.0 for r in rows])
    bias, w = fit(x, y)
    z = x @ w + bias
    confidence = 1 - 1 / (1 + np.exp(-z))
    check_below = float(np.quantile(confidence, MARK_SHARE))
    marked = confidence < check_below
    model = {"bias": round(bias, 4), "weights": {k: round(float(v), 4) for k, v in zip(SIGNS, w, strict=True)},
             "check_below": round(check_below, 4),
             "trained_on": {"seeds": args.seeds, "pages_per_seed_and_kind": args.pages, "pages": len(rows),
                            "out_of_order": int(y.sum()), "mark_share": MARK_SHARE}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(model, indent=1) + "\n", encoding="utf-8")
    wrong = y > 0
    print(json.dumps(model["weights"]), file=sys.stderr)
    print(f"{len(rows)} pages, {int(wrong.sum())} out of order; marked {marked.mean():.1%}: "
          f"{(marked & wrong).sum() / max(1, wrong.sum()):.1%} of those out of order, "
          f"{(marked & wrong).sum() / max(1, marked.sum()):.1%} of the marked out of order; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
