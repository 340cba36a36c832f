"""Writing direction, reading order and false blocks on synthetic pages with known truth.

Runs a detector (default: the demo detector) on fresh synthetic pages (tools.synth, `--seed`),
builds the blocks twice from the same detections, the way the app once did (box
shapes, page-wide order) and the way it does now (`app.core.reading.pipeline.build_blocks` with the page: ink
direction, panels, stroke filter), and scores both against the truth:

- direction: share of the found blocks matched to a truth block (IoU >= 0.5) whose `vertical`
  is right; also the classifier alone on the truth boxes (all blocks / blocks of 2+ characters);
- order: share of pages whose matched blocks come in exactly the truth's order; also the order
  computed from the truth boxes themselves (every block, exact);
- false blocks: found blocks matching no truth block, by where they lie (over real text but a
  poor box, on a panel border, in a gutter or margin, on the artwork: speed lines, hatching,
  shapes); block recall and precision.

    python bench/layout_accuracy.py [--pages 40] [--seed 9090] [--detector PATH] [--json]

Detection only (no OCR): about a second a page on a shared CPU.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.document.boxes import match_boxes  # noqa: E402
from app.core.reading.pipeline import build_blocks  # noqa: E402
from app.detect.blocks import gray_page, is_vertical  # noqa: E402
from app.detect.direction import writing_direction  # noqa: E402
from app.detect.order import reading_order  # noqa: E402
from app.detect.panels import find_panels  # noqa: E402

DEMO_DETECTOR = ROOT / "app" / "resources" / "demo" / "hayai-demo-detector.pt"
BORDER_PX = 8  # a false block within this many pixels of a panel edge line "sits on the border"


def _where(box, panels, truth_boxes) -> str:
    """Where a false block lies: 'text' (it overlaps a truth block: a poor box around real text),
    'border' (on a panel's edge line), 'gutter' (outside every panel), 'art' (the artwork)."""
    from app.detect.blocks import intersection

    if any(intersection(box, t) > 0 for t in truth_boxes):
        return "text"
    x0, y0, x1, y1 = box
    for px0, py0, px1, py1 in panels:
        for ex in (px0, px1):
            if x0 - BORDER_PX <= ex <= x1 + BORDER_PX and y1 > py0 and y0 < py1:
                return "border"
        for ey in (py0, py1):
            if y0 - BORDER_PX <= ey <= y1 + BORDER_PX and x1 > px0 and x0 < px1:
                return "border"
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    inside = any(px0 <= cx <= px1 and py0 <= cy <= py1 for px0, py0, px1, py1 in panels)
    return "art" if inside else "gutter"


class Tally:
    def __init__(self):
        self.n = {}

    def add(self, key: str, ok: bool) -> None:
        good, total = self.n.get(key, (0, 0))
        self.n[key] = (good + int(ok), total + 1)

    def share(self, key: str) -> tuple[float, int, int]:
        good, total = self.n.get(key, (0, 0))
        return (good / total if total else 0.0), good, total


def in_truth_order(found_blocks, truth_boxes) -> bool:
    pairs = match_boxes(truth_boxes, [b.box for b in found_blocks])
    ranks = [ti for ti, _ in sorted(pairs, key=lambda p: p[1])]
    return ranks == sorted(ranks)


def run(pages: int, seed: int, detector_path: Path, imgsz: int | None, keep: Path | None) -> dict:
    from app.detect import load_detector
    from tools.synth import generate_page

    detector = load_detector(str(detector_path), device="cpu")
    t = Tally()
    false_where: dict[str, dict[str, int]] = {"before": {}, "after": {}}
    counts = {k: {"truth": 0, "found": 0, "matched": 0} for k in ("before", "after")}
    started = time.perf_counter()
    for index in range(pages):
        image, truth = generate_page(seed, index)
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            image.save(keep / f"page_{index:04d}.png")
            (keep / f"page_{index:04d}.json").write_text(json.dumps({"image": f"page_{index:04d}.png", **truth},
                                                                    ensure_ascii=False), encoding="utf-8")
        rgb = image.convert("RGB")
        gray = gray_page(rgb)
        truth_boxes = [tuple(b["box"]) for b in truth["blocks"]]
        truth_panels = [tuple(p) for p in truth["panels"]]
        # the classifier and the order rules alone, on the truth boxes
        for b in truth["blocks"]:
            ink = writing_direction(gray, b["box"])
            t.add("truth boxes: shape", is_vertical(b["box"]) == b["vertical"])
            t.add("truth boxes: ink", (ink if ink is not None else is_vertical(b["box"])) == b["vertical"])
            if len(b["text"]) > 1:
                t.add("truth boxes 2+ chars: shape", is_vertical(b["box"]) == b["vertical"])
                t.add("truth boxes 2+ chars: ink", (ink if ink is not None else is_vertical(b["box"])) == b["vertical"])
        expected = list(range(len(truth_boxes)))
        t.add("order, truth boxes: page-wide", reading_order(truth_boxes, "rtl") == expected)
        panels = find_panels(gray, "rtl", ignore=truth_boxes)
        t.add("order, truth boxes: panels", reading_order(truth_boxes, "rtl", panels) == expected)
        # through the detector
        (dets,) = detector.detect([rgb], imgsz=imgsz)
        for key, blocks in (("before", _legacy_blocks(dets, rgb.size)),
                            ("after", build_blocks(dets, rgb.size, "rtl", page=gray))):
            pairs = match_boxes(truth_boxes, [b.box for b in blocks])
            c = counts[key]
            c["truth"] += len(truth_boxes)
            c["found"] += len(blocks)
            c["matched"] += len(pairs)
            for ti, fi in pairs:
                right = blocks[fi].vertical == truth["blocks"][ti]["vertical"]
                t.add(f"direction, detected: {key}", right)
                if len(truth["blocks"][ti]["text"]) > 1:
                    t.add(f"direction, detected 2+ chars: {key}", right)
            t.add(f"order, detected: {key}", in_truth_order(blocks, truth_boxes))
            matched = {fi for _, fi in pairs}
            for fi, b in enumerate(blocks):
                if fi not in matched:
                    where = _where(b.box, truth_panels, truth_boxes)
                    false_where[key][where] = false_where[key].get(where, 0) + 1
    result = {name: dict(zip(("share", "good", "total"), t.share(name))) for name in t.n}
    for key, c in counts.items():
        result[f"blocks {key}"] = {**c, "recall": c["matched"] / max(1, c["truth"]),
                                   "precision": c["matched"] / max(1, c["found"]),
                                   "false blocks": false_where[key]}
    result["pages"] = pages
    result["seed"] = seed
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


def _legacy_blocks(dets, size):
    """The blocks as the app once built them: without the page image (box shapes,
    page-wide order, nothing filtered)."""
    return build_blocks(dets, size, "rtl")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pages", type=int, default=40)
    p.add_argument("--seed", type=int, default=9090)
    p.add_argument("--detector", type=Path, default=DEMO_DETECTOR)
    p.add_argument("--imgsz", type=int, default=None, help="detector input size (default: its trained size)")
    p.add_argument("--keep", type=Path, default=None, help="also write the pages + truth here (for `eval`)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    result = run(args.pages, args.seed, args.detector, args.imgsz, args.keep)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    print(f"{result['pages']} synthetic pages, seed {result['seed']}, detector {args.detector.name}, "
          f"{result['seconds']} s")
    for name, v in result.items():
        if isinstance(v, dict) and "share" in v:
            print(f"  {name:36s} {100 * v['share']:5.1f} %  ({v['good']}/{v['total']})")
    for key in ("before", "after"):
        b = result[f"blocks {key}"]
        print(f"  blocks {key}: recall {100 * b['recall']:.1f} %, precision {100 * b['precision']:.1f} % "
              f"({b['matched']} of {b['truth']} truth, {b['found']} found); false blocks {b['false blocks']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
