"""Quality of the translated-page stage on synthetic pages with known truth (tools/render_metrics.py).

    python bench/render_quality.py [--pages 16] [--seed 4242] [--tone 24] [--lama FILE.onnx]

Prints, for the OpenCV engine (and LaMa when an ONNX file is given): cleaning error inside
bubbles against the clean truth (mean absolute grey-level difference over the glyph pixels, share
off by more than 48), the same for free text and for text drawn straight onto screentone, pixels
changed outside the blocks, and the typesetting figures (share fitting at or above the minimum
size, spill outside the bubble, mean font size). `--json` prints one JSON line instead.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.render.inpaint import OpenCVInpainter  # noqa: E402
from tools.render_metrics import (  # noqa: E402
    measure_pages,
    tone_figures,
)


def measure(engine, pages: int, seed: int, tone: int) -> dict:
    t = time.perf_counter()
    bubbles, free, typeset = measure_pages(engine, seed, pages)
    seconds = time.perf_counter() - t
    tone_auto, tone_true = tone_figures(range(tone), engine)
    return {
        "engine": engine.name, "pages": pages, "seed": seed,
        "bubbles": {"pixels": bubbles.pixels, "mae": round(bubbles.mae, 3), "off48": round(bubbles.off_share, 5),
                    "methods": bubbles.methods},
        "free_text": {"pixels": free.pixels, "mae": round(free.mae, 3), "off48": round(free.off_share, 5)},
        "screentone": {"cases": tone, "auto_mask_mae": round(tone_auto.mae, 2), "auto_mask_off48": round(tone_auto.off_share, 4),
                       "true_mask_mae": round(tone_true.mae, 2), "true_mask_off48": round(tone_true.off_share, 4)},
        "changed_outside_blocks": bubbles.changed_outside,
        "typeset": {"blocks": typeset.blocks, "fit_share": round(typeset.fit_share, 4), "spill_px": typeset.spill,
                    "mean_size_px": round(typeset.mean_size, 2), "overflow": typeset.overflow},
        "seconds_per_page": round(seconds / max(1, pages), 3),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pages", type=int, default=16)
    p.add_argument("--seed", type=int, default=4242)
    p.add_argument("--tone", type=int, default=24, help="text-on-screentone cases")
    p.add_argument("--lama", help="a LaMa ONNX file to measure as well")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    engines = [OpenCVInpainter()]
    if args.lama:
        from app.render.lama import LamaInpainter

        engines.append(LamaInpainter(args.lama))
    for engine in engines:
        r = measure(engine, args.pages, args.seed, args.tone)
        if args.json:
            print(json.dumps(r))
            continue
        b, f, t, s = r["bubbles"], r["free_text"], r["typeset"], r["screentone"]
        print(f"engine {r['engine']}: {r['pages']} pages (seed {r['seed']}), {r['seconds_per_page']} s/page")
        print(f"  bubbles    MAE {b['mae']:.2f} grey levels, {100 * b['off48']:.3f} % off by > 48 "
              f"({b['pixels']} glyph px; all blocks by method {b['methods']})")
        print(f"  free text  MAE {f['mae']:.2f}, {100 * f['off48']:.2f} % off by > 48 ({f['pixels']} px)")
        print(f"  screentone MAE {s['auto_mask_mae']:.1f}, {100 * s['auto_mask_off48']:.1f} % off (automatic mask); "
              f"MAE {s['true_mask_mae']:.1f}, {100 * s['true_mask_off48']:.1f} % off (true mask), {s['cases']} cases")
        print(f"  pixels changed outside the blocks: {r['changed_outside_blocks']}")
        print(f"  typeset    {t['blocks']} blocks: {100 * t['fit_share']:.1f} % fit at or above the minimum size, "
              f"spill {t['spill_px']} px, mean size {t['mean_size_px']:.1f} px, {t['overflow']} did not fit at all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
