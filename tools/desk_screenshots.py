"""Screenshots of the translator's desk (offscreen, 1280x800): the Script view filtered to the
blocks not translated yet, and find / replace across the volume, in the light or dark theme.
The demo's sample pages with blocks written here (no models run): some translated by a
"machine", some by hand, one too long for its bubble, some not yet.

    python tools/desk_screenshots.py OUT_DIR light|dark
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
TMP = Path(tempfile.mkdtemp(prefix="hayai-desk-shots-"))
os.environ["HAYAI_DESKTOP_CONFIG_DIR"] = str(TMP / "config")
os.environ["HAYAI_DATA_DIR"] = str(TMP / "data")
os.environ["HAYAI_MODELS_DIR"] = str(TMP / "models")

LINES = [
    [("タナカさん、おはよう！", "Good morning, Mr. Tanaka!", "m"), ("おはよう、ユキ。", "Morning, Yuki.", "e"),
     ("きょうはいいてんきだね", "", ""), ("うん", "Yeah, this one is far far too long for such a tiny bubble", "m")],
    [("ユキ、まって！", "Yuki, wait!", "m"), ("なに？", "", ""), ("タナカさんはやさしいね", "", ""),
     ("ありがとう", "Thanks.", "e")],
    [("さようなら", "", ""), ("またあした", "See you tomorrow", "m"), ("ユキ！", "", "")],
]


def main(out: Path, theme: str) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from app.core.config.settings import AppSettings
    from app.core.document.types import Block
    from app.ui.shell import main as ui_main
    from app.ui.shell import startup
    from app.ui.shell.main_window import MainWindow
    from tools.ui_screenshots import wait

    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    ui_main.apply_theme(app, theme)
    ui_main.pick_cjk_font()
    samples, model, detector = startup.demo_paths()
    pages = TMP / "volume"
    pages.mkdir()
    for png in sorted(samples.glob("page_000[012].png")):
        shutil.copyfile(png, pages / png.name)
    w = MainWindow(AppSettings(model=str(model), detector=str(detector), device="cpu"))
    w.questions.answers.update(unsaved_changes="discard", restore_autosave=False)
    w.resize(1280, 800)
    w.show()
    w.session.open_path(pages)
    for name, lines in zip(w.doc.page_names(), LINES, strict=False):
        blocks = []
        for i, (src, text, how) in enumerate(lines):
            box = (60.0 + 150 * i, 60.0, 190.0 + 150 * i, 300.0) if i < 3 else (700.0, 700.0, 725.0, 716.0)
            b = Block(id=f"b{i + 1}", order=i + 1, kind="bubble", box=box, vertical=True, ocr_text=src)
            if how == "m":
                b = replace(b, translation=text, machine_translation=text, translator="test-model")
            elif how == "e":
                b = replace(b, translation=text, machine_translation=text.lower(), translator="test-model")
            blocks.append(b)
        w.edit(lambda p, b=tuple(blocks): replace(p, blocks=b, processed=True), "read", page=name)
    wait(app, w.view.has_image)
    w.activateWindow()
    QTest.keyClick(w, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    view = w.script
    wait(app, lambda: not view.fit.busy() and view.fit.checked_pages()[0] == view.fit.checked_pages()[1], 120)
    view.set_status_filter("not translated")
    view.table.setCurrentIndex(view.proxy.index(1, 3))
    wait(app, w.view.has_image)
    app.processEvents()
    w.grab().save(str(out / f"script-untranslated-{theme}.png"))
    view.set_status_filter("")
    view.table.setFocus()
    QTest.keyClick(w, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)
    bar = view.find_bar
    bar.find_edit.setText("ユキ")
    QTest.keyClick(bar.find_edit, Qt.Key.Key_Return)
    wait(app, w.view.has_image)
    app.processEvents()
    w.grab().save(str(out / f"find-replace-{theme}.png"))
    w.close()
    app.processEvents()


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/desk-shots"), sys.argv[2] if len(sys.argv) > 2 else "light")
