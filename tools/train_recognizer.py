"""Train the small demo recognizer: a Hayai "nova" model (DSC projector) on synthetic crops.

    python tools/train_recognizer.py --out app/resources/demo/hayai-demo-ocr --minutes 45

Data: crops from tools.synth (`write_crops`) for each training seed, cached under --cache; sets
that are missing are generated in a background process while training uses the ready ones. A
validation set comes from a seed never used for training. Training: teacher forcing, cross-entropy
on [vision prefix, BOS, text, EOS] (tools/ocr_training.py), AdamW, linear warmup then a cosine
decay over the wall-clock budget (--minutes) or over --steps, gradient clipping, the patch budget
drawn per batch from --budgets. The checkpoint is written in the published layout to --out at
every evaluation (a partial run is usable) and the settings and figures to --report.

Short crops (tools/ocr_training.short_crop: 1-6 characters, budget 64/96) make up most of the
early batches: a from-scratch vision tower learns the ~700 glyphs on them several times faster
than on page crops, which then teach block layout (columns right to left, lines).

The committed demo model (app/resources/demo/hayai-demo-ocr) was trained on a 2-core CPU in four
runs, each continuing from the last (--init) with a fresh optimizer and learning-rate schedule:

    python tools/train_recognizer.py --cache /tmp/ocrtrain --minutes 30      # stopped after 18 min
    python tools/train_recognizer.py --cache /tmp/ocrtrain --minutes 25 --warmup 20 --lr 1.5e-3 \
        --short 0.6,0.3 --short-until 0.4 --eval-every 5 --init app/resources/demo/hayai-demo-ocr
    python tools/train_recognizer.py --cache /tmp/ocrtrain --minutes 85 --lr 1.2e-3 --warmup 200 \
        --short 0.4,0.2 --short-until 0.5 --budgets 128:0.2,256:0.6,384:0.2 --train-seeds 1001-1010 \
        --eval-every 10 --init app/resources/demo/hayai-demo-ocr                 # stopped after 12 min
    python tools/train_recognizer.py --cache /tmp/ocrtrain --minutes 120 --lr 1e-3 --warmup 100 \
        --short 0.5,0.3 --short-until 0.5 --budgets 128:0.25,256:0.6,384:0.15 --train-seeds 1001-1010 \
        --eval-every 12 --init app/resources/demo/hayai-demo-ocr

(app/resources/demo/hayai-demo-ocr-train.json keeps every run: each earlier one under "previous_phase".)
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from app.ocr.checkpoint import save_checkpoint, write_char_tokenizer  # noqa: E402
from app.ocr.config import HayaiConfig  # noqa: E402
from app.ocr.model import HayaiModel  # noqa: E402
from app.ocr.preprocess import preprocess  # noqa: E402
from app.ocr.tokenizer import JsonTokenizer  # noqa: E402
from tools.ocr_training import evaluate, load_images, loss_on_batch, read_manifest, short_crop  # noqa: E402
from tools.synth import charset  # noqa: E402

# The demo model's sizes (fast on a CPU; see app/resources/demo/hayai-demo-ocr-train.json for the figures).
DEMO_SIZES = dict(d_model=128, d_vision=96, d_ffn=384, n_layers=2, n_heads=4, n_kv_heads=1, head_dim=32,
                  vision_layers=3, vision_heads=2, vision_intermediate=384, vision_position_grid=16)


def parse_seeds(text: str) -> list[int]:
    """'1001-1004,1010' -> [1001, 1002, 1003, 1004, 1010]."""
    seeds = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        seeds.extend(range(int(a), int(b or a) + 1))
    return seeds


class CropSets:
    """Training crop sets, one per seed under `cache/s{seed}`; missing ones are generated in a
    background process, one at a time, and join the pool when their manifest appears."""

    def __init__(self, cache: Path, seeds: list[int], count: int, generate: bool = True):
        self.cache, self.seeds, self.count, self.generate = cache, seeds, count, generate
        self.samples = []
        self.ready: set[int] = set()
        self._proc: subprocess.Popen | None = None
        self._proc_seed: int | None = None

    def manifest(self, seed: int) -> Path:
        return self.cache / f"s{seed}" / "manifest.jsonl"

    def generate_now(self, seed: int) -> None:
        from tools.synth import write_crops

        write_crops(self.cache / f"s{seed}", self.count, seed)

    def refresh(self) -> None:
        """Add newly finished sets; start generating the next missing one."""
        for seed in self.seeds:
            if seed not in self.ready and self.manifest(seed).is_file() and seed != self._proc_seed:
                self.samples.extend(read_manifest(self.manifest(seed)))
                self.ready.add(seed)
        if self._proc is not None and self._proc.poll() is not None:
            self._proc, self._proc_seed = None, None
            return self.refresh()
        missing = [s for s in self.seeds if s not in self.ready and s != self._proc_seed]
        if self.generate and self._proc is None and missing:
            seed = missing[0]
            self._proc_seed = seed
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "tools.synth", "crops", str(self.cache / f"s{seed}"),
                 "--count", str(self.count), "--seed", str(seed)], cwd=ROOT,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            self._proc.wait()


def val_set(cache: Path, seed: int, count: int):
    folder = cache / f"val{seed}_{count}"
    if not (folder / "manifest.jsonl").is_file():
        from tools.synth import write_crops

        write_crops(folder, count, seed)
    samples = read_manifest(folder / "manifest.jsonl")
    return load_images(samples), [s.text for s in samples]


def save_model(model: HayaiModel, chars: list[str], out: Path) -> None:
    """Write the published layout to `out` through a temporary folder (never half-written)."""
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    save_checkpoint(model, tmp)
    write_char_tokenizer(tmp, chars)
    old = out.with_name(out.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        os.replace(out, old)
    os.replace(tmp, out)
    shutil.rmtree(old, ignore_errors=True)


def lr_at(progress: float, step: int, peak: float, warmup: int, floor: float = 0.05) -> float:
    """Linear warmup over `warmup` steps, then cosine from peak to floor * peak as progress goes 0 -> 1."""
    warm = min(1.0, (step + 1) / warmup)
    return peak * warm * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0))))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=ROOT / "app/resources/demo/hayai-demo-ocr")
    p.add_argument("--report", type=Path, default=ROOT / "app/resources/demo/hayai-demo-ocr-train.json")
    p.add_argument("--cache", type=Path, default=Path("/tmp/hayai-ocr-train"))
    p.add_argument("--train-seeds", default="1001-1010")
    p.add_argument("--crops-per-seed", type=int, default=5000)
    p.add_argument("--no-generate", action="store_true", help="use only the crop sets already cached")
    p.add_argument("--val-seed", type=int, default=2001)
    p.add_argument("--val-count", type=int, default=150)
    p.add_argument("--final-val-count", type=int, default=300)
    p.add_argument("--minutes", type=float, default=45.0, help="training wall-clock budget (schedule follows it)")
    p.add_argument("--steps", type=int, default=0, help="fixed number of steps instead of --minutes")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--weight-decay", type=float, default=0.05)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--label-smoothing", type=float, default=0.05)
    p.add_argument("--budgets", default="128:0.4,256:0.5,384:0.1", help="patch budgets:weights per batch")
    p.add_argument("--short", default="0.9,0.3",
                   help="share of warm-up batches of short crops (tools/ocr_training.short_crop): early,late")
    p.add_argument("--short-until", type=float, default=0.55, help="fraction of the run that is 'early'")
    p.add_argument("--short-budgets", default="64:0.8,96:0.2")
    p.add_argument("--short-batch", type=int, default=64)
    p.add_argument("--eval-every", type=float, default=6.0, help="minutes between evaluations + saves")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--no-bf16", action="store_true", help="train in float32 (default: bfloat16 autocast)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--init", type=Path, default=None, help="continue from this checkpoint folder (same sizes)")
    p.add_argument("--bench", type=int, default=0, help="time N steps at each budget and exit")
    args = p.parse_args(argv)

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    chars = list(charset())
    cfg = HayaiConfig(variant="nova", vocab_size=len(chars) + 4, **DEMO_SIZES)
    model = HayaiModel(cfg).train()
    if args.init is not None:
        from app.ocr.loading import load_model

        loaded, _ = load_model(args.init, "cpu")
        if loaded.cfg != cfg:
            raise SystemExit(f"{args.init}: sizes differ from the demo sizes: {loaded.cfg}")
        model.load_state_dict(loaded.state_dict())
    n_params = sum(p.numel() for p in model.parameters())
    tok_dir = args.cache / "tokenizer"
    tok_dir.mkdir(parents=True, exist_ok=True)
    write_char_tokenizer(tok_dir, chars)
    tok = JsonTokenizer(tok_dir)
    budgets = [(int(b), float(w)) for b, w in (x.split(":") for x in args.budgets.split(","))]
    short_budgets = [(int(b), float(w)) for b, w in (x.split(":") for x in args.short_budgets.split(","))]
    short_early, short_late = (float(v) for v in args.short.split(","))
    np_rng = __import__("numpy").random.default_rng(args.seed)

    sets = CropSets(args.cache, parse_seeds(args.train_seeds), args.crops_per_seed, not args.no_generate)
    sets.refresh()
    if not sets.samples:
        first = sets.seeds[0]
        sets.close()
        print(f"generating crop set {first} ({args.crops_per_seed} crops) ...", flush=True)
        sets.generate_now(first)
        sets._proc_seed = None
        sets.refresh()

    encode_cache: dict[str, list[int]] = {}

    def encode(text: str) -> list[int]:
        if text not in encode_cache:
            ids = tok.encode(text)
            if len(ids) != len(text) or tok.unk_id in ids:
                raise ValueError(f"text {text!r} does not encode one id per character: {ids}")
            encode_cache[text] = ids
        return encode_cache[text]

    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "embedding" not in n]
    no_decay = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "embedding" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.98))

    def train_step(step: int, progress: float, budget: int, short: bool = False) -> float:
        if short:
            pairs = [short_crop(np_rng) for _ in range(args.short_batch)]
            images, texts = [im for im, _ in pairs], [t for _, t in pairs]
        else:
            batch_samples = rng.sample(sets.samples, args.batch)
            images, texts = load_images(batch_samples), [s.text for s in batch_samples]
        pixels = preprocess(images, budget)
        for g in opt.param_groups:
            g["lr"] = lr_at(progress, step, args.lr, args.warmup)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=not args.no_bf16):
            loss = loss_on_batch(model, pixels, [encode(t) for t in texts], tok.bos_id,
                                 tok.eos_id, tok.pad_id, args.label_smoothing)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        opt.step()
        return float(loss.detach())

    if args.bench:
        for budget, _ in budgets:
            t0 = time.perf_counter()
            for i in range(args.bench):
                train_step(i, 0.0, budget)
            dt = (time.perf_counter() - t0) / args.bench
            print(f"budget {budget}: {dt:.2f} s/step, {args.batch / dt:.1f} crops/s", flush=True)
        sets.close()
        return 0

    val_images, val_texts = val_set(args.cache, args.val_seed, args.val_count)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {"model": {"variant": "nova", **{k: v for k, v in asdict(cfg).items() if k != "variant"},
                        "parameters": n_params},
              "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
                           if k not in ("out", "report", "cache", "init")},
              "charset_size": len(chars), "history": []}
    if args.init is not None and args.report.is_file():  # a continued run keeps the earlier phase's record
        report["previous_phase"] = json.loads(args.report.read_text(encoding="utf-8"))
    print(f"model: {n_params / 1e6:.2f} M parameters, vocab {cfg.vocab_size}; "
          f"{len(sets.samples)} training crops ready", flush=True)

    t_start = time.perf_counter()
    train_time = 0.0
    next_eval = args.eval_every * 60
    step, ema = 0, None
    seen = {"page_crops": 0, "short_crops": 0}
    budget_secs = args.minutes * 60
    try:
        while True:
            progress = step / args.steps if args.steps else train_time / budget_secs
            if progress >= 1.0:
                break
            short = rng.random() < (short_early if progress < args.short_until else short_late)
            pool = short_budgets if short else budgets
            budget = rng.choices([b for b, _ in pool], weights=[w for _, w in pool])[0]
            t0 = time.perf_counter()
            loss = train_step(step, progress, budget, short)
            train_time += time.perf_counter() - t0
            step += 1
            seen["short_crops" if short else "page_crops"] += args.short_batch if short else args.batch
            if not short:
                ema = loss if ema is None else 0.95 * ema + 0.05 * loss
            if step % 20 == 0:
                print(f"step {step} loss {loss:.3f} ema {ema or 0:.3f} budget {budget}{' short' if short else ''} lr "
                      f"{opt.param_groups[0]['lr']:.2e} train {train_time / 60:.1f} min "
                      f"crops {len(sets.samples)}", flush=True)
            if train_time >= next_eval:
                next_eval += args.eval_every * 60
                sets.refresh()
                figures = evaluate(model, tok, val_images, val_texts, 256)
                save_model(model, chars, args.out)
                entry = {"step": step, "train_minutes": round(train_time / 60, 2), "loss_ema": round(ema or 0, 4),
                         **seen, **figures}
                report["history"].append(entry)
                print(f"eval {json.dumps(entry)}", flush=True)
                args.report.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    finally:
        sets.close()

    save_model(model, chars, args.out)
    report["training"] = {"steps": step, "train_minutes": round(train_time / 60, 2),
                          "wall_minutes": round((time.perf_counter() - t_start) / 60, 2),
                          **seen, "distinct_training_crops": len(sets.samples),
                          "train_seeds": sorted(sets.ready), "threads": args.threads}
    final_images, final_texts = val_set(args.cache, args.val_seed, args.final_val_count)
    report["final_val"] = [evaluate(model, tok, final_images, final_texts, n) for n in (256, 384, 512)]
    report["final_val_seed"] = args.val_seed
    args.report.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"final {json.dumps(report['final_val'])}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
