"""Speed of cleaning + typesetting a page, and of re-lettering one bubble after an edit.

    python bench/render_speed.py [--pages 6] [--size 1600x2400] [--seed 77]

Pages are synthetic (tools/synth) at the given size with stand-in English translations on every
block; the OpenCV engine (plain bubbles filled with their colour). Prints, per page: clean +
typeset seconds (a fresh PageRenderer, nothing cached); per bubble: typesetting milliseconds
(median, max); an edit: re-rendering the page after one block's translation changed, with the
rest cached (what the GUI does). As the machine is shared, each figure is also given as a ratio
to a baseline measured in the same run: PNG-encoding the same page (compress level 6).
"""
from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PIL import Image  # noqa: E402

from app.core.exports.translated_pages import RenderOptions, render_blocks  # noqa: E402
from app.render.inpaint import OpenCVInpainter  # noqa: E402
from app.render.page import PageRenderer  # noqa: E402
from app.render.style import TextStyle  # noqa: E402
from tools.render_metrics import make_case  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pages", type=int, default=6)
    p.add_argument("--size", default="1600x2400")
    p.add_argument("--seed", type=int, default=77)
    args = p.parse_args()
    size = tuple(int(v) for v in args.size.lower().split("x"))
    engine = OpenCVInpainter()
    style = TextStyle(min_size=14, max_size=56)  # a 1600-wide page letters larger than the default 12..40
    page_s, png_s, bubble_ms, edit_ms, blocks_n = [], [], [], [], 0
    make_case(args.seed, 0, size=size)  # warm fonts and caches of the generator
    for i in range(args.pages):
        case = make_case(args.seed, i, size=size)
        blocks = render_blocks(case.doc, style, RenderOptions())
        blocks_n += len(blocks)
        t = time.perf_counter()
        buf = io.BytesIO()
        Image.fromarray(case.page).save(buf, format="PNG", compress_level=6)
        png_s.append(time.perf_counter() - t)
        renderer = PageRenderer(case.page, engine)
        t = time.perf_counter()
        renderer.render(blocks)
        page_s.append(time.perf_counter() - t)
        fresh = PageRenderer(case.page, engine)
        for b in blocks:  # one bubble, nothing cached but its mask (as after an edit)
            fresh.mask(b)
            t = time.perf_counter()
            fresh.layer(b)
            bubble_ms.append(1000 * (time.perf_counter() - t))
        if blocks:
            edited = [replace(blocks[0], text=blocks[0].text + " Really?"), *blocks[1:]]
            t = time.perf_counter()
            renderer.render(edited)
            edit_ms.append(1000 * (time.perf_counter() - t))
    base = statistics.median(png_s)
    per_page = statistics.median(page_s)
    print(f"{args.pages} pages of {size[0]}x{size[1]}, {blocks_n} blocks, OpenCV engine")
    print(f"  clean + typeset: median {per_page:.3f} s/page (max {max(page_s):.3f}); "
          f"{per_page / base:.2f} x the PNG encoding of the page ({base:.3f} s)")
    print(f"  one bubble typeset: median {statistics.median(bubble_ms):.1f} ms, max {max(bubble_ms):.1f} ms")
    print(f"  page after editing one translation: median {statistics.median(edit_ms):.1f} ms "
          f"({statistics.median(edit_ms) / 1000 / base:.2f} x the PNG encoding)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
