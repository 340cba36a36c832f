"""Screenshots of two places a week of real use found wrong, on a real X display with a window
manager, for looking at them as a user would:

    xvfb-run -s "-screen 0 1280x800x24" sh -c 'openbox & sleep 1; python tools/week_screenshots.py OUT'
    HAYAI_DESKTOP_THEME=dark xvfb-run -s "-screen 0 1600x1000x24" sh -c '...'

- a small one-glyph bubble (ん) with a box drawn round it by hand (the Draw tool, a mouse drag),
  read by the demo model, the translation "Hm?" typed in: the original view, the translated view,
  and the page exported as PNG (the glyph cleaned, the lettering inside the outline);
- a second window opening the folder the first is working on: read-only, showing the work the
  first has autosaved and journalled so far (nothing saved by hand).

Files are named <theme>-<width>x<height>-<what>.png. Settings, projects and models go to a
temporary folder; the pages are drawn by this script.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TMP = Path(tempfile.mkdtemp(prefix="hayai-week-shots-"))
for key, sub in (("HAYAI_DESKTOP_CONFIG_DIR", "config"), ("HAYAI_DATA_DIR", "data"), ("HAYAI_MODELS_DIR", "models")):
    os.environ[key] = str(TMP / sub)

SMALL = (300, 230, 16)  # the small bubble's centre and radius on the 420x320 page


def draw_pages(folder: Path) -> None:
    """Two pages: a large bubble of Japanese and a small bubble holding ん (page 1), one more."""
    from PIL import Image, ImageDraw, ImageFont

    from app.fonts import font_file

    folder.mkdir(parents=True, exist_ok=True)
    font = ImageFont.truetype(str(font_file("cjk")), 22)
    for n in (1, 2):
        page = Image.new("RGB", (420, 320), "white")
        d = ImageDraw.Draw(page)
        d.rectangle((8, 8, 411, 311), outline="black", width=3)
        d.ellipse((40, 40, 220, 200), outline="black", width=3, fill="white")
        for i, ch in enumerate("どこへいくの"):
            d.text((130, 70 + 22 * i), ch, font=font, fill="black", anchor="mm")
        cx, cy, r = SMALL
        d.ellipse((cx - r - 3, cy - r - 3, cx + r + 3, cy + r + 3), fill="black")
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill="white")
        d.text((cx, cy), "ん" if n == 1 else "え", font=font, fill="black", anchor="mm")
        page.save(folder / f"{n:03d}.png")


def wait(app, cond, timeout_s=120.0) -> None:
    import time

    end = time.monotonic() + timeout_s
    while not cond() and time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def drag_box(app, w, box) -> None:
    """Draw `box` (page pixels) with the Draw tool: press, move, release on the view."""
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtTest import QTest

    from app.ui.editor.canvas import Mode

    w.view.set_mode(Mode.DRAW)
    vp = w.view.viewport()
    a = w.view.mapFromScene(QPointF(box[0], box[1]))
    b = w.view.mapFromScene(QPointF(box[2], box[3]))
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, a)
    for t in (0.3, 0.6, 1.0):
        QTest.mouseMove(vp, QPoint(int(a.x() + (b.x() - a.x()) * t), int(a.y() + (b.y() - a.y()) * t)))
        app.processEvents()
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, b)
    w.view.set_mode(Mode.SELECT)


def main(out: Path) -> None:
    from PySide6.QtWidgets import QApplication

    from app.core.config.settings import AppSettings
    from app.ui.render.view import wait_rendered
    from app.ui.shell import main as ui_main
    from app.ui.shell import startup
    from app.ui.shell.main_window import MainWindow

    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    ui_main.apply_theme(app)
    ui_main.pick_cjk_font()
    geo = app.primaryScreen().geometry()
    tag = f"{os.environ.get('HAYAI_DESKTOP_THEME', 'light') or 'light'}-{geo.width()}x{geo.height()}"
    pages = TMP / "pages"
    draw_pages(pages)
    _samples, model, detector = startup.demo_paths()
    settings = AppSettings(model=str(model), detector=str(detector), device="cpu", patches=startup.DEMO_PATCHES)

    def window():
        w = MainWindow(settings)
        w.questions.answers.update(unsaved_changes="discard", restore_autosave=False)
        w.resize(geo.width() - 40, geo.height() - 60)
        w.move(0, 0)
        w.show()
        return w

    def shot(name: str) -> None:
        app.processEvents()
        wait(app, lambda: False, 0.5)
        app.primaryScreen().grabWindow(0).save(str(out / f"{tag}-{name}.png"))

    # a box drawn by hand round the small bubble, read, a translation typed in, lettered
    w = window()
    w.autosave_timer.setInterval(3_600_000)  # autosaves where this script asks for one
    assert w.session.open_path(pages)
    wait(app, w.view.has_image)
    cx, cy, r = SMALL
    before = len(w.doc.page(w.current).blocks)
    drag_box(app, w, (cx - r - 15, cy - r - 15, cx + r + 16, cy + r + 16))
    wait(app, lambda: len(w.doc.page(w.current).blocks) > before)
    block = w.doc.page(w.current).blocks[-1]
    w.view.select_block(block.id)
    w.view._on_selection_changed()
    w.panel.translation_edit.setPlainText("Hm?")
    w.panel.flush()
    shot("small-bubble-original")
    w.render_ctl.set_mode("translated")
    wait_rendered(w.render_ctl, 120)
    w.view.scene().clearSelection()
    shot("small-bubble-translated")
    finished: list = []
    w.render_ctl.exporter.finished.connect(finished.append)
    w.render_ctl.exporter.start("png", str(out / f"{tag}-exported"))
    wait(app, lambda: bool(finished), 120)
    w.render_ctl.set_mode("original")
    # the work so far is autosaved (page 1) and journalled (page 2), nothing saved by hand
    w.autosave()
    w.show_page(w.doc.page_names()[1])
    wait(app, w.view.has_image)
    drag_box(app, w, (cx - r - 15, cy - r - 15, cx + r + 16, cy + r + 16))
    wait(app, lambda: bool(w.doc.page(w.doc.page_names()[1]).blocks))
    second = window()
    second.move(40, 40)
    assert second.session.open_path(pages)
    wait(app, second.view.has_image)
    second.raise_()
    second.activateWindow()
    shot("second-window")
    print(f"screenshots in {out} ({tag}); exported {finished}; read-only: {second.read_only}; "
          f"blocks seen by the second window: {[len(p.blocks) for p in second.doc.project.pages]}")
    second.close()
    second.shutdown()
    w.undo_stack.setClean()
    w.close()
    w.shutdown()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "shots")
