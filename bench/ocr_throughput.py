"""OCR throughput at the real Hayai size (random weights: cost does not depend on the values).

Crops per second for patch budgets 256 / 384 / 512 and batch sizes 1 / 8 / 16, with exactly
32 generated tokens per crop (stopping disabled), against a baseline measured in the same run:
the same model decoded without the key/value cache (the whole sequence recomputed every step),
batch 1. Prints a table.

    python bench/ocr_throughput.py [--variant nova|v2] [--budgets 256 384 512] [--batches 1 8 16]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.ocr import generate  # noqa: E402
from app.ocr.config import HayaiConfig  # noqa: E402
from app.ocr.preprocess import preprocess  # noqa: E402
from app.ocr.testing import random_model  # noqa: E402

NO_STOP = (-1,)


def crops(n: int, seed: int = 0) -> list[Image.Image]:
    """Speech-bubble-like crop sizes: tall vertical columns and wide lines."""
    rng = np.random.default_rng(seed)
    sizes = [(220, 60), (300, 110), (90, 400), (180, 180), (400, 90), (60, 260)]
    return [Image.fromarray(rng.integers(0, 256, (*sizes[i % len(sizes)], 3), dtype=np.uint8)) for i in range(n)]


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", default="nova", choices=["nova", "v2"])
    ap.add_argument("--budgets", type=int, nargs="+", default=[256, 384, 512])
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 8, 16])
    ap.add_argument("--tokens", type=int, default=32)
    args = ap.parse_args()

    torch.manual_seed(0)
    model = random_model(HayaiConfig(variant=args.variant), seed=0)
    params = sum(p.numel() for p in model.parameters()) / 1e6
    print(f"Hayai {args.variant}, {params:.0f}M parameters, float32, CPU threads {torch.get_num_threads()}, "
          f"{args.tokens} tokens per crop")
    bos = 16001
    rows = []
    for budget in args.budgets:
        one = preprocess(crops(1), budget)
        generate.greedy(model, one, bos, NO_STOP, 2)  # warm-up
        base = timed(lambda b=one: generate.greedy_uncached(model, b, bos, NO_STOP, args.tokens))
        rows.append((budget, "uncached (baseline)", 1, 1 / base, 1.0))
        for bs in args.batches:
            batch = preprocess(crops(bs, seed=bs), budget)
            t = timed(lambda b=batch: generate.greedy(model, b, bos, NO_STOP, args.tokens))
            rows.append((budget, "cached", bs, bs / t, (bs / t) * base))
            print(f"  {budget} patches, batch {bs}: {bs / t:.2f} crops/s", flush=True)
    print()
    print(f"{'patches':>7}  {'decoder':<20} {'batch':>5}  {'crops/s':>8}  {'x baseline':>10}")
    for budget, kind, bs, cps, ratio in rows:
        print(f"{budget:>7}  {kind:<20} {bs:>5}  {cps:>8.3f}  {ratio:>10.1f}")


if __name__ == "__main__":
    with torch.inference_mode():
        main()
