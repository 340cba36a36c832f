"""Pages per second through the page pipeline (load -> detect -> order -> crop -> recognize) at the
real model sizes, with random weights (cost does not depend on the values), on the CPU.

- Detector: a yolov8m-architecture YOLO built from ultralytics' yaml (the size of the default
  detectors), run at --imgsz (1024, their trained size).
- OCR: a real-size Hayai checkpoint written by ../shared/golden/make_checkpoint.py
  (`write_checkpoint`, about 600 MB, into a temporary folder) and loaded by the app's loader.
- Pages: generated manga-like pages (--size, default 1200x1700) with --bubbles speech bubbles
  of vertical Japanese text each. A random-weight detector finds nothing sensible, so the timed
  detector run is real but the blocks the pipeline reads are the drawn bubbles (their boxes,
  as a trained detector would return them); order, crop and OCR then run as in the app.

    python bench/pipeline.py [--pages 4] [--bubbles 6] [--patches 384] [--tokens 24] [--imgsz 1024]

Prints a table: seconds per stage, share of the total, pages/s. Default run: under 3 minutes
on 2 CPU cores (about a minute of it writing and loading the 600 MB checkpoint).
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.pipeline import Pipeline, PipelineSettings  # noqa: E402
from app.core.sources import open_source  # noqa: E402
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
    args = ap.parse_args()

    import torch

    torch.set_grad_enabled(False)
    spec = importlib.util.spec_from_file_location("make_checkpoint", ROOT.parent / "shared/golden/make_checkpoint.py")
    if spec is None or not Path(spec.origin).exists():
        sys.exit("bench/pipeline.py needs ../shared/golden/make_checkpoint.py beside the checkout")
    make_checkpoint = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_checkpoint)

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
        settings = PipelineSettings(patches=args.patches, max_new_tokens=args.tokens, imgsz=args.imgsz,
                                    batch_size=args.batch_size)
        pipeline = Pipeline(LayoutDetector(detector, layouts, clock), recognizer, settings)
        recognizer.recognize = clock.timed("recognize", recognizer.recognize)
        import app.core.pipeline as pipeline_module

        pipeline_module.build_blocks = clock.timed("order", pipeline_module.build_blocks)
        pipeline_module.crop = clock.timed("crop", pipeline_module.crop)
        # warm-up (first YOLO call builds its predictor; first OCR call allocates)
        detector.detect([Image.new("RGB", tuple(args.size), "white")], imgsz=args.imgsz)
        recognizer.recognize([Image.new("RGB", (64, 200), "white")], max_num_patches=args.patches, max_new_tokens=2)
        clock.seconds.clear()
        clock.cpu.clear()

        with open_source(tmp / "pages") as source:
            source.load = clock.timed("load", source.load)
            start, cpu_start = time.perf_counter(), time.process_time()
            pages = list(pipeline.process(source))
            total, cpu_total = time.perf_counter() - start, time.process_time() - cpu_start
        blocks = sum(len(p.blocks) for p in pages)
        assert all(p.error is None for p in pages), [p.error for p in pages if p.error]

    print(f"{args.pages} pages {args.size[0]}x{args.size[1]}, {blocks} blocks, detector {args.detector_yaml} "
          f"at {args.imgsz}, Hayai nova real size at {args.patches} patches, <= {args.tokens} tokens/crop, "
          f"OCR batch {args.batch_size}, CPU threads {torch.get_num_threads()} (setup {setup:.0f} s)")
    print("wall: elapsed seconds; cpu: process CPU seconds, all threads (wall >> cpu / threads means a busy machine)")
    print(f"{'stage':<10} {'wall s':>8} {'share':>7} {'per page':>9} {'cpu s':>8}")
    rows = [(stage, clock.seconds[stage], clock.cpu[stage]) for stage in ("load", "detect", "order", "crop", "recognize")]
    rows.append(("other", total - sum(clock.seconds.values()), cpu_total - sum(clock.cpu.values())))
    rows.append(("total", total, cpu_total))
    for stage, s, c in rows:
        print(f"{stage:<10} {s:>8.2f} {s / total:>7.1%} {s / args.pages:>8.2f}s {c:>8.2f}")
    print(f"pages/s: {args.pages / total:.3f}   blocks/s: {blocks / total:.2f}   "
          f"(on CPU time: {args.pages / cpu_total * torch.get_num_threads():.3f} pages/s for "
          f"{torch.get_num_threads()} threads)")


if __name__ == "__main__":
    main()
