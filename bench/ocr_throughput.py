"""OCR throughput at the real Hayai size (random weights: the cost does not depend on the values).

Two tables, both with exactly --tokens generated tokens per crop (stopping disabled):

    python bench/ocr_throughput.py [--variant nova|v2] [--budgets 256 384 512] [--batches 1 8 16]
        the decode loop alone (app.ocr.generate.greedy, fp32) at each batch size, against the same
        model decoded without the key/value cache (the whole sequence recomputed every step).

    python bench/ocr_throughput.py --compare-official [--modes fp32 bf16 int8 auto] [--batches 16] ...
        `Recognizer.recognize` (preprocessing, grouping, batching: what the app runs) in each
        precision, against a rebuild of the published inference path (bench/official_path.py:
        transformers' Siglip2ImageProcessor + the vision tower + the model card's generate loop,
        float32) on the same crops and the same weights. The modes and the official path are
        measured alternately, round after round, in this one process; each ratio is taken against
        the official measurement of its own round (the CPU may be shared), and the table shows
        the median over the rounds. "same tokens" is the share of generated tokens equal to the
        fp32 ones position by position (random weights have near-tied logits: a figure to
        report, not a gate; tests/test_precision_accuracy.py gates accuracy on a trained model).
"""
from __future__ import annotations

import argparse
import copy
import statistics
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
BOS = 16001


def crops(n: int, seed: int = 0) -> list[Image.Image]:
    """Speech-bubble-like crop sizes: tall vertical columns and wide lines."""
    rng = np.random.default_rng(seed)
    sizes = [(220, 60), (300, 110), (90, 400), (180, 180), (400, 90), (60, 260)]
    return [Image.fromarray(rng.integers(0, 256, (*sizes[i % len(sizes)], 3), dtype=np.uint8)) for i in range(n)]


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def cache_table(args) -> None:
    torch.manual_seed(0)
    model = random_model(HayaiConfig(variant=args.variant), seed=0)
    params = sum(p.numel() for p in model.parameters()) / 1e6
    print(f"Hayai {args.variant}, {params:.0f}M parameters, float32, CPU threads {torch.get_num_threads()}, "
          f"{args.tokens} tokens per crop")
    rows = []
    for budget in args.budgets:
        one = preprocess(crops(1), budget)
        generate.greedy(model, one, BOS, NO_STOP, 2)  # warm-up
        base = timed(lambda b=one: generate.greedy_uncached(model, b, BOS, NO_STOP, args.tokens))
        rows.append((budget, "uncached (baseline)", 1, 1 / base, 1.0))
        for bs in args.batches:
            batch = preprocess(crops(bs, seed=bs), budget)
            t = timed(lambda b=batch: generate.greedy(model, b, BOS, NO_STOP, args.tokens))
            rows.append((budget, "cached", bs, bs / t, (bs / t) * base))
            print(f"  {budget} patches, batch {bs}: {bs / t:.2f} crops/s", flush=True)
    print()
    print(f"{'patches':>7}  {'decoder':<20} {'batch':>5}  {'crops/s':>8}  {'x baseline':>10}")
    for budget, kind, bs, cps, ratio in rows:
        print(f"{budget:>7}  {kind:<20} {bs:>5}  {cps:>8.3f}  {ratio:>10.1f}")


class NoStopTokenizer:
    """Ids only: no stop token, so every crop generates exactly --tokens tokens."""

    eos_id = pad_id = -1

    def __init__(self, bos_id: int = BOS):
        self.bos_id = bos_id

    def decode(self, ids) -> str:
        return ""


def recognizers(model, modes: list[str]) -> dict:
    """One Recognizer per concrete precision (auto resolves to one of them, measured once)."""
    from app.ocr.precision import apply_precision, resolve_precision
    from app.ocr.recognizer import Recognizer

    cpu = torch.device("cpu")
    out = {}
    for mode in modes:
        concrete = resolve_precision(mode, cpu)
        if concrete in out:
            continue
        m = model if concrete == "fp32" else apply_precision(copy.deepcopy(model), concrete)
        out[concrete] = Recognizer(m, NoStopTokenizer(), cpu, name=f"hayai-{concrete}", precision=concrete)
    return out


def compare_official(args) -> None:
    from app.ocr.precision import resolve_precision
    from bench.official_path import OfficialPath

    torch.manual_seed(0)
    model = random_model(HayaiConfig(variant=args.variant), seed=0)
    official = OfficialPath(model)
    recs = recognizers(model, args.modes)
    auto = resolve_precision("auto", torch.device("cpu"))
    images = crops(args.crops)
    load = " ".join(f"{x:.2f}" for x in __import__("os").getloadavg())
    print(f"Hayai {args.variant} (real size, random weights), {args.crops} mixed crops, {args.tokens} tokens each, "
          f"{torch.get_num_threads()} CPU threads; auto = {auto} here; load average at start {load}", flush=True)

    def run_official(budget, bs):
        return [t for i in range(0, len(images), bs)
                for t in official.generate(images[i:i + bs], budget, BOS, NO_STOP, args.tokens)]

    def run_mode(mode, budget, bs):
        return [r.tokens for r in recs[mode].recognize(images, budget, args.tokens, batch_size=bs)]

    table = []
    for budget in args.budgets:
        for bs in args.batches:
            run_official(budget, bs)  # warm-up (allocator, processor construction)
            for mode in recs:
                run_mode(mode, budget, bs)
            speeds = {"official": [], **{m: [] for m in recs}}
            ratios = {m: [] for m in recs}
            cpu_ratios = {m: [] for m in recs}  # the same from process CPU time (less sensitive to sharing)
            tokens = {}
            for _ in range(args.rounds):
                t0, c0 = time.perf_counter(), time.process_time()
                run_official(budget, bs)
                official_cps = len(images) / (time.perf_counter() - t0)
                official_cpu = time.process_time() - c0
                speeds["official"].append(official_cps)
                for mode in recs:
                    t0, c0 = time.perf_counter(), time.process_time()
                    tokens[mode] = run_mode(mode, budget, bs)
                    cps = len(images) / (time.perf_counter() - t0)
                    speeds[mode].append(cps)
                    ratios[mode].append(cps / official_cps)
                    cpu_ratios[mode].append(official_cpu / (time.process_time() - c0))
            print(f"  {budget} patches, batch {bs}: official {statistics.median(speeds['official']):.2f} crops/s; "
                  + "; ".join(f"{m} {statistics.median(speeds[m]):.2f} ({statistics.median(ratios[m]):.2f}x)"
                              for m in recs), flush=True)
            ref = tokens.get("fp32")
            table.append((budget, bs, "official path (fp32)", statistics.median(speeds["official"]), 1.0, 1.0, None))
            for mode in recs:
                same = None
                if ref is not None:
                    pairs = [(a, b) for ta, tb in zip(tokens[mode], ref) for a, b in zip(ta, tb)]
                    same = sum(a == b for a, b in pairs) / max(1, len(pairs))
                label = mode + (" = auto" if mode == auto else "")
                table.append((budget, bs, label, statistics.median(speeds[mode]), statistics.median(ratios[mode]),
                              statistics.median(cpu_ratios[mode]), same))
    load = " ".join(f"{x:.2f}" for x in __import__("os").getloadavg())
    print(f"\n(load average at the end {load}; ratios: median over {args.rounds} rounds of mode / official "
          "measured in the same round)")
    print(f"{'patches':>7} {'batch':>5}  {'path':<22} {'crops/s':>8} {'vs official':>11} {'(CPU time)':>10} "
          f"{'same tokens':>11}")
    for budget, bs, label, cps, ratio, cpu_ratio, same in table:
        same_txt = "" if same is None else f"{100 * same:.1f} %"
        print(f"{budget:>7} {bs:>5}  {label:<22} {cps:>8.2f} {ratio:>10.2f}x {cpu_ratio:>9.2f}x {same_txt:>11}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", default="nova", choices=["nova", "v2"])
    ap.add_argument("--budgets", type=int, nargs="+", default=[256, 384, 512])
    ap.add_argument("--batches", type=int, nargs="+", default=None,
                    help="batch sizes (default 1 8 16; with --compare-official: 16)")
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--compare-official", action="store_true",
                    help="the Recognizer in each precision against the published inference path")
    ap.add_argument("--modes", nargs="+", default=["fp32", "bf16", "int8", "auto"],
                    choices=["fp32", "bf16", "int8", "fp16", "auto"])
    ap.add_argument("--crops", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: leave as is)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.compare_official:
        args.batches = args.batches or [16]
        compare_official(args)
    else:
        args.batches = args.batches or [1, 8, 16]
        cache_table(args)


if __name__ == "__main__":
    with torch.inference_mode():
        main()
