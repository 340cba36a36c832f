"""Library batch: pages per second in this process vs on a local Ray runtime, and the driver's
peak memory, with the demo models on synthetic pages.

    python bench/batch_throughput.py [--volumes 6] [--pages 4] [--memory-pages 200 40] [--skip-memory]

1. Throughput: one library of VOLUMES x PAGES synthetic pages (tools.synth, default page size
   1024x1448, PNG), read by `hayai-desktop batch` in a fresh process per configuration:
   in this process (torch on 2 threads, and on 1), Ray with 1 worker (1 CPU, then 2 CPUs) and
   with 2 workers (1 CPU each). For each: the whole run (start-up included) and the steady rate
   (pages after the first chunk / time from the first chunk to the last). The Ray overhead per
   page is 1 / rate(Ray, 1 worker, 1 CPU) - 1 / rate(in process, 1 thread): the same work on one
   thread, with and without Ray.
2. Memory: the driver's peak resident memory (ru_maxrss of the driver process; the workers and
   Ray's object store are other processes) for libraries of --memory-pages pages (volumes of 20
   pages), Ray with 2 workers. A driver whose memory does not grow with the library holds a
   bounded window, not the library.

Each configuration runs --rounds times, interleaved (the machine is shared and its load drifts);
medians are compared. "driver CPU/page" is the driver process's CPU time over the pages: in
process it is all the work, with Ray only the driver's share (reading, sending, writing).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEMO_ARGS = ["--model", str(ROOT / "app/resources/demo/hayai-demo-ocr"),
             "--detector", str(ROOT / "app/resources/demo/hayai-demo-detector.pt"),
             "--patches", "256", "--device", "cpu"]
CONFIGS = [  # (label, threads in process or None, batch options)
    ("in process, 2 threads", 2, []),
    ("in process, 1 thread", 1, []),
    ("Ray, 1 worker x 1 CPU", None, ["--ray", "--workers", "1"]),
    ("Ray, 1 worker x 2 CPUs", None, ["--ray", "--workers", "1", "--cpus-per-worker", "2"]),
    ("Ray, 2 workers x 1 CPU", None, ["--ray", "--workers", "2"]),
]


def make_library(folder: Path, volumes: int, pages: int, seed: int) -> int:
    from tools.synth import write_pages

    for v in range(volumes):
        vol = folder / f"vol {v + 1:03d}"
        write_pages(vol, pages, seed + v, workers=2)
        for truth in vol.glob("*.json"):
            truth.unlink()
    return volumes * pages


def child(argv: list[str]) -> None:
    """One batch run in this process; prints timings and peak memory as JSON on the last line."""
    threads = int(os.environ.get("BENCH_THREADS", "0"))
    if threads:
        import torch

        torch.set_num_threads(threads)
    from app.cli import _subcommand_parser
    from app.commands import batch

    args = _subcommand_parser("batch").parse_args(["batch", *argv])
    marks = []
    start = time.perf_counter()
    rc = batch.run(args, lambda e: marks.append((time.perf_counter() - start, e.pages)) if e.kind == "chunk" else None)
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"rc": rc, "wall": wall, "marks": marks, "maxrss_mb": usage.ru_maxrss / 1024,
                      "cpu_s": usage.ru_utime + usage.ru_stime}))


def run_child(library: Path, out: Path, threads: int | None, options: list[str]) -> dict:
    env = {**os.environ, "BENCH_THREADS": str(threads or 0)}
    cmd = [sys.executable, __file__, "--child", str(library), "--out", str(out), *DEMO_ARGS, *options]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def rates(result: dict) -> tuple[float, float, int]:
    marks = result["marks"]
    pages = sum(p for _, p in marks)
    first, last = marks[0][0], marks[-1][0]
    steady = (pages - marks[0][1]) / (last - first) if last > first else float("nan")
    return pages / result["wall"], steady, pages


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        return child(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--volumes", type=int, default=12)
    ap.add_argument("--pages", type=int, default=4, help="pages per volume")
    ap.add_argument("--memory-pages", type=int, nargs="*", default=[200, 40])
    ap.add_argument("--rounds", type=int, default=3, help="runs of each configuration (medians are compared)")
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--skip-memory", action="store_true")
    args = ap.parse_args()
    print(f"{os.cpu_count()} CPUs; demo models at 256 patches, detector at 512 px; pages 1024x1448 PNG", flush=True)
    with tempfile.TemporaryDirectory(prefix="hayai-bench-batch-") as tmp:
        tmp = Path(tmp)
        if not args.skip_throughput:
            total = make_library(tmp / "lib", args.volumes, args.pages, seed=4242)
            print(f"\nthroughput: {args.volumes} volumes x {args.pages} pages = {total} pages", flush=True)
            print(f"{'configuration':<26} {'whole run':>10} {'steady':>9} {'start+1st chunk':>16} "
                  f"{'driver RSS':>11} {'driver CPU/page':>16}")
            found: dict[str, list] = {label: [] for label, _, _ in CONFIGS}
            for r in range(args.rounds):  # rounds interleave the configurations: the load drifts
                for i, (label, threads, options) in enumerate(CONFIGS):
                    result = run_child(tmp / "lib", tmp / f"out{r}-{i}", threads, options)
                    whole, steady, pages = rates(result)
                    assert pages == total, (pages, total)
                    found[label].append(steady)
                    print(f"{label:<26} {whole:>6.3f} p/s {steady:>5.3f} p/s {result['marks'][0][0]:>14.1f} s "
                          f"{result['maxrss_mb']:>8.0f} MB {1000 * result['cpu_s'] / pages:>12.0f} ms", flush=True)
            med = {label: statistics.median(v) for label, v in found.items()}
            print("median steady rate: " + "; ".join(f"{k}: {v:.3f} p/s" for k, v in med.items()))
            base, ray1 = med["in process, 1 thread"], med["Ray, 1 worker x 1 CPU"]
            print(f"Ray overhead per page (1 worker x 1 CPU vs in process on 1 thread, medians): "
                  f"{1000 * (1 / ray1 - 1 / base):+.0f} ms ({1 / base:.3f} s -> {1 / ray1:.3f} s a page)")
            print(f"2 workers vs 1 worker (1 CPU each): x{med['Ray, 2 workers x 1 CPU'] / ray1:.2f}; "
                  f"vs in process on 2 threads: x{med['Ray, 2 workers x 1 CPU'] / med['in process, 2 threads']:.2f}")
        if not args.skip_memory:
            print("\ndriver peak memory, Ray with 2 workers (volumes of 20 pages)")
            for pages in args.memory_pages:
                lib = tmp / f"mem{pages}"
                make_library(lib, max(1, pages // 20), min(20, pages), seed=7000)
                result = run_child(lib, tmp / f"memout{pages}", None, ["--ray", "--workers", "2"])
                whole, steady, got = rates(result)
                print(f"{got} pages: driver peak RSS {result['maxrss_mb']:.0f} MB; {whole:.3f} p/s whole run", flush=True)


if __name__ == "__main__":
    main()
