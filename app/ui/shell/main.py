"""GUI entry point: `run_gui(args) -> int` (args: path, demo, smoke_test, model, detector).

Sets up the QApplication (system light/dark theme, a CJK font), opens the main window and the
requested source. `--smoke-test` runs offscreen: open a page, run the pipeline once with the
given models, exit 0 on success. `--demo` opens app/resources/samples with app/resources/demo models.
"""
from __future__ import annotations

import logging
import os
import sys
import tempfile
from pathlib import Path

from app.ui.shell.startup import startup_settings


def pick_cjk_font() -> str:
    """Register the app's shipped fonts (app/resources/fonts) with Qt and make the shipped CJK face the
    one overlays, the block panel and the editors draw with; "" if it could not be loaded.

    The shipped faces are used whatever the system has installed, so every machine draws the same
    glyphs; characters a subset lacks fall back to Qt's own font merging."""
    from PySide6.QtGui import QFontDatabase

    from app import fonts
    from app.ui.editor import items

    loaded: set[str] = set()
    for font_file in fonts.shipped_files():
        fid = QFontDatabase.addApplicationFont(str(font_file))
        if fid >= 0:
            loaded.update(QFontDatabase.applicationFontFamilies(fid))
    family = fonts.CJK_FAMILY if fonts.CJK_FAMILY in loaded else ""
    if not family:
        logging.getLogger(__name__).warning(
            "The app's CJK font is missing from %s (a damaged installation: reinstall it); Japanese, Chinese "
            "and Korean text may show as boxes.", fonts.font_dir())
    items.CJK_FAMILY = family
    return family


FONT_CHECK_TEXT = "漢字かなカナ한글"


def missing_glyphs(text: str = FONT_CHECK_TEXT) -> list[str]:
    """The characters of `text` that the app's CJK face (alone, no fallback) draws as its
    missing-glyph box or not at all. The bundle's smoke test runs this: [] means the shipped
    font is in the bundle and works."""
    import numpy as np
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QFont, QImage, QPainter

    from app.ui.editor import items

    font = items.overlay_font(48)
    font.setStyleStrategy(QFont.StyleStrategy.NoFontMerging)

    def draw(ch: str) -> np.ndarray:
        image = QImage(96, 96, QImage.Format.Format_Grayscale8)
        image.fill(255)
        painter = QPainter(image)
        painter.setFont(font)
        painter.setPen(Qt.GlobalColor.black)
        painter.drawText(12, 66, ch)
        painter.end()
        return np.array(image.constBits(), np.uint8).reshape(96, image.bytesPerLine())[:, :96].copy()

    box = draw("\ue000")  # private use: no font has it, so it draws .notdef
    out = []
    for ch in text:
        glyph = draw(ch)
        if (glyph < 128).sum() < 20 or np.array_equal(glyph, box):
            out.append(ch)
    return out


def apply_theme(app, force: str | None = None) -> None:
    """Fusion style with the system's light or dark palette; follows later switches.

    `force` ("dark" / "light", or $HAYAI_DESKTOP_THEME) overrides the system, for desktops
    whose colour scheme Qt cannot read."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor, QPalette

    app.setStyle("Fusion")
    hints = app.styleHints()

    force = force or os.environ.get("HAYAI_DESKTOP_THEME", "").lower() or None

    def update(*_args) -> None:
        dark = force == "dark" if force in ("dark", "light") else hints.colorScheme() == Qt.ColorScheme.Dark
        if dark:
            pal = QPalette()
            for role, color in ((QPalette.ColorRole.Window, "#2b2b2e"), (QPalette.ColorRole.WindowText, "#e8e8e8"),
                                (QPalette.ColorRole.Base, "#1f1f22"), (QPalette.ColorRole.AlternateBase, "#29292d"),
                                (QPalette.ColorRole.Text, "#e8e8e8"), (QPalette.ColorRole.Button, "#333338"),
                                (QPalette.ColorRole.ButtonText, "#e8e8e8"), (QPalette.ColorRole.Highlight, "#3d7bd9"),
                                (QPalette.ColorRole.HighlightedText, "#ffffff"),
                                (QPalette.ColorRole.ToolTipBase, "#333338"), (QPalette.ColorRole.ToolTipText, "#e8e8e8"),
                                (QPalette.ColorRole.PlaceholderText, "#9a9a9a"),
                                (QPalette.ColorRole.Link, "#7ab7ff"), (QPalette.ColorRole.LinkVisited, "#c39bff")):
                pal.setColor(role, QColor(color))
            for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
                pal.setColor(QPalette.ColorGroup.Disabled, role, QColor("#7a7a7f"))
            app.setPalette(pal)
        else:
            app.setPalette(app.style().standardPalette())

    update()
    hints.colorSchemeChanged.connect(update)


def _write_smoke_page(folder: Path) -> Path:
    """A plain generated page (white, a few dark shapes) for a smoke test without a path."""
    from PIL import Image, ImageDraw

    folder.mkdir(parents=True, exist_ok=True)
    image = Image.new("RGB", (640, 900), "white")
    draw = ImageDraw.Draw(image)
    draw.ellipse((60, 80, 300, 360), outline="black", width=4)
    draw.rectangle((380, 500, 560, 820), outline="black", width=4)
    for i in range(6):
        draw.line((150 + 20 * i, 140, 150 + 20 * i, 300), fill="black", width=6)
    image.save(folder / "page-001.png")
    return folder


APP_ID = "hayai-desktop"  # the program, its desktop file, the X11 window class, the Wayland app id
APP_NAME = "Hayai Desktop"


def configure_application(app) -> None:
    """Names the desktop sees: the task bar groups the window under the hayai-desktop desktop
    file (packaging/linux/hayai-desktop.desktop) and shows "Hayai Desktop"."""
    app.setApplicationName(APP_ID)
    app.setOrganizationName(APP_ID)
    app.setApplicationDisplayName(APP_NAME)
    app.setDesktopFileName(APP_ID)


def run_gui(args) -> int:
    from app.logs import configure_logging

    smoke = bool(getattr(args, "smoke_test", False))
    configure_logging(stderr=False)
    tmp = None
    if smoke:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        tmp = tempfile.TemporaryDirectory(prefix="hayai-smoke-")
        os.environ.setdefault("HAYAI_DESKTOP_CONFIG_DIR", str(Path(tmp.name) / "config"))
    from app.ui.shell import xcb_check

    problem = xcb_check.check()
    if problem:  # Qt would abort with a message about platform plugins: name the packages instead
        print(problem, file=sys.stderr)
        return 3
    from PySide6.QtWidgets import QApplication

    # argv[0] is the X11 window class's instance name (what a Linux task bar matches)
    app = QApplication.instance() or QApplication([APP_ID])
    configure_application(app)
    apply_theme(app)
    pick_cjk_font()

    from app.ui.shell.main_window import MainWindow
    from app.ui.shell.preferences import restore_geometry

    try:
        settings, settings_file, path = startup_settings(args)
    except FileNotFoundError as exc:
        print(f"hayai-desktop: {exc}", file=sys.stderr)
        return 2
    demo = bool(getattr(args, "demo", False))

    window = MainWindow(settings, settings_path=settings_file)
    window.demo = demo
    window.update_model_banner()
    if not smoke:
        restore_geometry(window)
    window.show()
    if smoke:
        try:
            return _smoke_test(app, window, path or str(_write_smoke_page(Path(tmp.name) / "pages")))
        finally:
            tmp.cleanup()
    from app.ui.shell.ending import end_on_signals

    put_back = end_on_signals(window, app.quit)  # SIGTERM, SIGHUP, Ctrl+C: closed, every edit kept
    if path:
        window.session.open_path(path)
    else:
        window.session.reopen_after_crash()
    code = app.exec()
    put_back()
    if not window.stopped_cleanly:
        # a worker is still inside a step that cannot be interrupted: its QThread must not be
        # destroyed while it runs (Qt aborts the process). Everything is saved: end here.
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def items_family() -> str:
    from app.ui.editor import items

    return items.CJK_FAMILY or "(none)"


def _smoke_test(app, window, path: str, timeout_s: int = 600) -> int:
    """Open `path`, run the pipeline on its first page, report, close. 0 = success."""
    from PySide6.QtCore import QEventLoop, QTimer


    window.questions.answers.update(restore_autosave=False, unsaved_changes="discard")
    missing = missing_glyphs()
    print(f"smoke test: font {items_family()}: "
          f"{'missing ' + ''.join(missing) if missing else 'every glyph of ' + FONT_CHECK_TEXT + ' drawn'}",
          file=sys.stderr)
    if missing:
        window.close()
        return 1
    from app import notices  # Help > About's licence and third-party notices, as found in this installation

    licence, notice_text = notices.license_file(), notices.third_party_notices()
    print(f"smoke test: licence {notices.LICENSE_SPDX}: {licence or 'LICENSE missing'}; third-party notices: "
          f"{'bundled ' + notices.NOTICES_FILE if notices.bundled_notices_file() else 'from the installed metadata'}, "
          f"{len(notice_text)} characters", file=sys.stderr)
    if licence is None or "ultralytics" not in notice_text:
        window.close()
        return 1
    if not window.session.open_path(path):
        print(f"smoke test: could not open {path}: {window.notice.label.text()}", file=sys.stderr)
        window.close()
        return 1
    loop = QEventLoop()
    result = {"status": "timeout"}

    def finished(status: str) -> None:
        result["status"] = status
        loop.quit()

    window.run_finished.connect(finished)
    QTimer.singleShot(timeout_s * 1000, loop.quit)
    window.run_pages(window.doc.page_names()[:1])
    loop.exec()
    page = window.doc.page(window.doc.page_names()[0])
    ok = result["status"] == "done" and not page.error and not window.last_error
    print(f"smoke test: {result['status']}; page {page.name}: {len(page.blocks)} block(s)"
          f"{'; error: ' + page.error if page.error else ''}{'; ' + window.last_error if window.last_error else ''}; "
          f"{window.device_label.text()}", file=sys.stderr)
    window.close()
    app.processEvents()
    return 0 if ok else 1
