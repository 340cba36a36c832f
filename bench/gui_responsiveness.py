"""GUI thread responsiveness during a pipeline run: the largest gap of a heartbeat timer.

    python bench/gui_responsiveness.py [--pages 20] [--model DIR] [--detector PT]

Opens the main window offscreen on a volume of synthetic manga pages (tools.synth, 1024x1448),
starts "read all pages" and, while the worker runs, ticks a 5 ms QTimer on the GUI thread, while
also flipping pages and selecting blocks like a user. Prints the largest and 99th-percentile gap
between ticks (a frozen GUI shows as a large gap). Without --model/--detector, the demo models
(resources/demo) read the pages; pass real-size models to measure under real load.
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=20)
    ap.add_argument("--model")
    ap.add_argument("--detector")
    ap.add_argument("--tokens", type=int, default=32, help="max new tokens per crop")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = leave as is)")
    ap.add_argument("--switch-ms", type=float, default=0, help="sys.setswitchinterval in ms (0 = default 5)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hayai-bench-gui-"))
    for var, sub in (("HAYAI_DESKTOP_CONFIG_DIR", "config"), ("HAYAI_DATA_DIR", "data"),
                     ("HAYAI_MODELS_DIR", "models")):
        os.environ[var] = str(tmp / sub)

    from PySide6.QtCore import QElapsedTimer, QTimer
    from PySide6.QtWidgets import QApplication

    from app.core.settings import AppSettings
    from app.ui import session
    from app.ui.main_window import MainWindow
    from tests.ui.conftest import write_pages

    app = QApplication.instance() or QApplication([])
    model, detector = args.model, args.detector
    overrides = {"max_new_tokens": args.tokens}
    demo = ROOT / "resources" / "demo"
    model = model or str(demo / "hayai-demo-ocr")
    detector = detector or str(demo / "hayai-demo-detector.pt")
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    if args.switch_ms:
        sys.setswitchinterval(args.switch_ms / 1000)
    folder = write_pages(tmp / "vol", args.pages)

    win = MainWindow(AppSettings(model=model, detector=detector, device="cpu"))
    win.pipeline_overrides.update(overrides)
    win.configure_worker()
    win.questions.answers.update(unsaved_changes="discard", restore_autosave=False)
    win.resize(1400, 900)
    win.show()
    session.open_path(win, folder)

    gaps: list[float] = []
    clock = QElapsedTimer()
    clock.start()
    last = [clock.nsecsElapsed()]

    stamps: list[tuple[float, float]] = []  # (ms since start, gap ms)
    events: list[tuple[float, str]] = []

    def tick() -> None:
        now = clock.nsecsElapsed()
        gaps.append((now - last[0]) / 1e6)
        stamps.append((now / 1e6, gaps[-1]))
        last[0] = now

    def mark(what: str) -> None:
        events.append((clock.nsecsElapsed() / 1e6, what))

    win.host.worker.models_ready.connect(lambda _info: mark("models ready"))
    win.host.worker.page_read.connect(lambda _r, p: mark(f"page {p.name}"))

    heartbeat = QTimer(interval=5, timeout=tick)
    user = QTimer(interval=150, timeout=lambda: (win.action_next_page(), win.action_next_block()))
    finished = []
    win.run_finished.connect(finished.append)
    t0 = time.perf_counter()
    win.action_run_all()
    heartbeat.start()
    user.start()
    while not finished:
        app.processEvents()
        time.sleep(0.001)
    heartbeat.stop()
    user.stop()
    secs = time.perf_counter() - t0
    blocks = sum(len(p.blocks) for p in win.doc.project.pages)
    gaps.sort()
    p99 = gaps[int(0.99 * (len(gaps) - 1))] if gaps else 0.0
    print(f"pages: {args.pages} (synthetic, demo models unless given), blocks: {blocks}, run: {secs:.1f} s, status: {finished[0]}")
    print(f"heartbeat 5 ms: {len(gaps)} ticks, largest gap {gaps[-1]:.1f} ms, p99 {p99:.1f} ms, "
          f"median {gaps[len(gaps) // 2]:.1f} ms")
    first_page = next((t for t, e in events if e.startswith("page")), None)
    ready = next((t for t, e in events if e == "models ready"), None)
    if first_page is not None:
        after = sorted(g for t, g in stamps if t > first_page)
        if after:
            print(f"after models loaded and first page read: largest gap {after[-1]:.1f} ms "
                  f"(model loading window ended at {ready or 0:.0f} ms, first page at {first_page:.0f} ms)")
    worst = sorted(stamps, key=lambda s: -s[1])[:5]
    print("worst gaps (at ms: gap):", ", ".join(f"{t:.0f}: {g:.0f}" for t, g in worst))
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
