"""How close the recognizer runs to this machine's limit: achieved FLOP/s as a share of a GEMM peak
measured in the same run, per precision and patch budget.

    python bench/ocr_efficiency.py [--modes fp32 bf16 int8 auto] [--budgets 256 384 512] [--crops 8]
        [--tokens 32] [--rounds 2] [--threads 0]

Real-size Hayai v2.5 Nova with random weights (the cost does not depend on the values), --crops
mixed crops (bench/ocr_throughput.py's shapes), exactly --tokens generated tokens per crop
(stopping disabled). For each mode and budget, round after round in this one process:

- peak: the GEMM rate of this machine in that precision on the vision tower's own matrix
  shapes (tokens x 768 -> 768 / 3072 -> 768, as many tokens as the batch's real patches), best
  of a few repeats; int8 uses the same dynamically quantized linear layers as the int8 mode;
- tower: `generate.vision_features` on the preprocessed batch (what the recognizer runs: the
  packed tower of app/ocr/vision.py), and "padded": transformers' `Siglip2VisionModel.forward`
  on the same batch padded to the budget (the tower before the packing), side by side;
- whole: `Recognizer.recognize` (preprocessing, grouping, tower, projector, prefill, decode).

FLOPs are counted from the shapes each crop really has, padding excluded (a multiply-add is 2
FLOPs): the tower's linear layers and attention over the crop's own h*w patches, the DSC
projector over its ceil(h/2)*ceil(w/2) tokens, the decoder's prefill of [vision tokens, BOS] and
each decode step over its real context, and the output head for each generated token. "run /
useful" is the share of tower tokens the tower actually computed over the real ones (padding
to the budget makes it > 1). Each share is achieved FLOP/s / peak of the same round; the table
shows medians over the rounds. On a shared CPU the absolute figures move with the load; the
shares, measured side by side, much less.
"""
from __future__ import annotations

import argparse
import copy
import math
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.ocr import generate  # noqa: E402
from app.ocr.config import HayaiConfig  # noqa: E402
from app.ocr.preprocess import preprocess  # noqa: E402
from app.ocr.testing import random_model  # noqa: E402
from bench.ocr_throughput import NoStopTokenizer, crops  # noqa: E402


# --- FLOPs from the shapes (2 per multiply-add) ------------------------------------------------
def tower_flops(cfg: HayaiConfig, n: int) -> float:
    """SigLIP2 tower over one crop of n real patches: patch embedding, per layer q/k/v/o, the two
    MLP layers, and attention (scores and weighted sum over the crop's own n keys)."""
    C, inner, P = cfg.d_vision, cfg.vision_intermediate, 3 * cfg.patch_size ** 2
    per_layer = 2 * n * (4 * C * C + 2 * C * inner) + 2 * 2 * n * n * C
    return 2 * n * P * C + cfg.vision_layers * per_layer


def prefix_tokens(cfg: HayaiConfig, rows: int, cols: int) -> int:
    return math.ceil(rows / 2) * math.ceil(cols / 2) if cfg.projector == "dsc" else rows * cols


def projector_flops(cfg: HayaiConfig, m: int) -> float:
    C, D = cfg.d_vision, cfg.d_model
    return 2 * m * (4 * C * D + D * D) if cfg.projector == "dsc" else 2 * m * (C * D + D * D)


def decoder_token_flops(cfg: HayaiConfig, context: int) -> float:
    """One token through the decoder layers, attending `context` keys."""
    D, H, K, E, ffn = cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.head_dim, cfg.d_ffn
    linear = 2 * (D * H * E + 2 * D * K * E + H * E * D + 3 * D * ffn)
    return cfg.n_layers * (linear + 2 * 2 * H * E * context)


def decoder_flops(cfg: HayaiConfig, m: int, tokens: int) -> tuple[float, float]:
    """(prefill, decode) FLOPs for a prefix of m vision tokens and `tokens` generated tokens."""
    head = 2 * cfg.d_model * cfg.vocab_size
    # prefill: vision tokens see the m vision tokens, BOS sees m + 1; logits of BOS only
    prefill = m * decoder_token_flops(cfg, m) + decoder_token_flops(cfg, m + 1) + head
    decode = sum(decoder_token_flops(cfg, m + 1 + s) + head for s in range(1, tokens))
    return prefill, decode


def batch_flops(cfg: HayaiConfig, shapes: list[tuple[int, int]], tokens: int) -> dict[str, float]:
    out = {"tower": 0.0, "projector": 0.0, "prefill": 0.0, "decode": 0.0}
    for rows, cols in shapes:
        m = prefix_tokens(cfg, rows, cols)
        out["tower"] += tower_flops(cfg, rows * cols)
        out["projector"] += projector_flops(cfg, m)
        pre, dec = decoder_flops(cfg, m, tokens)
        out["prefill"] += pre
        out["decode"] += dec
    out["whole"] = sum(out.values())
    return out


# --- the same-run GEMM peak ------------------------------------------------------------------
class TowerGemms:
    """The tower's linear shapes (T tokens): C -> C (q, k, v, o), C -> 4C, 4C -> C, in a mode's dtype."""

    def __init__(self, cfg: HayaiConfig, mode: str, tokens: int):
        C, inner = cfg.d_vision, cfg.vision_intermediate
        g = torch.Generator().manual_seed(0)
        dtype = torch.bfloat16 if mode == "bf16" else torch.float32
        self.x = torch.randn(tokens, C, generator=g).to(dtype)
        self.h = torch.randn(tokens, inner, generator=g).to(dtype)
        layers = [torch.nn.Linear(C, C), torch.nn.Linear(C, inner), torch.nn.Linear(inner, C)]
        if mode == "int8":
            from torch.ao.nn.quantized.dynamic import Linear as QLinear

            qlayers = []
            for lin in layers:
                q = QLinear(lin.in_features, lin.out_features, dtype=torch.qint8)
                q.set_weight_bias(torch.quantize_per_channel(
                    lin.weight.detach(), lin.weight.detach().abs().amax(1) / 127 + 1e-8,
                    torch.zeros(lin.out_features, dtype=torch.long), 0, torch.qint8), lin.bias.detach())
                qlayers.append(q)
            self.layers = qlayers
        else:
            self.layers = [lin.to(dtype) for lin in layers]
        self.flops = 2 * tokens * (4 * C * C + 2 * C * inner)

    def run(self) -> None:
        qkvo, fc1, fc2 = self.layers
        for _ in range(4):
            qkvo(self.x)
        fc1(self.x)
        fc2(self.h)

    def peak(self, repeats: int = 5) -> float:
        """FLOP/s: best of `repeats` timed runs of one layer's worth of products."""
        self.run()  # warm-up
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            self.run()
            best = min(best, time.perf_counter() - t0)
        return self.flops / best


def tower_tokens_run(model) -> list[int]:
    """A hook list: the number of tokens each call of the first encoder layer's fc1 computed."""
    seen: list[int] = []
    fc1 = model.vision_encoder.encoder.layers[0].mlp.fc1
    fc1.register_forward_pre_hook(lambda _m, args: seen.append(args[0].numel() // args[0].shape[-1]))
    return seen


def main() -> int:
    from app.ocr.precision import apply_precision, resolve_precision
    from app.ocr.recognizer import Recognizer

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modes", nargs="+", default=["fp32", "bf16"], choices=["fp32", "bf16", "int8", "auto"])
    ap.add_argument("--budgets", type=int, nargs="+", default=[256, 384, 512])
    ap.add_argument("--crops", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: leave as is)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    cpu = torch.device("cpu")
    cfg = HayaiConfig("nova")
    base = random_model(cfg, seed=0)
    modes = list(dict.fromkeys(resolve_precision(m, cpu) for m in args.modes))
    auto = resolve_precision("auto", cpu)
    images = crops(args.crops)
    cpu_name = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("model name")), "unknown CPU") if Path("/proc/cpuinfo").exists() else "?"
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{cpu_name}, {torch.backends.cpu.get_cpu_capability()}, {torch.get_num_threads()} threads, "
          f"torch {torch.__version__}; real-size Nova, random weights, {args.crops} crops, {args.tokens} tokens "
          f"each; auto = {auto} here; load average at start {load}", flush=True)
    rows = []
    for mode in modes:
        model = base if mode == "fp32" else apply_precision(copy.deepcopy(base), mode)
        rec = Recognizer(model, NoStopTokenizer(), cpu, name=f"hayai-{mode}", precision=mode)
        seen = tower_tokens_run(model)
        for budget in args.budgets:
            batch = preprocess(images, budget)
            shapes = [tuple(s) for s in batch.spatial_shapes.tolist()]
            flops = batch_flops(cfg, shapes, args.tokens)
            real = sum(r * c for r, c in shapes)
            gemms = TowerGemms(cfg, mode, real)
            with torch.inference_mode():
                generate.vision_features(model, batch)  # warm-up
                rec.recognize(images, budget, args.tokens, batch_size=args.crops)
                seen.clear()
                generate.vision_features(model, batch)
                run_tokens = sum(seen)
                per = {k: [] for k in ("peak", "tower_s", "padded_s", "whole_s", "tower_share", "padded_share",
                                       "whole_share")}
                for _ in range(args.rounds):
                    peak = gemms.peak()
                    t0 = time.perf_counter()
                    generate.vision_features(model, batch)
                    tower_s = time.perf_counter() - t0
                    t0 = time.perf_counter()
                    model.vision_encoder(pixel_values=batch.pixel_values.to(gemms.x.dtype),
                                         pixel_attention_mask=batch.pixel_attention_mask,
                                         spatial_shapes=batch.spatial_shapes)
                    padded_s = time.perf_counter() - t0
                    t0 = time.perf_counter()
                    rec.recognize(images, budget, args.tokens, batch_size=args.crops)
                    whole_s = time.perf_counter() - t0
                    per["peak"].append(peak)
                    per["tower_s"].append(tower_s)
                    per["whole_s"].append(whole_s)
                    per["padded_s"].append(padded_s)
                    per["padded_share"].append(flops["tower"] / padded_s / peak)
                    per["tower_share"].append(flops["tower"] / tower_s / peak)
                    per["whole_share"].append(flops["whole"] / whole_s / peak)
            med = {k: statistics.median(v) for k, v in per.items()}
            row = (mode + (" (auto)" if mode == auto else ""), budget, args.crops / med["whole_s"],
                   flops["tower"] / args.crops / 1e9, flops["whole"] / args.crops / 1e9, run_tokens / real,
                   flops["tower"] / med["tower_s"] / 1e9, flops["whole"] / med["whole_s"] / 1e9,
                   med["peak"] / 1e9, med["tower_share"], med["whole_share"], med["padded_share"],
                   statistics.median(p / t for p, t in zip(per["padded_s"], per["tower_s"])))
            rows.append(row)
            print(f"  {row[0]} {budget}: {row[2]:.2f} crops/s, tower {row[6]:.1f} GFLOP/s = {100 * row[9]:.0f} % "
                  f"of {row[8]:.1f} (padded tower {100 * row[11]:.0f} %, packed {row[12]:.2f}x faster), "
                  f"whole {row[7]:.1f} GFLOP/s = {100 * row[10]:.0f} %", flush=True)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\n(load average at the end {load}; GFLOP per crop counted without padding; medians over "
          f"{args.rounds} rounds; shares against the same round's peak)")
    print(f"{'mode':<12} {'patches':>7} {'crops/s':>8} {'tower GF':>9} {'whole GF':>9} {'run/useful':>10} "
          f"{'tower GF/s':>10} {'whole GF/s':>10} {'peak GF/s':>9} {'tower %':>8} {'whole %':>8} {'padded %':>8} "
          f"{'packed x':>8}")
    for label, budget, cps, tgf, wgf, ratio, tgfs, wgfs, peak, ts, ws, ps, px in rows:
        print(f"{label:<12} {budget:>7} {cps:>8.2f} {tgf:>9.1f} {wgf:>9.1f} {ratio:>10.2f} {tgfs:>10.1f} "
              f"{wgfs:>10.1f} {peak:>9.1f} {100 * ts:>7.0f}% {100 * ws:>7.0f}% {100 * ps:>7.0f}% {px:>7.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
