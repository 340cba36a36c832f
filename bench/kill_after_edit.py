"""Kill the app (SIGKILL, no chance to save) at a random moment 0-2 s after an edit, again and
again, and count the committed edits that come back on the next open.

Each round starts the real window (offscreen) on a folder of pages in a child process; the child
makes edits through the undo stack, as the panel does, at random intervals of 50-400 ms (each
adds one block with the text "edit N"), and prints "EDIT N" once the edit is committed (the
call returned). After a random number of edits the bench waits a random 0-2 s (the child goes on
editing meanwhile) and kills it. The edits it printed before dying are the committed ones; the
bench then opens the project as the next start does (autosave if newer, journal replayed:
`open_project(..., replay_journal=True)`) and checks that every one of them is there.

    python bench/kill_after_edit.py --rounds 100 [--seed 1]

Needs POSIX (SIGKILL). Prints one line per round and the total, e.g. "100/100 rounds: every
committed edit restored (2417 edits)".
"""
from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import os, random, sys
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.core.document.types import Block
from app.core.config.settings import AppSettings
from app.core import edits
from app.ui.shell.main_window import MainWindow

folder, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
w = MainWindow(AppSettings())
w.questions.answers.update(restore_autosave=True, unsaved_changes="discard")
w.show()
assert w.session.open_path(folder)
name = w.doc.page_names()[0]
n = 0

def one_edit():
    global n
    n += 1
    block = Block(id=f"e{n}", order=n, kind="manual", box=(n, n, n + 10, n + 10), ocr_text="", text=f"edit {n}")
    w.edit(lambda p: edits.add_block(p, block), f"edit {n}", page=name)
    print(f"EDIT {n}", flush=True)
    QTimer.singleShot(rng.randint(50, 400), one_edit)

print("READY", flush=True)
QTimer.singleShot(rng.randint(50, 400), one_edit)
app.exec()
"""


def _pages(folder: Path, count: int = 3) -> None:
    from PIL import Image

    folder.mkdir(parents=True)
    for i in range(count):
        Image.new("RGB", (300, 400), (250, 250, 250)).save(folder / f"page-{i + 1:03d}.png")


def one_round(index: int, rng: random.Random, work: Path) -> tuple[bool, int, float, str]:
    from app.core.project.files import open_project, recoverable_autosave
    from app.core.sources.source import open_source

    data = work / f"data-{index}"
    folder = work / f"vol-{index}"
    _pages(folder)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HAYAI_DATA_DIR": str(data),
           "HAYAI_DESKTOP_CONFIG_DIR": str(work / f"config-{index}"), "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(folder), str(rng.randint(0, 2**31))],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    committed: list[int] = []
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    assert proc.stdout.readline().strip() == "READY"
    target = rng.randint(1, 12)  # edits before the countdown starts
    while len(committed) < target:
        line = proc.stdout.readline()
        if not line:
            break
        committed.append(int(line.split()[1]))
    reader.start()  # keep reading what the child prints while we wait
    delay = rng.uniform(0.0, 2.0)
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    reader.join()
    committed += [int(line.split()[1]) for line in lines if line.startswith("EDIT ")]
    os.environ["HAYAI_DATA_DIR"] = str(data)  # where the child kept its autosave and journal
    with open_source(folder) as source:
        names = list(source.page_names)
    project = open_project(folder, names, project_file=recoverable_autosave(folder), replay_journal=True)
    restored = {b.text for b in project.pages[0].blocks}
    missing = [n for n in committed if f"edit {n}" not in restored]
    return not missing, len(committed), delay, f"missing {missing}" if missing else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    ok = edits = 0
    with tempfile.TemporaryDirectory(prefix="hayai-kill-") as tmp:
        for i in range(args.rounds):
            good, count, delay, note = one_round(i, rng, Path(tmp))
            ok += good
            edits += count
            print(f"round {i + 1:3d}: killed {delay:.2f} s after edit, {count:3d} committed edit(s): "
                  f"{'all restored' if good else note}", flush=True)
    verdict = "every committed edit restored" if ok == args.rounds else "EDITS LOST"
    print(f"{ok}/{args.rounds} rounds: {verdict} ({edits} edits)")
    return 0 if ok == args.rounds else 1


if __name__ == "__main__":
    sys.exit(main())
