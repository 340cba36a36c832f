"""The GUI's re-lettering after an edit: type into the translation field of a block and time
until the canvas shows the new page (offscreen Qt, the window's own code path).

    python bench/render_gui.py [--size 1600x2400] [--edits 30]

A synthetic page (tools/synth) with stand-in English translations on every block, the
translated view, OpenCV cleaning (done once in the background first). Each edit replaces one
block's text in the panel; the window re-letters that bubble and shows the page at once. Also
prints the ratio to a baseline measured in the same run (PNG-encoding the page), since the
machine is shared.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
TMP = Path(tempfile.mkdtemp(prefix="hayai-bench-"))
for key, sub in (("HAYAI_DESKTOP_CONFIG_DIR", "config"), ("HAYAI_DATA_DIR", "data"), ("HAYAI_MODELS_DIR", "models")):
    os.environ[key] = str(TMP / sub)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", default="1600x2400")
    p.add_argument("--edits", type=int, default=30)
    args = p.parse_args()
    size = tuple(int(v) for v in args.size.lower().split("x"))

    from PIL import Image
    from PySide6.QtWidgets import QApplication

    from app.core.config.settings import AppSettings
    from app.core.project.files import save_project
    from app.ui.render.view import wait_rendered
    from app.ui.shell.main_window import MainWindow
    from tools.render_metrics import make_case

    case = make_case(77, 0, size=size)
    folder = TMP / "vol"
    folder.mkdir()
    Image.fromarray(case.page).save(folder / case.doc.name)
    from app.core.document.types import Project

    save_project(Project(source=str(folder), pages=[case.doc]))
    app = QApplication.instance() or QApplication([])
    w = MainWindow(AppSettings(device="cpu"))
    w.resize(1400, 900)
    w.show()
    w.session.open_path(folder)
    end = time.monotonic() + 30
    while not w.view.has_image() and time.monotonic() < end:
        app.processEvents()
    w.render_ctl.set_mode("translated")
    wait_rendered(w.render_ctl, 120)
    blocks = [b for b in w.doc.page(w.current).blocks if b.kind == "bubble"]
    times = []
    for i in range(args.edits):
        b = blocks[i % len(blocks)]
        w.view.select_block(b.id)
        w.view._on_selection_changed()
        t = time.perf_counter()
        w.panel.translation_edit.setPlainText(f"{b.translation} edit {i}")
        app.processEvents()
        times.append(1000 * (time.perf_counter() - t))
        w.panel.flush()
    t = time.perf_counter()
    Image.fromarray(case.page).save(io.BytesIO(), format="PNG", compress_level=6)
    base = 1000 * (time.perf_counter() - t)
    med = statistics.median(times)
    print(json.dumps({"page": f"{size[0]}x{size[1]}", "edits": len(times), "median_ms": round(med, 1),
                      "max_ms": round(max(times), 1), "png_encode_ms": round(base, 1),
                      "median_over_png": round(med / base, 3)}))
    print(f"re-letter one bubble and show the {size[0]}x{size[1]} page: median {med:.1f} ms, max {max(times):.1f} ms "
          f"over {len(times)} edits ({med / base:.2f} x PNG-encoding the page, {base:.0f} ms)")
    w.questions.answers["unsaved_changes"] = "discard"
    w.close()
    w.shutdown()
    w.deleteLater()
    app.processEvents()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
