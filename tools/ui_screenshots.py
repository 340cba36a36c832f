"""Screenshots of the main GUI states into shots/ (offscreen), for looking at the app as a user.

    python tools/ui_screenshots.py [OUT_DIR]

Uses tiny random models (their text is noise), then types Japanese text into a few blocks so
the overlays show real glyphs, vertical and horizontal.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
TMP = Path(tempfile.mkdtemp(prefix="hayai-shots-"))
os.environ["HAYAI_DESKTOP_CONFIG_DIR"] = str(TMP / "config")
os.environ["HAYAI_DATA_DIR"] = str(TMP / "data")
os.environ["HAYAI_MODELS_DIR"] = str(TMP / "models")

SAMPLES = Path(os.environ.get("HAYAI_SHOT_SAMPLES", ROOT / "resources" / "samples"))
SAMPLE_TEXT = ["なんだって！？", "ここは危ない\nはやく逃げよう", "わかった…", "Hayai OCR", "ありがとう。"]


def wait(app, cond, timeout_s=120.0):
    import time

    end = time.monotonic() + timeout_s
    while not cond() and time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def main(out: Path) -> None:
    from PySide6.QtWidgets import QApplication

    from app.core.settings import AppSettings
    from app.ocr.testing import write_tiny_checkpoint
    from app.ui import main as ui_main
    from app.ui import session
    from app.ui.main_window import MainWindow
    from tests.ui.conftest import TINY_PIPELINE, write_pages

    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    ui_main.apply_theme(app)
    ui_main.pick_cjk_font()

    # 1. first start: no model installed
    w = MainWindow(AppSettings())
    w.resize(1400, 900)
    w.show()
    app.processEvents()
    w.grab().save(str(out / "01-empty-no-model.png"))
    w.close()

    from app.detect.testing import write_tiny_detector

    ocr = write_tiny_checkpoint(TMP / "tiny-ocr", "nova", seed=1)
    det = write_tiny_detector(TMP / "tiny.pt")
    samples = SAMPLES if SAMPLES and SAMPLES.is_dir() else None
    pages = samples or write_pages(TMP / "vol1", 4, size=(900, 1280))
    w = MainWindow(AppSettings(model=str(ocr), detector=str(det), device="cpu"))
    w.pipeline_overrides.update(TINY_PIPELINE)
    w.configure_worker()
    w.questions.answers.update(unsaved_changes="discard", restore_autosave=False)
    w.resize(1400, 900)
    w.show()
    session.open_path(w, pages)
    wait(app, w.view.has_image)
    done = []
    w.run_finished.connect(done.append)
    w.run_pages([w.current])
    wait(app, lambda: bool(done))
    # random detector weights give arbitrary boxes: place blocks where a real detector would
    # (the sample pages' ground truth when there is one)
    from dataclasses import replace as dc_replace

    page = w.doc.page(w.current)
    truth = (pages / Path(w.current).with_suffix(".json").name) if samples else None
    model_block = page.blocks[0] if page.blocks else None
    spots = [(700, 60, 880, 400, True), (320, 80, 440, 420, True), (60, 480, 300, 700, False),
             (560, 520, 820, 760, False), (100, 900, 420, 1020, False)]
    placed = []
    for i, ((x0, y0, x1, y1, vertical), text) in enumerate(zip(spots, SAMPLE_TEXT)):
        base = model_block or page.blocks[0]
        placed.append(dc_replace(base, id=f"b{i}", box=(x0, y0, x1, y1), vertical=vertical, polygon=None,
                                 kind="bubble" if i < 4 else "text", text=text))
    if truth is not None and truth.exists():
        import json

        from app.core.document import Block

        placed = [Block(id=b["id"], order=b["order"], kind=b["kind"] if b["kind"] in ("bubble", "text") else "other",
                        box=tuple(float(v) for v in b["box"]), vertical=b["vertical"], ocr_text=b["text"],
                        model="demo", patches=384)
                  for b in json.loads(truth.read_text(encoding="utf-8"))["blocks"]]
    w.edit(lambda p: p.with_blocks(placed), "place blocks")
    blocks = w.doc.page(w.current).blocks
    if blocks:
        w.view.select_block(blocks[0].id)
        w.view._on_selection_changed()
    wait(app, w.page_list.thumbnails_done, 20)
    app.processEvents()
    w.grab().save(str(out / "02-page-with-blocks.png"))

    w.set_overlay("boxes")
    app.processEvents()
    w.grab().save(str(out / "03-boxes-only.png"))
    w.set_overlay("text")

    # draw mode, mid-drag
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest

    w.act.draw.setChecked(True)
    vp = w.view.viewport()
    a, b = w.view.mapFromScene(300, 700), w.view.mapFromScene(460, 900)
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, a)
    QTest.mouseMove(vp, a + QPoint(20, 20))
    QTest.mouseMove(vp, b)
    app.processEvents()
    w.grab().save(str(out / "04-draw-mode.png"))
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, b)
    wait(app, lambda: not w.host.busy(), 60)
    app.processEvents()
    w.grab().save(str(out / "05-after-draw.png"))
    w.act.draw.setChecked(False)

    from app.ui.model_manager import ModelManagerDialog

    dlg = ModelManagerDialog(w)
    dlg.show()
    app.processEvents()
    dlg.grab().save(str(out / "06-model-manager.png"))
    dlg.done(0)

    from app.ui import actions
    from app.ui.dialogs import ShortcutsDialog

    help_dialog = ShortcutsDialog(actions.SHORTCUTS, w)
    help_dialog.show()
    app.processEvents()
    help_dialog.grab().save(str(out / "07-shortcuts.png"))
    help_dialog.close()

    # dark theme (offscreen Qt cannot report a system scheme, so force it as a user can)
    ui_main.apply_theme(app, force="dark")
    app.processEvents()
    w.grab().save(str(out / "08-dark-theme.png"))
    w.close()
    print(f"screenshots in {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "shots")
