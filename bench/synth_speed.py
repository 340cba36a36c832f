"""How fast tools.synth draws pages and crops (single process).

    python bench/synth_speed.py [--pages 30]

Prints seconds per page (drawing only, and drawing + PNG encoding) and crops per second.
"""
from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.synth import generate_page, iter_crops  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--pages", type=int, default=30)
    args = p.parse_args()
    generate_page(0, 0)  # warm the font cache
    t = time.perf_counter()
    blocks = 0
    for i in range(args.pages):
        _, truth = generate_page(99, i)
        blocks += len(truth["blocks"])
    draw = (time.perf_counter() - t) / args.pages
    t = time.perf_counter()
    for i in range(args.pages):
        image, _ = generate_page(99, i)
        image.save(io.BytesIO(), format="PNG")
    with_png = (time.perf_counter() - t) / args.pages
    t = time.perf_counter()
    n = sum(1 for _ in iter_crops(98, 300))
    crops = n / (time.perf_counter() - t)
    print(f"page 1024x1448: {draw * 1000:.0f} ms to draw, {with_png * 1000:.0f} ms with PNG encoding; "
          f"{blocks / args.pages:.1f} blocks/page; {crops:.0f} crops/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
