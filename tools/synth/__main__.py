"""Command line for the synthetic data generator.

    python -m tools.synth OUT --pages N --seed S            pages (PNG) + truth (JSON)
        [--layout KIND|mixed]                               the layouts real books have (docs/synthetic-pages.md)
        [--layers DIR]                                      + each page without its text and its
                                                              text mask (DIR/NAME.clean.png, .mask.png)
    python -m tools.synth crops OUT --count N --seed S      crops + manifest.jsonl (eval format)
    python -m tools.synth yolo OUT --pages N --seed S       YOLO dataset (images, labels, data.yaml)
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tools.synth.export import write_crops, write_pages, write_yolo


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 1024x1448, got {text!r}") from None
    if w < 256 or h < 256:
        raise argparse.ArgumentTypeError("pages must be at least 256x256")
    return w, h


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", type=Path, help="output folder")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--size", type=_size, default=(1024, 1448), help="page WIDTHxHEIGHT (default 1024x1448)")
    p.add_argument("--workers", type=int, default=1, help="processes (output is the same for any number)")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    mode = argv.pop(0) if argv and argv[0] in ("crops", "yolo", "pages") else "pages"
    p = argparse.ArgumentParser(prog=f"python -m tools.synth{'' if mode == 'pages' else ' ' + mode}",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(p)
    if mode == "crops":
        p.add_argument("--count", type=int, required=True)
        p.add_argument("--pad", type=float, default=0.04, help="padding, fraction of the short side")
        p.add_argument("--jitter", type=float, default=0.03, help="random box jitter, fraction of a side")
    else:
        p.add_argument("--pages", type=int, required=True)
    if mode == "yolo":
        p.add_argument("--val-fraction", type=float, default=0.1)
        p.add_argument("--max-side", type=int, default=None, help="downsize saved images to this long side")
    if mode == "pages":
        p.add_argument("--clean", action="store_true", help="no blur/noise/paper tone")
        p.add_argument("--layout", default=None, help="a layout kind (overlap, borderless, inset, slanted, splash, "
                                                      "across, over_art, spread, yonkoma, dark) or mixed; "
                                                      "default: the classic grid pages")
        p.add_argument("--layers", type=Path, default=None,
                       help="also write each page without its text (NAME.clean.png) and its text mask "
                            "(NAME.mask.png) into this folder")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    if mode == "crops":
        path = write_crops(args.out, args.count, args.seed, args.size, args.pad, args.jitter, args.workers)
        what = f"{args.count} crops, manifest {path}"
    elif mode == "yolo":
        path = write_yolo(args.out, args.pages, args.seed, args.size, args.val_fraction, args.max_side,
                          args.workers)
        what = f"{args.pages} pages, {path}"
    else:
        if args.layout is not None:
            from tools.synth.layouts import layout_for

            try:
                layout_for(args.layout, 0)
            except ValueError as exc:
                p.error(str(exc))
        write_pages(args.out, args.pages, args.seed, args.size, noise=not args.clean, workers=args.workers,
                    layers=args.layers, layout=args.layout)
        what = f"{args.pages} pages in {args.out}"
    print(f"wrote {what} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
