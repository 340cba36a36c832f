"""A new user's first hour: the demo from the Help menu, where demo projects and
exports go, errors that offer the model manager, what is greyed out with nothing open, the About
box, icons in the dark theme, the detectors explained, run counts and time estimates."""
from __future__ import annotations

import json
import os
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from app.core.config.settings import AppSettings, export_folder
from app.ui.reading.run_stats import RunStats

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "app" / "resources" / "samples"


def test_help_menu_opens_the_demo_and_the_empty_canvas_says_so(make_window, pages, tmp_path, qtbot):
    from app.ui.editor.canvas import EMPTY_HINT
    from app.ui.shell.startup import DEMO_PATCHES

    w = make_window(model="hayai-ocr-v2.5-nova", detector="comic-speech-bubble-detector", patches=512)
    assert "Help > Open the demo pages" in EMPTY_HINT
    assert w.act.open_demo.text() == "Open the demo pages"
    assert w.act.open_demo in w.menuBar().actions()[-1].menu().actions()  # in the Help menu
    user = w.settings
    w.act.open_demo.trigger()
    assert w.demo and w.doc.source == str(SAMPLES.resolve())
    assert "Demo models" in w.banner.label.text()
    assert w.settings.patches == DEMO_PATCHES and Path(w.settings.model).name == "hayai-demo-ocr"
    assert w.act.patches.currentData() == DEMO_PATCHES
    # saving the demo never writes into the app's own folder
    w.edit(lambda p: p, "nothing")
    w.slots.action_save()
    assert not (SAMPLES / ".hayai-project.json").exists()
    saved = [p for p in (Path(os.environ["HAYAI_DATA_DIR"]) / "projects").glob("*.json") if ".lock" not in p.name]  # not its lock
    assert len(saved) == 1 and json.loads(saved[0].read_text("utf-8"))["source"] == str(SAMPLES.resolve())
    # the user's own volume brings the user's own settings back, but keeps the demo's models
    # while the user's own (Nova, the detector) are not installed: they are what reads here
    demo_model = w.settings.model
    w.session.open_path(pages)
    assert not w.demo and w.settings.model == demo_model != user.model and w.settings.patches == 512
    assert w.act.patches.currentData() == 512
    assert "These pages are not the samples" in w.banner.label.text() and not w.banner.close_button.isVisibleTo(w)
    settings_file = Path(os.environ["HAYAI_DESKTOP_CONFIG_DIR"]) / "settings.json"
    assert w.settings_writer.flush()  # settings are written off the GUI thread
    assert json.loads(settings_file.read_text("utf-8"))["model"] == demo_model


def test_export_starts_beside_the_volume_then_where_the_last_export_went(make_window, pages, tmp_path,
                                                                          monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    w = make_window()
    w.session.open_path(pages)
    asked = []
    target = tmp_path / "exports" / "out.json"
    target.parent.mkdir()

    def save_dialog(_parent, _title, start, _filter):  # the user picks `target`
        asked.append(start)
        return str(target), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_dialog)
    w.slots.action_export("json", "volume", False)
    assert Path(asked[0]).parent == pages.parent and Path(asked[0]).name == "vol1.json"
    assert target.is_file() and w.settings.export_dir == str(target.parent)
    w.slots.action_export("txt", "page", False)
    assert Path(asked[1]).parent == target.parent
    # the demo's pages live in the app's folder: the documents folder instead
    fresh = AppSettings()
    assert export_folder(fresh, str(SAMPLES)) != SAMPLES.parent
    assert not str(export_folder(fresh, str(SAMPLES))).startswith(str(ROOT))
    assert export_folder(fresh, str(pages)) == pages.parent


def test_a_missing_model_offers_the_model_manager(make_window, pages, qtbot):
    from app.ui.models.manager import ModelManagerDialog

    w = make_window(model="hayai-ocr-v2.5-nova")  # not installed in this test's model folder
    w.session.open_path(pages)
    with qtbot.waitSignal(w.run_finished, timeout=60000):
        w.slots.action_run_page()
    assert "hayai-desktop models download" in w.last_error  # the layers below word it for the CLI
    text = w.notice.label.text()
    assert w.notice.kind == "error" and "hayai-ocr-v2.5-nova" in text
    assert "hayai-desktop" not in text and "model manager" in text
    (button,) = w.notice.buttons()
    assert button.text() == "Open the model manager"
    seen = []

    def check_and_close():
        dialog = QApplication.activeModalWidget()
        seen.append(dialog.selected_name() if isinstance(dialog, ModelManagerDialog) else dialog)
        dialog.reject()

    QTimer.singleShot(200, check_and_close)
    button.click()
    assert seen == ["hayai-ocr-v2.5-nova"]


def test_gui_wording_of_cli_hints():
    from app.ui.common.error_text import for_gui

    text, model = for_gui("model comic-speech-bubble-detector is not installed (not in /m). Download it with: "
                          "hayai-desktop models download comic-speech-bubble-detector --trust-unpinned")
    assert model == "comic-speech-bubble-detector" and "hayai-desktop" not in text
    assert text.endswith("Download it in the model manager.")
    text, model = for_gui("/x: no such model folder. Download a model with `hayai-desktop models download nova` "
                          "or pass --model DIR.")
    assert model == "hayai-ocr-v2.5-nova" and "--model" not in text and "`" not in text
    assert for_gui("page.png: cannot be read") == ("page.png: cannot be read", None)


def test_nothing_to_read_or_save_with_nothing_open(make_window, pages):
    w = make_window()
    for name in ("run_page", "run_all", "save", "draw", "next_page", "delete"):
        assert not getattr(w.act, name).isEnabled(), name
    assert not w.act.project_menus[0].isEnabled()  # Export
    assert w.act.open_folder.isEnabled() and w.act.open_demo.isEnabled()
    w.session.open_path(pages)
    for name in ("run_page", "run_all", "save", "draw", "next_page", "delete"):
        assert getattr(w.act, name).isEnabled(), name
    assert w.act.project_menus[0].isEnabled()


def test_about_box_says_what_a_bug_report_needs(make_window, qtbot):
    from importlib.metadata import version

    from PySide6.QtCore import qVersion

    from app import __version__
    from app.ui.shell.about import AboutDialog

    w = make_window()
    dialog = AboutDialog("hayai-demo-ocr on CPU", w)
    qtbot.addWidget(dialog)
    text = dialog.label.text()
    for needle in (__version__, "GNU Affero General Public License v3.0 or later", "AGPL-3.0-or-later", f"Qt {qVersion()}", f"torch {version('torch')}",
                   f"transformers {version('transformers')}", "hayai-demo-ocr on CPU", "Settings", "Models",
                   "Logs", "https://"):
        assert needle in text, needle
    assert "file://" in text  # the folders open in the file manager


def test_help_about_shows_the_licence_and_opens_the_notices(make_window, qtbot):
    """Help > About through the menu: the licence with a link to LICENSE, then Third-party
    licences… opens the notices (the installed dependencies, the fonts, the demo models), where
    Find selects a package's entry; both dialogs close as a user closes them."""
    from PySide6.QtWidgets import QDialogButtonBox

    from app.ui.shell.about import AboutDialog, NoticesDialog

    w = make_window()
    help_menu = next(a.menu() for a in w.menuBar().actions() if a.text() == "&Help")
    about = next(a for a in help_menu.actions() if a.text() == "About Hayai Desktop")
    seen = {}

    def in_notices():
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, NoticesDialog)
        seen["notices"] = dialog.text.toPlainText()
        qtbot.keyClicks(dialog.find, "ultralytics")
        qtbot.keyClick(dialog.find, Qt.Key.Key_Return)
        seen["selected"] = dialog.text.textCursor().selectedText()
        dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Close).click()

    def in_about():
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, AboutDialog)
        seen["about"] = dialog.label.text()
        QTimer.singleShot(200, in_notices)
        dialog.notices_button.click()  # modal: returns when the notices close
        dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Close).click()

    QTimer.singleShot(200, in_about)
    about.trigger()
    assert "AGPL-3.0-or-later" in seen["about"] and "LICENSE" in seen["about"] and "file://" in seen["about"]
    assert "ultralytics " in seen["notices"] and "AGPL" in seen["notices"] and "PySide6" in seen["notices"]
    assert "SIL OPEN FONT LICENSE" in seen["notices"] and "Demo models of Hayai Desktop" in seen["notices"]
    assert seen["selected"] == "ultralytics"


def _light_share(icon) -> float:
    image = icon.pixmap(24, 24).toImage()
    values = [QColor(image.pixel(x, y)).lightness() for x in range(24) for y in range(24)
              if QColor.fromRgba(image.pixel(x, y)).alpha() > 200]
    assert values, "the icon draws something"
    return sum(v > 160 for v in values) / len(values)


def test_toolbar_icons_follow_the_theme(make_window, qapp):
    from app.ui.shell.main import apply_theme

    w = make_window()
    original = qapp.palette()
    try:
        apply_theme(qapp, "dark")
        qapp.processEvents()
        assert w.palette().color(QPalette.ColorRole.Window).lightness() < 80
        for name in ("open_folder", "save", "run_page", "next_page", "draw"):
            assert _light_share(getattr(w.act, name).icon()) > 0.9, name
        assert "color: #" in w.notice.close_button.styleSheet() or not w.notice.isVisible()
        apply_theme(qapp, "light")
        qapp.processEvents()
        for name in ("open_folder", "save", "run_page", "next_page", "draw"):
            assert _light_share(getattr(w.act, name).icon()) < 0.1, name
    finally:
        qapp.setPalette(original)


def test_model_manager_explains_the_detectors(qtbot):
    from app.ui.models.guide import RECOMMENDED_DETECTOR
    from app.ui.models.manager import ModelManagerDialog

    dlg = ModelManagerDialog()
    qtbot.addWidget(dlg)
    rows = {dlg.table.item(r, 0).text(): r for r in range(dlg.table.rowCount())}
    kind = {name: dlg.table.item(r, 1).text() for name, r in rows.items()}
    size = {name: dlg.table.item(r, 2).text() for name, r in rows.items()}
    assert kind[RECOMMENDED_DETECTOR] == "Detector: speech bubbles (recommended)"
    assert "outside bubbles" in kind["manga-text-detector"]
    assert all(size[n] != "not listed" and "MB" in size[n] for n in rows if n in kind and "Detector" in kind[n])
    assert "recommended" in dlg.guide.text()
    dlg.select("manga-text-detector")
    assert "narration" in dlg.info.text()
    dlg.reject()


def test_run_counts_and_time_left_without_the_model_load():
    now = [100.0]
    stats = RunStats(10, clock=lambda: now[0])
    now[0] = 160.0  # a minute of model loading
    stats.progressed(0)  # the pipeline's first report: models loaded
    assert stats.seconds_left(0) is None
    now[0] = 163.0
    stats.progressed(2)
    assert stats.seconds_left(2) == 12.0  # 1.5 s a page, 8 pages left: the minute is not counted
    assert stats.eta_text(2) == " · about 0:12 left"
    for _ in range(3):
        stats.page_read()
    assert stats.summary("cancelled") == "Cancelled: 3 of 10 page(s) read in 63.0 s"
    for _ in range(7):
        stats.page_read()
    assert stats.summary("done") == "Done: 10 page(s) in 63.0 s"
