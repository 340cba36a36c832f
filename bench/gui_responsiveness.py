"""GUI thread responsiveness from the moment the window is up: the largest gap of a heartbeat timer.

    python bench/gui_responsiveness.py [--pages 20] [--model DIR] [--detector PT] [--precision P]

Opens the main window offscreen on a volume of synthetic manga pages (tools.synth, 1024x1448)
and ticks a 5 ms QTimer on the GUI thread from the first show. Two phases:

1. preload: the window is up, the worker imports torch and ultralytics and loads the models
   (app.ui.reading.device_status starts it at the first show) while the user scrolls and flips pages;
2. run: "read all pages" while the user flips pages, selects blocks, scrolls and edits text.

Prints, for each phase, the largest and 99th-percentile gap between ticks (a frozen GUI shows
as a large gap) and the worst gaps with what happened around them. Without --model/--detector
the demo models (app/resources/demo) read the pages; pass real-size models to measure under real
load (--real-ocr writes a real-size random Nova checkpoint for the OCR side).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _real_size_ocr(folder: Path) -> str:
    from app.ocr.checkpoint import save_checkpoint, write_char_tokenizer
    from app.ocr.config import HayaiConfig
    from app.ocr.testing import random_model

    save_checkpoint(random_model(HayaiConfig("nova"), seed=0), folder)
    write_char_tokenizer(folder, [chr(0x4E00 + i) for i in range(16000)])
    return str(folder)


def _summary(name: str, gaps: list[float]) -> str:
    if not gaps:
        return f"{name}: no ticks"
    g = sorted(gaps)
    return (f"{name}: {len(g)} ticks, largest gap {g[-1]:.1f} ms, p99 {g[int(0.99 * (len(g) - 1))]:.1f} ms, "
            f"median {g[len(g) // 2]:.1f} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=20)
    ap.add_argument("--model")
    ap.add_argument("--real-ocr", action="store_true", help="a real-size random Nova checkpoint as OCR model")
    ap.add_argument("--detector")
    ap.add_argument("--precision", default="auto")
    ap.add_argument("--tokens", type=int, default=32, help="max new tokens per crop")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = leave as is)")
    ap.add_argument("--switch-ms", type=float, default=0, help="sys.setswitchinterval in ms (0 = default 5)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hayai-bench-gui-"))
    for var, sub in (("HAYAI_DESKTOP_CONFIG_DIR", "config"), ("HAYAI_DATA_DIR", "data"),
                     ("HAYAI_MODELS_DIR", "models")):
        os.environ[var] = str(tmp / sub)
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    if args.switch_ms:
        sys.setswitchinterval(args.switch_ms / 1000)
    demo = ROOT / "app" / "resources" / "demo"
    if args.real_ocr:  # written in a child process: this one must not import torch before the window
        import subprocess

        subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                        f"from bench.gui_responsiveness import _real_size_ocr; _real_size_ocr(__import__('pathlib')"
                        f".Path({str(tmp / 'nova')!r}))"], check=True)
        args.model = str(tmp / "nova")
    model = args.model or str(demo / "hayai-demo-ocr")
    detector = args.detector or str(demo / "hayai-demo-detector.pt")

    from PySide6.QtCore import QElapsedTimer, QTimer
    from PySide6.QtWidgets import QApplication

    from app.core.config.settings import AppSettings
    from app.ui.shell.main_window import MainWindow
    from tests.ui.conftest import write_pages

    app = QApplication.instance() or QApplication([])
    folder = write_pages(tmp / "vol", args.pages)
    heavy_before = [m for m in ("torch", "ultralytics") if m in sys.modules]

    clock = QElapsedTimer()
    clock.start()
    last = [clock.nsecsElapsed()]
    stamps: list[tuple[float, float, str]] = []  # (ms since start, gap ms, phase)
    events: list[tuple[float, str]] = []
    phase = ["preload"]

    def tick() -> None:
        now = clock.nsecsElapsed()
        stamps.append((now / 1e6, (now - last[0]) / 1e6, phase[0]))
        last[0] = now

    def mark(what: str) -> None:
        events.append((clock.nsecsElapsed() / 1e6, what))

    heartbeat = QTimer(interval=5, timeout=tick)
    heartbeat.start()
    win = MainWindow(AppSettings(model=model, detector=detector, device="cpu", precision=args.precision))
    win.pipeline_overrides.update(max_new_tokens=args.tokens)
    win.configure_worker()
    win.questions.answers.update(unsaved_changes="discard", restore_autosave=False)
    worker = win.host.worker
    worker.models_ready.connect(lambda info: mark(f"models ready ({info.get('precision')})"))
    worker.preloaded.connect(lambda reason: mark(f"preloaded {reason or 'ok'}"))
    worker.page_read.connect(lambda _r, p: mark(f"page {p.name}"))
    win.resize(1400, 900)
    mark("show")
    win.show()
    win.session.open_path(folder)
    mark("volume open")

    step = [0]

    def user() -> None:  # what a user does while waiting: flip, select, scroll, edit
        step[0] += 1
        action = step[0] % 4
        if action == 0:
            win.slots.action_next_page()
        elif action == 1:
            win.slots.action_next_block()
        elif action == 2:
            bar = win.view.verticalScrollBar()
            bar.setValue((bar.value() + 120) % max(1, bar.maximum() + 1))
        elif win.panel.current_id:
            win._edit_text(win.panel.current_id, f"edited {step[0]}", "text")

    actor = QTimer(interval=150, timeout=user)
    actor.start()
    preloaded = []
    worker.preloaded.connect(preloaded.append)
    t0 = time.perf_counter()
    while not preloaded and time.perf_counter() - t0 < 600:
        app.processEvents()
        time.sleep(0.001)
    preload_s = time.perf_counter() - t0
    phase[0] = "run"
    finished = []
    win.run_finished.connect(finished.append)
    mark("run starts")
    t1 = time.perf_counter()
    win.slots.action_run_all()
    while not finished:
        app.processEvents()
        time.sleep(0.001)
    run_s = time.perf_counter() - t1
    heartbeat.stop()
    actor.stop()
    blocks = sum(len(p.blocks) for p in win.doc.project.pages)
    print(f"OCR model: {'real-size Nova (random weights)' if args.real_ocr else model}; precision {args.precision}; "
          f"pages: {args.pages}, blocks: {blocks}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"heavy modules imported before the window: {heavy_before or 'none'}")
    print(f"preload (window up -> models loaded, {preloaded[0] or 'ok'}): {preload_s:.1f} s; "
          f"run: {run_s:.1f} s, status {finished[0]}")
    for name in ("preload", "run"):
        print(_summary(name, [g for _, g, p in stamps if p == name][1:]))
    first_page = next((t for t, e in events if e.startswith("page")), None)
    if first_page is not None:
        print(f"first page read at {first_page:.0f} ms after start (run started at "
              f"{next(t for t, e in events if e == 'run starts'):.0f} ms)")
    worst = sorted(stamps, key=lambda s: -s[1])[:5]
    print("worst gaps (at ms, gap, phase, last event before):")
    for t, g, p in worst:
        before = [e for et, e in events if et <= t]
        print(f"  {t:.0f} ms: {g:.0f} ms ({p}; after '{before[-1] if before else 'start'}')")
    win.close()
    win.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
