"""Does torch.compile pay for the Hayai vision tower (the bulk of the work) on this machine?

    python bench/ocr_compile.py [--precisions fp32 bf16] [--patches 384] [--batch 16] [--rounds 3]

For each precision: the first call of `torch.compile(vision_tower)` (compilation included), then
steady calls, alternated with the eager tower in the same process; prints the compile cost, the
steady speed-up, and after how many batches the compilation has paid for itself. The app reads
a volume page by page (a first page has 5-20 crops, one or two batches), so a compile that needs
more than a batch or two to pay back makes the first page slower for the user.
"""
from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.ocr.config import HayaiConfig  # noqa: E402
from app.ocr.precision import apply_precision  # noqa: E402
from app.ocr.preprocess import preprocess  # noqa: E402
from app.ocr.testing import random_model  # noqa: E402
from bench.ocr_throughput import crops  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--precisions", nargs="+", default=["fp32", "bf16"])
    ap.add_argument("--patches", type=int, default=384)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    base = random_model(HayaiConfig("nova"), seed=0)
    batch = preprocess(crops(args.batch), args.patches)
    print(f"vision tower, {args.batch} crops at {args.patches} patches, {torch.get_num_threads()} threads, "
          f"torch {torch.__version__}")
    for precision in args.precisions:
        model = base if precision == "fp32" else apply_precision(copy.deepcopy(base), precision)
        tower = model.vision_encoder
        pixels = batch.pixel_values.to(next(tower.parameters()).dtype)

        def call(fn, pixels=pixels):
            t0 = time.perf_counter()
            fn(pixel_values=pixels, pixel_attention_mask=batch.pixel_attention_mask,
               spatial_shapes=batch.spatial_shapes)
            return time.perf_counter() - t0

        compiled = torch.compile(tower)
        with torch.inference_mode():
            eager_first = call(tower)
            first = call(compiled)
            eager, steady = [], []
            for _ in range(args.rounds):
                eager.append(call(tower))
                steady.append(call(compiled))
        e, c = statistics.median(eager), statistics.median(steady)
        gain = e - c
        payback = (first - c) / gain if gain > 0 else float("inf")
        print(f"{precision}: eager {e:.2f} s/batch (first {eager_first:.2f}); compiled first call {first:.1f} s, "
              f"then {c:.2f} s/batch ({e / c:.2f}x); pays back after {payback:.1f} batches")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
