"""Where the time goes: torch.profiler, stage by stage, for the published path and the app's.

    python bench/ocr_profile.py [--paths official fp32 bf16 int8] [--patches 384] [--batch 16]

One batch of --batch mixed crops at real size (random weights), --tokens tokens each (stopping
disabled). Stages are `record_function` ranges: preprocessing, vision tower, projector,
prefill, decode steps (app.ocr.generate labels them; the official rebuild is labelled here);
"Python and the rest" is the wall time no stage covers. Also the five costliest operators.
"""
from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, record_function

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.ocr import generate  # noqa: E402
from app.ocr.config import HayaiConfig  # noqa: E402
from app.ocr.precision import apply_precision  # noqa: E402
from app.ocr.preprocess import preprocess  # noqa: E402
from app.ocr.testing import random_model  # noqa: E402
from bench.ocr_throughput import BOS, NO_STOP, crops  # noqa: E402
from bench.official_path import OfficialPath  # noqa: E402

STAGES = ("hayai.preprocess", "hayai.vision_tower", "hayai.projector", "hayai.prefill", "hayai.decode_step")


class LabelledOfficial(OfficialPath):
    """The official rebuild with the same stage labels."""

    def processor(self, budget):
        proc = super().processor(budget)

        def run(**kw):
            with record_function("hayai.preprocess"):
                return proc(**kw)
        return run

    def _prefix(self, inputs):
        vision = self.model.vision_encoder
        real = vision.forward

        def labelled(*a, **kw):
            with record_function("hayai.vision_tower"):
                return real(*a, **kw)
        vision.forward = labelled
        try:
            with record_function("hayai.projector"):  # contains the vision tower: subtracted below
                return super()._prefix(inputs)
        finally:
            del vision.forward

    def _forward(self, x, angles, mask, caches):
        with record_function("hayai.prefill" if caches is None else "hayai.decode_step"):
            return super()._forward(x, angles, mask, caches)


def profile_path(name, model, images, patches, tokens):
    def ours():
        with record_function("hayai.preprocess"):
            batch = preprocess(images, patches)
        return generate.greedy(model, batch, BOS, NO_STOP, tokens)

    run = (lambda: LabelledOfficial(model).generate(images, patches, BOS, NO_STOP, tokens)) \
        if name == "official" else ours
    run()  # warm-up
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        t0 = time.perf_counter()
        run()
        wall = time.perf_counter() - t0
    events = prof.key_averages()
    total = {e.key: e.cpu_time_total / 1e6 for e in events if e.key in STAGES}
    if name == "official":  # the projector range wraps the vision tower there
        total["hayai.projector"] = total.get("hayai.projector", 0.0) - total.get("hayai.vision_tower", 0.0)
    ops = sorted((e for e in events if not e.key.startswith("hayai.")), key=lambda e: -e.self_cpu_time_total)[:5]
    return wall, total, [(e.key, e.self_cpu_time_total / 1e6) for e in ops]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paths", nargs="+", default=["official", "fp32", "bf16", "int8"])
    ap.add_argument("--patches", type=int, default=384)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--tokens", type=int, default=32)
    args = ap.parse_args()
    torch.manual_seed(0)
    base = random_model(HayaiConfig("nova"), seed=0)
    images = crops(args.batch)
    print(f"real-size Nova, {args.batch} crops, {args.patches} patches, {args.tokens} tokens, "
          f"{torch.get_num_threads()} threads")
    for name in args.paths:
        model = base if name in ("official", "fp32") else apply_precision(copy.deepcopy(base), name)
        with torch.inference_mode():
            wall, stages, ops = profile_path(name, model, images, args.patches, args.tokens)
        covered = sum(stages.values())
        print(f"\n{name}: {wall:.2f} s wall, {args.batch / wall:.2f} crops/s")
        for stage in STAGES:
            s = stages.get(stage, 0.0)
            print(f"  {stage.removeprefix('hayai.'):<14} {s:7.2f} s  {100 * s / wall:5.1f} %")
        print(f"  {'Python + rest':<14} {wall - covered:7.2f} s  {100 * (wall - covered) / wall:5.1f} %")
        print("  top operators (self): " + ", ".join(f"{k} {v:.2f} s" for k, v in ops))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
