"""How long a process takes to end once its work is done: the interpreter's normal teardown
against `app.cli.exit_now` (exit handlers, flush, os._exit), with torch, ultralytics and a demo
model loaded as after a read in the GUI.

    python bench/exit_time.py [--runs 3]

Prints, for each way of exiting, the seconds from the last line of work to the end of the
process (median of the runs). Each run loads the demo recognizer and detector (about 10 s on a
shared CPU).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WORK = """
import sys, time
from PIL import Image
from app.detect import load_detector
from app.ocr import load_recognizer
d = load_detector('app/resources/demo/hayai-demo-detector.pt', device='cpu')
d.detect([Image.new('RGB', (512, 700), 'white')])
r = load_recognizer('app/resources/demo/hayai-demo-ocr', device='cpu')
r.recognize([Image.new('RGB', (64, 128), 'white')], max_num_patches=64, max_new_tokens=4)
print(f'{time.time():.4f}', flush=True)
"""


def one(fast: bool) -> float:
    code = WORK + ("from app.cli import exit_now; exit_now(0)\n" if fast else "")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    ended = time.time()
    return ended - float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    for label, fast in (("interpreter teardown", False), ("exit_now", True)):
        times = [one(fast) for _ in range(args.runs)]
        print(f"{label:22s} {statistics.median(times):5.2f} s  (runs: {', '.join(f'{t:.2f}' for t in times)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
