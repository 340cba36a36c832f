"""Screenshots of a new user's first-hour views (the demo, errors offering the model manager,
the About box, the dark theme), on a real X display of a given size.

    xvfb-run -s "-screen 0 1280x800x24" python tools/first_hour_screenshots.py OUT_DIR
    HAYAI_DESKTOP_THEME=dark xvfb-run -s "-screen 0 1280x800x24" python tools/first_hour_screenshots.py OUT_DIR

Writes, with the theme's name in each file name: the empty window as first opened (the whole
screen: does it fit?), the demo opened from the Help menu and read, the in-place editor, an
error that offers the model manager, the model manager with a long error, the About box.
Settings, projects and models go to a temporary folder.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TMP = Path(tempfile.mkdtemp(prefix="hayai-first-hour-"))
os.environ["HAYAI_DESKTOP_CONFIG_DIR"] = str(TMP / "config")
os.environ["HAYAI_DATA_DIR"] = str(TMP / "data")
os.environ["HAYAI_MODELS_DIR"] = str(TMP / "models")


def wait(app, cond, timeout_s=120.0) -> None:
    end = time.monotonic() + timeout_s
    while not cond() and time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def settle(app, seconds=0.3) -> None:
    wait(app, lambda: False, seconds)


def screen(app, path: Path) -> None:
    app.primaryScreen().grabWindow(0).save(str(path))


def main(out: Path) -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.core.config.settings import AppSettings
    from app.ui.models.manager import ModelManagerDialog
    from app.ui.shell import main as ui_main
    from app.ui.shell.main_window import MainWindow

    out.mkdir(parents=True, exist_ok=True)
    theme = os.environ.get("HAYAI_DESKTOP_THEME", "light") or "light"
    app = QApplication.instance() or QApplication([ui_main.APP_ID])
    ui_main.configure_application(app)
    ui_main.apply_theme(app)
    ui_main.pick_cjk_font()

    w = MainWindow(AppSettings(device="cpu"))
    w.questions.answers.update(unsaved_changes="discard", restore_autosave=False)
    from app.ui.shell.preferences import restore_geometry

    restore_geometry(w)
    w.show()
    settle(app, 1.0)
    screen(app, out / f"{theme}-01-first-start-screen.png")

    # the demo from the Help menu, read
    w.act.open_demo.trigger()
    wait(app, w.view.has_image)
    done = []
    w.run_finished.connect(done.append)
    w.slots.action_run_page()
    wait(app, lambda: bool(done), 300)
    blocks = w.doc.page(w.current).blocks
    if blocks:
        w.view.select_block(blocks[0].id)
        w.view._on_selection_changed()
    settle(app, 1.0)
    screen(app, out / f"{theme}-02-demo-read-screen.png")

    # the in-place editor at the zoom the page is shown at
    if blocks:
        w.view.start_inline_edit(blocks[min(1, len(blocks) - 1)].id)
        settle(app)
        w.grab().save(str(out / f"{theme}-03-inline-editor.png"))
        w.view.cancel_inline_edit()

    # an error that names a model: the window offers the model manager
    w.update_settings(model="hayai-ocr-v2.5-nova")
    done.clear()
    w.slots.action_run_page()
    wait(app, lambda: bool(done), 120)
    settle(app)
    w.grab().save(str(out / f"{theme}-04-missing-model-error.png"))

    # the model manager with a long error, on this screen
    dlg = ModelManagerDialog(w)
    dlg.select("manga-text-detector")
    path = "/home/someone/.local/share/hayai-desktop/models/comic-speech-bubble-detector/partial/" * 3
    dlg._on_failed("Downloading comic-speech-bubble-detector",
                   "HTTP error 503 from https://huggingface.co/api/models/ogkalu/comic-speech-bubble-detector-yolov8m"
                   f"/revision/main while fetching {path}comic-speech-bubble-detector.pt; try again later.")
    QTimer.singleShot(1500, lambda: (screen(app, out / f"{theme}-05-model-manager-screen.png"), dlg.reject()))
    dlg.exec()

    from app.ui.shell.about import AboutDialog

    about = AboutDialog(w.device_label.text(), w)
    QTimer.singleShot(1000, lambda: (about.grab().save(str(out / f"{theme}-06-about.png")), about.reject()))
    about.exec()
    w.close()
    print(f"screenshots in {out} (settings in {TMP})")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "shots-first-hour"))
