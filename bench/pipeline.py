"""Pages per second through the page pipeline (load -> detect -> order -> crop -> recognize) at the
real model sizes, with random weights (cost does not depend on the values), on the CPU.

- Detector: a yolov8m-architecture YOLO built from ultralytics' yaml (the size of the default
  detectors), run at --imgsz (1024, their trained size).
- OCR: a real-size Hayai checkpoint written by tests/golden/writer.py
  (`write_checkpoint`, about 600 MB, into a temporary folder) and loaded by the app's loader.
- Pages: generated manga-like pages (--size, default 1200x1700) with --bubbles speech bubbles
  of vertical Japanese text each. A random-weight detector finds nothing sensible, so the timed
  detector run is real but the blocks the pipeline reads are the drawn bubbles (their boxes,
  as a trained detector would return them); order, crop and OCR then run as in the app.

    python bench/pipeline.py [--pages 4] [--bubbles 6] [--patches 384] [--tokens 24] [--imgsz 1024]
        [--chunk-pages 2] [--overlap off|on|both] [--rounds 1]

Prints a table per run: seconds per stage, share of the total, pages/s; with --overlap both
(the default) the pipeline runs with the next chunk detected while this one is read and without,
alternately on the same pages, and prints the ratio of each round. Default run: under 3 minutes
on 2 CPU cores (about a minute of it writing and loading the 600 MB checkpoint).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.reading.pipeline import Pipeline, PipelineSettings  # noqa: E402
from app.core.sources.source import open_source  # noqa: E402
from app.detect import Detection, load_detector  # noqa: E402
from app.detect.testing import write_tiny_detector  # noqa: E402
from app.ocr import load_recognizer  # noqa: E402

TEXT = "今日はいい天気ですねどこへ行くのそれは秘密だよ本当に知りたいの"
FONT_PATHS = ["/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
              "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc"]


def _font(size: int):
    for path in FONT_PATHS:
        if Path(path).exists():
            return ImageFont.truetype(path, size)
    return ImageFont.load_default()


def make_page(size: tuple[int, int], bubbles: int, seed: int) -> tuple[Image.Image, list[tuple]]:
    """A white page with panel borders and `bubbles` ellipses of vertical text; their boxes."""
    rng = np.random.default_rng(seed)
    w, h = size
    page = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(page)
    font = _font(28)
    for y in range(0, h, h // 3):
        draw.rectangle((20, y + 20, w - 20, y + h // 3 - 20), outline="black", width=4)
    boxes = []
    cols, rows = 3, max(1, -(-bubbles // 3))
    for i in range(bubbles):
        cx = (w / cols) * (i % cols + 0.5)
        cy = (h / rows) * (i // cols + 0.5)
        bw, bh = rng.integers(110, 200), rng.integers(220, 380)
        box = (cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2)
        draw.ellipse(box, fill="white", outline="black", width=3)
        chars = TEXT[rng.integers(0, 10):][: int(rng.integers(8, 24))]
        x = box[2] - bw * 0.3
        for col in range(0, len(chars), 7):
            for j, ch in enumerate(chars[col:col + 7]):
                draw.text((x, box[1] + 40 + j * 30), ch, font=font, fill="black")
            x -= 34
        boxes.append(box)
    return page, boxes


class StageClock:
    """Accumulated wall time and process CPU time (all threads) per stage."""

    def __init__(self):
        self.seconds = defaultdict(float)
        self.cpu = defaultdict(float)

    def timed(self, stage, fn):
        def wrapper(*args, **kwargs):
            start, cpu = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[stage] += time.perf_counter() - start
                self.cpu[stage] += time.process_time() - cpu
        return wrapper


class LayoutDetector:
    """Runs the real YOLO (timed as "detect") and returns the drawn bubbles as its detections."""

    def __init__(self, detector, layouts, clock):
        self.detector = detector
        self.layouts = layouts  # {(width, height, first pixel row checksum): boxes}
        self.clock = clock

    def detect(self, images, **kwargs):
        self.clock.timed("detect", self.detector.detect)(images, **kwargs)
        return [[Detection(tuple(b), "bubble", 0.9) for b in self.layouts[_key(im)]] for im in images]


def _key(image) -> bytes:
    return np.asarray(image)[::97, ::89].tobytes()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=4)
    ap.add_argument("--bubbles", type=int, default=6)
    ap.add_argument("--size", type=int, nargs=2, default=[1200, 1700], metavar=("W", "H"))
    ap.add_argument("--patches", type=int, default=384)
    ap.add_argument("--tokens", type=int, default=24, help="max new tokens per crop")
    ap.add_argument("--imgsz", type=int, default=1024)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--detector-yaml", default="yolov8m.yaml")
    ap.add_argument("--chunk-pages", type=int, default=2)
    ap.add_argument("--overlap", choices=["off", "on", "both"], default="both",
                    help="detect the next chunk while this one is read (both: each, alternately, same pages)")
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()

    import torch

    torch.set_grad_enabled(False)
    sys.path.insert(0, str(ROOT))
    from tests.golden import writer as make_checkpoint

    with tempfile.TemporaryDirectory(prefix="hayai-bench-") as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        make_checkpoint.write_checkpoint(tmp / "hayai-nova", "nova", seed=0)
        det_path = write_tiny_detector(tmp / "yolov8m.pt", args.detector_yaml, {0: "bubble", 1: "text"})
        recognizer = load_recognizer(tmp / "hayai-nova", device="cpu")
        detector = load_detector(det_path, device="cpu")
        setup = time.perf_counter() - t0

        layouts = {}
        (tmp / "pages").mkdir()
        for i in range(args.pages):
            page, boxes = make_page(tuple(args.size), args.bubbles, seed=i)
            page.save(tmp / "pages" / f"page{i + 1:03d}.png")
            layouts[_key(page)] = boxes

        clock = StageClock()
        import app.core.reading.pipeline as pipeline_module

        recognizer.recognize = clock.timed("recognize", recognizer.recognize)
        pipeline_module.build_blocks = clock.timed("order", pipeline_module.build_blocks)
        pipeline_module.crop = clock.timed("crop", pipeline_module.crop)
        # warm-up (first YOLO call builds its predictor; first OCR call allocates)
        detector.detect([Image.new("RGB", tuple(args.size), "white")], imgsz=args.imgsz)
        recognizer.recognize([Image.new("RGB", (64, 200), "white")], max_num_patches=args.patches, max_new_tokens=2)

        modes = {"off": [False], "on": [True], "both": [False, True]}[args.overlap]
        results = []
        for _ in range(args.rounds):
            for overlap in modes:
                settings = PipelineSettings(patches=args.patches, max_new_tokens=args.tokens, imgsz=args.imgsz,
                                            batch_size=args.batch_size, chunk_pages=args.chunk_pages,
                                            overlap=overlap)
                pipeline = Pipeline(LayoutDetector(detector, layouts, clock), recognizer, settings)
                clock.seconds.clear()
                clock.cpu.clear()
                with open_source(tmp / "pages") as source:
                    source.load = clock.timed("load", source.load)
                    start, cpu_start = time.perf_counter(), time.process_time()
                    pages = list(pipeline.process(source))
                    total, cpu_total = time.perf_counter() - start, time.process_time() - cpu_start
                assert all(p.error is None for p in pages), [p.error for p in pages if p.error]
                results.append((overlap, total, cpu_total, dict(clock.seconds), dict(clock.cpu),
                                sum(len(p.blocks) for p in pages)))

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{args.pages} pages {args.size[0]}x{args.size[1]}, detector {args.detector_yaml} "
          f"at {args.imgsz}, Hayai nova real size at {args.patches} patches ({recognizer.precision}), "
          f"<= {args.tokens} tokens/crop, OCR batch {args.batch_size}, {args.chunk_pages} pages a chunk, "
          f"CPU threads {torch.get_num_threads()} (setup {setup:.0f} s); load average at the end {load}")
    print("wall: elapsed seconds in the stage (with overlap, detect runs beside recognize: the shares add up "
          "to more than 100 %); cpu: process CPU seconds, all threads")
    for overlap, total, cpu_total, seconds, cpu, blocks in results:
        print(f"\noverlap {'on' if overlap else 'off'}: {blocks} blocks")
        print(f"{'stage':<10} {'wall s':>8} {'share':>7} {'per page':>9} {'cpu s':>8}")
        rows = [(stage, seconds.get(stage, 0.0), cpu.get(stage, 0.0))
                for stage in ("load", "detect", "order", "crop", "recognize")]
        rows.append(("total", total, cpu_total))
        for stage, sec, c in rows:
            print(f"{stage:<10} {sec:>8.2f} {sec / total:>7.1%} {sec / args.pages:>8.2f}s {c:>8.2f}")
        print(f"pages/s: {args.pages / total:.3f}   blocks/s: {blocks / total:.2f}")
    if len(modes) == 2:
        ratios = [results[i][1] / results[i + 1][1] for i in range(0, len(results), 2)]
        print("\noverlap on / off, pages/s, round by round: " + ", ".join(f"{r:.2f}x" for r in ratios))


if __name__ == "__main__":
    main()
