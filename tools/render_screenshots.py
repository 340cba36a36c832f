"""Screenshots of translated pages in the GUI (offscreen), for looking at them as a user would.

    python tools/render_screenshots.py [OUT_DIR]

What `hayai-desktop --demo` does: the sample pages (a copy of app/resources/samples) read by the demo
models; then translations are typed into the block panel for every block of page 1 (stand-in
English), and the three views are captured (original, cleaned, translated), the Style dock with
a block selected, the mask brush, and the page exported by File > Export > Translated pages.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
TMP = Path(tempfile.mkdtemp(prefix="hayai-render-shots-"))
for key, sub in (("HAYAI_DESKTOP_CONFIG_DIR", "config"), ("HAYAI_DATA_DIR", "data"), ("HAYAI_MODELS_DIR", "models")):
    os.environ[key] = str(TMP / sub)

LINES = ["Wait for me!", "Where are you going at this hour?", "I told you already.", "No way...",
         "That's impossible!", "Let's go home.", "Who's there?", "Extraordinary!", "Hmm...", "Thank you so much."]


def main(out: Path) -> None:
    from PySide6.QtWidgets import QApplication

    from app.ui.render.view import wait_rendered
    from app.ui.shell import main as ui_main
    from app.ui.shell import startup
    from tools.ui_screenshots import demo_window, wait

    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    ui_main.apply_theme(app)
    ui_main.pick_cjk_font()
    pages = TMP / "samples"
    shutil.copytree(startup.demo_paths()[0], pages, ignore=shutil.ignore_patterns("*.json", "*.md"))
    w = demo_window(app, pages, (1500, 950))
    blocks = w.doc.page(w.current).blocks
    for i, b in enumerate(blocks):  # type a translation into each block, as a user does
        w.view.select_block(b.id)
        w.view._on_selection_changed()
        w.panel.translation_edit.setPlainText(LINES[i % len(LINES)])
        w.panel.flush()
    w.view.scene().clearSelection()
    app.processEvents()
    w.grab().save(str(out / "r1-original.png"))
    w.render_ctl.set_mode("cleaned")
    wait_rendered(w.render_ctl, 120)
    w.grab().save(str(out / "r2-cleaned.png"))
    w.render_ctl.set_mode("translated")
    wait_rendered(w.render_ctl, 120)
    w.grab().save(str(out / "r3-translated.png"))
    big = max(blocks, key=lambda b: (b.box[2] - b.box[0]) * (b.box[3] - b.box[1]))
    w.view.select_block(big.id)
    w.view._on_selection_changed()
    from PySide6.QtWidgets import QDockWidget

    w.findChild(QDockWidget, "dock_style").raise_()
    w.render_ctl.style_panel.changed.emit("outline_width", 3)
    w.render_ctl.style_panel.changed.emit("uppercase", True)
    app.processEvents()
    w.grab().save(str(out / "r4-style-dock.png"))
    w.render_ctl.style_panel.brush.setChecked(True)
    wait_rendered(w.render_ctl, 60)
    app.processEvents()
    w.grab().save(str(out / "r5-mask-brush.png"))
    w.render_ctl.style_panel.brush.setChecked(False)
    finished = []
    w.render_ctl.exporter.finished.connect(finished.append)
    w.render_ctl.exporter.start("png", str(out / "exported"))
    wait(app, lambda: bool(finished), 120)
    print(f"screenshots in {out}; exported pages in {out / 'exported'} ({finished})")
    w.close()
    w.shutdown()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "shots")
