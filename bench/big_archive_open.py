"""Open a 10,000-page CBZ in the window and measure how long it takes and how much memory it
adds to the app at rest.

A child process starts the real window (offscreen, no models loaded; numpy and Pillow imported,
as the app's worker has them at rest), settles, and reads its resident memory (the app at rest); then opens the archive (`session.open_path`, as File > Open
does) and waits until the first page is on screen. Reported: seconds from the call to the
first page shown (wall clock, and the CPU time the app's threads used until then: on a busy
machine the wall clock is mostly waiting for a core), resident memory above rest then, and again once the thumbnail job has run for
`--settle` more seconds (thumbnails are made in the background, so memory may still grow), and
the peak (VmHWM) above rest.

    python bench/big_archive_open.py [--pages 10000] [--settle 20]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, sys, time
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.core.config.settings import AppSettings
from app.ui.shell import session
from app.ui.shell.main_window import MainWindow

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024  # MiB

def spin(seconds):
    loop = QEventLoop()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()

from app.core.sources import source as _source  # noqa: F401 - at rest the app has numpy and Pillow loaded (its worker imports torch)
w = MainWindow(AppSettings())
w.questions.answers.update(restore_autosave=False, unsaved_changes="discard")
w.resize(1280, 800)
w.show()
spin(2.0)
rest = status("VmRSS")
shown = []
w.page_shown.connect(lambda _name: shown.append(time.perf_counter()))  # its image is on the canvas
start, cpu0 = time.perf_counter(), time.process_time()
ok = w.session.open_path(sys.argv[1])
returned = time.perf_counter()
while not shown and time.perf_counter() - start < 120:
    app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
first = (shown[0] if shown else float("nan")) - start
cpu = time.process_time() - cpu0  # all threads of the app: what a quiet machine would take at most
after_open = status("VmRSS")
spin(float(sys.argv[2]))
settled = status("VmRSS")
print(json.dumps({"ok": ok, "pages": w.page_list.count(), "open_returned_s": returned - start,
                  "first_page_shown_s": first, "cpu_s": cpu, "rest_mib": rest, "above_rest_after_open_mib": after_open - rest,
                  "above_rest_settled_mib": settled - rest, "peak_above_rest_mib": status("VmHWM") - rest}))
w.shutdown()
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--settle", type=float, default=20.0)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from tests.bad_sources import big_archive

    with tempfile.TemporaryDirectory(prefix="hayai-big-") as tmp:
        archive = big_archive(Path(tmp) / f"{args.pages}-pages.cbz", args.pages)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HAYAI_DATA_DIR": str(Path(tmp) / "data"),
               "HAYAI_DESKTOP_CONFIG_DIR": str(Path(tmp) / "config"), "QT_QPA_PLATFORM": "offscreen"}
        out = subprocess.run([sys.executable, "-c", CHILD, str(archive), str(args.settle)], env=env,
                             capture_output=True, text=True, check=False)
        line = next((x for x in out.stdout.splitlines() if x.startswith("{")), None)
        if line is None:
            print(out.stdout, out.stderr, file=sys.stderr)
            return 1
        r = json.loads(line)
        print(f"{r['pages']} pages ({archive.stat().st_size / 2**20:.1f} MiB archive): open returned in "
              f"{r['open_returned_s']:.2f} s, first page shown in {r['first_page_shown_s']:.2f} s "
              f"({r['cpu_s']:.2f} s of CPU time until then); memory above the "
              f"app at rest ({r['rest_mib']:.0f} MiB): {r['above_rest_after_open_mib']:.0f} MiB after opening, "
              f"{r['above_rest_settled_mib']:.0f} MiB {args.settle:.0f} s later, peak {r['peak_above_rest_mib']:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
