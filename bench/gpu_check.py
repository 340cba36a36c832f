"""GPU readiness of the Hayai engine, in one run (prepared to work the first time on a GPU).

    python bench/gpu_check.py [--device cuda|cpu] [--size real|tiny] [--out report.json]

1. Exactness: the golden crops read in fp32 on the device must give the published tokens
   (tests/golden: expected.json and its checkpoint writer, or --golden DIR holding both);
   without them, the same real-size random checkpoint read in fp32 on the CPU is the reference.
2. fp16 (the model card's GPU setting; on the CPU its float16 autocast): the share of crops and
   of tokens equal to fp32 (reported: random weights have near-tied logits).
3. Speed: crops/s at batch 1 / 8 / 32 and budgets 256 / 384 / 512, fp32 and the device's auto
   precision, 32 tokens per crop (stopping disabled).
4. CUDA graphs for the decode step (bench/static_decode.py): tokens equal to the eager step, and
   ms per step eager vs replayed. On the CPU only the static step is checked (no graphs there).

--device cpu runs every part that does not need CUDA (tests/test_gpu_check.py runs it with
--size tiny), so the script is known to work before a GPU is at hand.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.ocr.recognizer import Recognizer, load_recognizer  # noqa: E402
from bench.ocr_throughput import NoStopTokenizer, crops  # noqa: E402

DEFAULT_GOLDEN = ROOT / "tests" / "golden"


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _golden(path: Path | None):
    """(checkpoint writer module, expected dict) or None. The writer is the folder's writer.py
    (tests/golden) or make_checkpoint.py."""
    if path is None or not (path / "expected.json").is_file():
        return None
    writer = path / "writer.py" if (path / "writer.py").is_file() else path / "make_checkpoint.py"
    spec = importlib.util.spec_from_file_location("golden_writer", writer)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, json.loads((path / "expected.json").read_text())


def write_model(folder: Path, size: str, golden) -> Path:
    if golden is not None and size == "real":
        module, expected = golden
        return module.write_checkpoint(folder, variant="nova", seed=expected["seed"])
    from app.ocr.checkpoint import save_checkpoint, write_char_tokenizer
    from app.ocr.config import HayaiConfig
    from app.ocr.testing import TINY_CHARS, random_model, tiny_config

    cfg = HayaiConfig("nova") if size == "real" else tiny_config("nova")
    save_checkpoint(random_model(cfg, seed=7), folder)
    chars = [chr(0x4E00 + i) for i in range(cfg.vocab_size - 4)] if size == "real" else TINY_CHARS
    write_char_tokenizer(folder, chars)
    return folder


def check_exactness(folder, device, golden, budgets, tokens) -> dict:
    images = golden[0].golden_crops(seed=golden[1]["seed"]) if golden else crops(4, seed=7)
    n = golden[1]["max_new_tokens"] if golden else tokens
    fp32 = load_recognizer(folder, device=str(device), precision="fp32")
    ref = None if golden else load_recognizer(folder, device="cpu", precision="fp32")
    fp16 = load_recognizer(folder, device=str(device), precision="fp16")
    out = {"reference": "published tokens (expected.json)" if golden else "fp32 on the CPU", "budgets": {}}
    for budget in budgets:
        want = (golden[1]["expected"]["nova"][str(budget)] if golden
                else [r.tokens for r in ref.recognize(images, budget, n)])
        alone = [fp32.recognize([im], budget, n)[0].tokens for im in images]
        batched = [r.tokens for r in fp32.recognize(images, budget, n, batch_size=len(images))]
        half = [r.tokens for r in fp16.recognize(images, budget, n, batch_size=len(images))]
        pairs = [(a, b) for x, y in zip(half, want) for a, b in zip(x, y)]
        out["budgets"][budget] = {
            "fp32_exact_alone": alone == want, "fp32_exact_batched": batched == want,
            "fp16_crops_equal": sum(x == y for x, y in zip(half, want)) / len(want),
            "fp16_tokens_equal": sum(a == b for a, b in pairs) / max(1, len(pairs))}
        print(f"  {budget} patches: fp32 exact alone {alone == want}, batched {batched == want}; fp16 "
              f"{100 * out['budgets'][budget]['fp16_tokens_equal']:.1f} % tokens equal", flush=True)
    return out


def measure_speed(folder, device, budgets, batches, tokens, n_crops) -> list[dict]:
    rows = []
    images = crops(n_crops)
    for precision in dict.fromkeys(("fp32", "auto")):
        loaded = load_recognizer(folder, device=str(device), precision=precision)
        rec = Recognizer(loaded.model, NoStopTokenizer(loaded.tokenizer.bos_id), loaded._device, loaded.name, precision=loaded.precision)
        for budget in budgets:
            for bs in batches:
                rec.recognize(images[:bs], budget, 2, batch_size=bs)  # warm-up
                sync(device)
                t0 = time.perf_counter()
                rec.recognize(images, budget, tokens, batch_size=bs)
                sync(device)
                cps = len(images) / (time.perf_counter() - t0)
                rows.append({"precision": f"{precision} ({rec.precision})", "patches": budget, "batch": bs,
                             "crops_per_s": cps})
                print(f"  {precision} ({rec.precision}) {budget} patches, batch {bs}: {cps:.2f} crops/s", flush=True)
    return rows


def try_cuda_graphs(folder, device, tokens, batch) -> dict:
    """The static decode step against the engine's eager loop; replayed as a CUDA graph on CUDA."""
    from app.ocr import generate
    from app.ocr.preprocess import preprocess
    from bench.static_decode import StaticDecoder

    rec = load_recognizer(folder, device=str(device), precision="fp32")
    model, bos = rec.model, rec.tokenizer.bos_id
    pixels = preprocess(crops(batch, seed=3), 256)
    with torch.no_grad():
        eager = generate.greedy(model, pixels, bos, (-1,), tokens)
        static = StaticDecoder(model, generate.encode_prefix(model, pixels), bos, tokens)
        sync(device)
        t0 = time.perf_counter()
        got = static.run()
        sync(device)
        eager_ms = 1000 * (time.perf_counter() - t0) / max(1, tokens - 1)
    out = {"static_step_equals_eager": got == eager, "eager_ms_per_step": eager_ms, "graph": "not tried (not CUDA)"}
    print(f"  static decode step gives the eager tokens: {got == eager}; {eager_ms:.1f} ms/step", flush=True)
    if device.type != "cuda":
        return out
    try:
        with torch.no_grad():
            dec = StaticDecoder(model, generate.encode_prefix(model, pixels), bos, tokens)
            side = torch.cuda.Stream()  # warm up on a side stream first, as CUDA graph capture asks
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                dec.pos.fill_(1)
                dec.step()  # writes position 1 of the cache, which the run writes again before reading
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                logits = dec.step()

            def replay():
                graph.replay()
                return logits

            sync(device)
            t0 = time.perf_counter()
            got_graph = dec.run(replay)
            sync(device)
            out["graph"] = {"tokens_equal": got_graph == eager,
                            "ms_per_step": 1000 * (time.perf_counter() - t0) / max(1, tokens - 1)}
        print(f"  CUDA graph: {out['graph']}", flush=True)
    except (RuntimeError, torch.OutOfMemoryError) as exc:
        out["graph"] = f"failed: {exc}"
        print(f"  CUDA graph failed: {exc}", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--size", default="real", choices=["real", "tiny"], help="tiny: a small model, for tests")
    ap.add_argument("--golden", type=Path, default=DEFAULT_GOLDEN, help="folder with expected.json")
    ap.add_argument("--budgets", type=int, nargs="+", default=[256, 384, 512])
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--crops", type=int, default=32, help="crops per speed measurement")
    ap.add_argument("--out", type=Path, help="write the report as JSON")
    args = ap.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("no CUDA device here: run with --device cpu to check the script itself", file=sys.stderr)
        return 2
    golden = _golden(args.golden) if args.size == "real" else None
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"device: {name}; torch {torch.__version__}; model: {args.size} Nova; "
          f"reference: {'published golden tokens' if golden else 'fp32 on the CPU'}", flush=True)
    report = {"device": name, "torch": torch.__version__, "size": args.size}
    with tempfile.TemporaryDirectory(prefix="hayai-gpu-check-") as tmp, torch.inference_mode():
        folder = write_model(Path(tmp) / "nova", args.size, golden)
        print("1-2. exactness (fp32) and fp16 agreement", flush=True)
        report["exactness"] = check_exactness(folder, device, golden, args.budgets, min(args.tokens, 8))
        print("3. speed", flush=True)
        report["speed"] = measure_speed(folder, device, args.budgets, args.batches, args.tokens, args.crops)
        print("4. decode step with static shapes / CUDA graphs", flush=True)
        report["cuda_graphs"] = try_cuda_graphs(folder, device, args.tokens, max(args.batches))
    print("\n| precision | patches | batch | crops/s |\n|---|---|---|---|")
    for r in report["speed"]:
        print(f"| {r['precision']} | {r['patches']} | {r['batch']} | {r['crops_per_s']:.2f} |")
    if args.out:
        args.out.write_text(json.dumps(report, indent=2, default=str))
    exact = all(b["fp32_exact_alone"] and b["fp32_exact_batched"] for b in report["exactness"]["budgets"].values())
    print(f"\nfp32 exact on {name}: {exact}")
    return 0 if exact else 1


if __name__ == "__main__":
    raise SystemExit(main())
