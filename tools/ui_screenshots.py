"""Screenshots of the main GUI states into shots/ (offscreen), for looking at the app as a user.

    python tools/ui_screenshots.py [OUT_DIR]

The page states use the demo models (app/resources/demo) on the sample pages (app/resources/samples,
or $HAYAI_SHOT_SAMPLES): what `hayai-desktop --demo` shows, real detections and real reads.
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

SAMPLES = Path(os.environ.get("HAYAI_SHOT_SAMPLES", ROOT / "app" / "resources" / "samples"))


def wait(app, cond, timeout_s=120.0):
    import time

    end = time.monotonic() + timeout_s
    while not cond() and time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def demo_window(app, pages: Path, size=(1400, 900)):
    """A shown MainWindow with the demo models (what `hayai-desktop --demo` sets up) on `pages`,
    its first page read by them."""
    from app.core.config.settings import AppSettings
    from app.ui.shell import startup
    from app.ui.shell.main_window import MainWindow

    _samples, model, detector = startup.demo_paths()
    w = MainWindow(AppSettings(model=str(model), detector=str(detector), device="cpu", patches=startup.DEMO_PATCHES))
    w.demo = True
    w.update_model_banner()
    w.questions.answers.update(unsaved_changes="discard", restore_autosave=False)
    w.resize(*size)
    w.show()
    w.session.open_path(pages)
    wait(app, w.view.has_image)
    done = []
    w.run_finished.connect(done.append)
    w.run_pages([w.current])
    wait(app, lambda: bool(done))
    return w


def main(out: Path) -> None:
    from PySide6.QtWidgets import QApplication

    from app.core.config.settings import AppSettings
    from app.ui.shell import main as ui_main
    from app.ui.shell import startup
    from app.ui.shell.main_window import MainWindow

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

    # 2. the demo: sample pages read by the demo models (what `hayai-desktop --demo` shows)
    samples = startup.demo_paths()[0]
    w = demo_window(app, SAMPLES if SAMPLES.is_dir() else samples)
    blocks = w.doc.page(w.current).blocks
    if blocks:
        w.view.select_block(blocks[0].id)
        w.view._on_selection_changed()
    wait(app, w.page_list.thumbnails_done, 20)
    app.processEvents()
    w.grab().save(str(out / "02-page-with-blocks.png"))

    w.slots.set_overlay("boxes")
    app.processEvents()
    w.grab().save(str(out / "03-boxes-only.png"))
    w.slots.set_overlay("text")

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

    from app.ui.models.manager import ModelManagerDialog

    dlg = ModelManagerDialog(w)
    dlg.show()
    app.processEvents()
    dlg.grab().save(str(out / "06-model-manager.png"))
    dlg.done(0)

    from app.ui.common.dialogs import ShortcutsDialog
    from app.ui.shell import actions

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
