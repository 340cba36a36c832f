"""Loading a real-size Hayai checkpoint: time to the first result, peak memory, and whether the
weights are read in place (memory-mapped) or copied.

    python bench/ocr_load.py [--model DIR] [--precisions fp32 bf16 int8] [--batch 16] [--patches 384]

Without --model it writes a real-size Nova checkpoint with random weights (about 620 MB) to a
temporary folder. Each precision is measured in a fresh Python process (peak RSS is per process):
`import torch` + app code, `load_recognizer`, the first crop read alone, then a batch of --batch
crops (--tokens tokens each, stopping disabled so every crop costs the same). It prints the
seconds of each step, the resident memory after loading and the peak RSS of the process, and the
part of the resident memory that is the checkpoint file's own pages (mapped, not copied).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _mapped_file_mb(name: str) -> float:
    """Resident MB of this process's mappings of a file called `name` (/proc/self/smaps)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if line[:1].isdigit() or line[:1] in "abcdef":
            inside = line.rstrip().endswith(name)
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total / 1024


def child(args) -> None:
    t0 = time.perf_counter()
    import torch

    sys.path.insert(0, str(ROOT))
    from app.ocr.recognizer import load_recognizer
    from bench.ocr_throughput import crops

    t_import = time.perf_counter() - t0
    t0 = time.perf_counter()
    rec = load_recognizer(args.model, device="cpu", precision=args.precision)
    t_load = time.perf_counter() - t0
    rss_load, mapped_load = _rss_mb(), _mapped_file_mb("model.safetensors")
    stop = rec.tokenizer.eos_id, rec.tokenizer.pad_id
    rec.tokenizer.eos_id = rec.tokenizer.pad_id = -1  # no stop: every crop generates --tokens tokens
    images = crops(args.batch)
    with torch.inference_mode():
        t0 = time.perf_counter()
        rec.recognize(images[:1], args.patches, args.tokens)
        t_first = time.perf_counter() - t0
        t0 = time.perf_counter()
        rec.recognize(images, args.patches, args.tokens, batch_size=args.batch)
        t_batch = time.perf_counter() - t0
    rec.tokenizer.eos_id, rec.tokenizer.pad_id = stop
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"precision": rec.precision, "import_s": t_import, "load_s": t_load, "first_crop_s": t_first,
                      "batch_s": t_batch, "rss_after_load_mb": rss_load, "file_pages_after_load_mb": mapped_load,
                      "file_pages_end_mb": _mapped_file_mb("model.safetensors"), "peak_rss_mb": peak}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="a checkpoint folder (default: write a real-size random Nova)")
    ap.add_argument("--precisions", nargs="+", default=["fp32", "bf16", "int8"])
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--patches", type=int, default=384)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--precision", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return 0
    with tempfile.TemporaryDirectory(prefix="hayai-load-") as tmp:
        model = args.model
        if not model:
            sys.path.insert(0, str(ROOT))
            from app.ocr.checkpoint import save_checkpoint, write_char_tokenizer
            from app.ocr.config import HayaiConfig
            from app.ocr.testing import random_model

            model = str(Path(tmp) / "nova")
            save_checkpoint(random_model(HayaiConfig("nova"), seed=0), model)
            write_char_tokenizer(Path(model), [chr(0x4E00 + i) for i in range(16000)])
            print(f"wrote a real-size Nova checkpoint ({(Path(model) / 'model.safetensors').stat().st_size / 1e6:.0f} MB)")
        rows = []
        for precision in args.precisions:
            cmd = [sys.executable, __file__, "--child", "--model", model, "--precision", precision,
                   "--batch", str(args.batch), "--patches", str(args.patches), "--tokens", str(args.tokens)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=dict(os.environ))
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(rows[-1], flush=True)
    print(f"\nbatch {args.batch} at {args.patches} patches, {args.tokens} tokens per crop; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'precision':<9} {'import':>7} {'load':>6} {'1st crop':>8} {'batch':>7} {'RSS load':>9} "
          f"{'file pages':>10} {'peak RSS':>9}")
    for r in rows:
        print(f"{r['precision']:<9} {r['import_s']:>6.1f}s {r['load_s']:>5.1f}s {r['first_crop_s']:>7.1f}s "
              f"{r['batch_s']:>6.1f}s {r['rss_after_load_mb']:>7.0f}MB {r['file_pages_after_load_mb']:>8.0f}MB "
              f"{r['peak_rss_mb']:>7.0f}MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
