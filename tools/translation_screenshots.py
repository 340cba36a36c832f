"""Screenshots of machine translation (offscreen), for looking at it as a user: the demo sample
page read by the demo models and translated through the loopback OpenAI-compatible server of the
tests (tests/llm_server.py: kana romanized, glossary applied), the Translation settings dialog
after Test connection, and the Glossary dialog.

    python tools/translation_screenshots.py [OUT_DIR]
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
TMP = Path(tempfile.mkdtemp(prefix="hayai-tr-shots-"))
os.environ["HAYAI_DESKTOP_CONFIG_DIR"] = str(TMP / "config")
os.environ["HAYAI_DATA_DIR"] = str(TMP / "data")
os.environ["HAYAI_MODELS_DIR"] = str(TMP / "models")


def main(out: Path) -> None:
    from PySide6.QtWidgets import QApplication

    from app.core.config.settings import AppSettings
    from app.translate.base import GlossaryEntry
    from app.ui.shell import main as ui_main
    from app.ui.shell import startup
    from app.ui.shell.main_window import MainWindow
    from app.ui.translate.control import _key_state
    from app.ui.translate.glossary_dialog import GlossaryDialog
    from app.ui.translate.settings_dialog import TranslationSettingsDialog
    from tests.llm_server import FakeLLM
    from tools.ui_screenshots import wait

    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    ui_main.apply_theme(app)
    ui_main.pick_cjk_font()
    server = FakeLLM()
    os.environ["OPENAI_API_KEY"] = server.key
    samples, model, detector = startup.demo_paths()
    pages = TMP / "samples"
    pages.mkdir()
    for png in sorted(samples.glob("page_000[01].png")):
        shutil.copyfile(png, pages / png.name)
    w = MainWindow(AppSettings(model=str(model), detector=str(detector), device="cpu", patches=startup.DEMO_PATCHES,
                               translation_provider="openai", translation_preset="custom",
                               translation_base_url=server.base_url, translation_model="test-model"))
    w.demo = True
    w.update_model_banner()
    w.questions.answers.update(unsaved_changes="discard", restore_autosave=False)
    w.resize(1400, 900)
    w.show()
    w.session.open_path(pages)
    wait(app, w.view.has_image)
    done = []
    w.run_finished.connect(done.append)
    w.run_pages(w.doc.page_names())
    wait(app, lambda: bool(done), 300)
    w.doc.project.glossary = [GlossaryEntry("ところ", "place", "a test term")]
    finished = []
    w.translation.run_finished.connect(finished.append)
    w.translation.translate_all()
    wait(app, lambda: bool(finished), 60)
    blocks = w.doc.page(w.current).blocks
    if blocks:
        w.view.select_block(blocks[0].id)
        w.view._on_selection_changed()
    w.act.show_translation.setChecked(True)
    app.processEvents()
    w.grab().save(str(out / "t1-translated-page.png"))

    dialog = TranslationSettingsDialog(w.settings, _key_state, w)
    w.translation._dialog = dialog
    w.translation.probe_finished.connect(w.translation._show_probe)
    dialog.show()
    probed = []
    w.translation.probe_finished.connect(probed.append)
    w.translation.probe(dialog.translator_settings())
    wait(app, lambda: bool(probed), 30)
    app.processEvents()
    dialog.grab().save(str(out / "t2-translation-settings.png"))
    dialog.close()

    text = blocks[0].display_text if blocks else ""
    glossary = GlossaryDialog([GlossaryEntry("ユキ", "Yuki", "the heroine"), GlossaryEntry("タナカ", "Tanaka", "surname"),
                               GlossaryEntry("ところ", "place")], "Also used: glossary.tsv (12 term(s))", text, w)
    glossary.show()
    glossary.from_block.click()
    app.processEvents()
    glossary.grab().save(str(out / "t3-glossary.png"))
    glossary.close()
    w.close()
    w.shutdown()
    server.close()
    print(f"screenshots in {out}; {w.translation.status.text()}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "shots")
