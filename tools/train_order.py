"""Train the learned pairwise reading order (tools/order_model.py) on generated pages only.

Draws synthetic pages (tools.synth: the classic grid pages and the layouts real books have,
`layout="mixed"`), reads each with the app's layout rules (the truth's text boxes fed in as a
text detector's, app.detect.blocks.read_page) and labels every pair of the blocks read by the
truth's order; the pairs' features are the model's (tools.order_model.page_pairs): geometry,
the panels found, the rules' verdicts (--without leaves some out). A two-layer perceptron,
Adam on the logistic loss, written to --out as JSON. Never trained on published pages: the
annotated books measure it (`python bench/real_pages.py --learned MODEL`). The app does not
use it (docs/accuracy.md: it reads fewer pages in order than the rules on each book).

    python tools/train_order.py [--pages 150] [--seeds 3001,3002] [--without NAMES] --out MODEL.json

About half a second a page on a shared CPU.
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
    from tools.order_model import FEATURES, page_pairs

    boxes = [r.box for r in reading.regions]
    wide = reading_order(boxes, "rtl")
    pagewide = [wide.index(i) for i in range(len(boxes))]
    ranks = [panel_of(b, reading.panels) for b in boxes] if reading.panels else [0] * len(boxes)
    x, pairs = page_pairs(boxes, size, "rtl", ranks, list(range(len(boxes))), pagewide)
    places = truth_places(truth, reading.regions)
    keep = [k for k, (i, j) in enumerate(pairs) if places[i] is not None and places[j] is not None and places[i] != places[j]]
    y = np.array([float(places[pairs[k][0]] < places[pairs[k][1]]) for k in keep])
    return x[keep].reshape(len(keep), len(FEATURES)), y


def page_rows(seed: int, count: int, layout: str | None) -> list[tuple[np.ndarray, np.ndarray]]:
    """(pair features, labels) of each of `count` pages of run `seed` with 2+ blocks."""
    from tools.synth import generate_page

    rows = []
    for i in range(count):
        image, truth = generate_page(seed, i, layout=layout)
        boxes = [tuple(float(v) for v in b["text_box"]) for b in truth["blocks"]]
        if len(boxes) < 2:
            continue
        reading = read_page([Detection(b, "text", 0.9) for b in boxes], image.size, "rtl", page=gray_page(image))
        rows.append(pair_rows(reading, image.size, boxes))
    return rows


def fit_pairs(x: np.ndarray, y: np.ndarray, hidden: int, steps: int = 3000, lr: float = 0.01,
              seed: int = 0) -> dict:
    """The pairwise model (tools.order_model.before) fitted by Adam on the logistic loss."""
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


def train(args) -> int:
    from tools.order_model import FEATURES, HIDDEN, before

    started = time.perf_counter()
    rows = []
    for seed in (int(s) for s in args.seeds.split(",")):
        for layout in (None, "mixed"):
            rows += page_rows(seed, args.pages, layout)
            print(f"  seed {seed} {layout or 'classic'}: {len(rows)} pages, {time.perf_counter() - started:.0f} s",
                  file=sys.stderr, flush=True)
    x = np.concatenate([r[0] for r in rows])
    y = np.concatenate([r[1] for r in rows])
    names = [f for f in FEATURES if f not in set(args.without.split(","))]
    columns = [FEATURES.index(f) for f in names]
    params = fit_pairs(x[:, columns], y, HIDDEN, steps=args.steps)
    right = float(((before(x, {**params, "columns": np.asarray(columns)}) > 0.5) == (y > 0.5)).mean())
    out = args.out
    out.write_text(json.dumps({"features": names, **{k: np.round(v, 5).tolist() for k, v in params.items()},
                               "trained_on": {"seeds": args.seeds, "pages_per_seed_and_kind": args.pages,
                                              "pages": len(rows), "pairs": int(len(y))}}) + "\n", encoding="utf-8")
    print(f"{len(rows)} pages, {len(y)} pairs; pairs right on the training pages {right:.2%}; wrote {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pages", type=int, default=150, help="pages per seed and kind (classic, mixed)")
    p.add_argument("--seeds", default="3001,3002")
    p.add_argument("--without", default="", help="features left out (comma-separated names)")
    p.add_argument("--steps", type=int, default=3000, help="Adam steps over all the pairs")
    p.add_argument("--out", type=Path, required=True)
    return train(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
