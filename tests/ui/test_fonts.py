"""The app draws CJK text with its own shipped font, whatever the machine has installed."""
from __future__ import annotations

import numpy as np
import pytest

SAMPLE = "漢字かなカナ한글"


def _render(font, text: str, px: int = 48) -> np.ndarray:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter

    image = QImage(px * 2, px * 2, QImage.Format.Format_Grayscale8)
    image.fill(255)
    painter = QPainter(image)
    painter.setFont(font)
    painter.setPen(Qt.GlobalColor.black)
    painter.drawText(px // 4, int(px * 1.4), text)
    painter.end()
    return np.array(image.constBits(), dtype=np.uint8).reshape(image.height(), image.bytesPerLine())[:, : image.width()]


def _app_font(px: int = 48):
    from PySide6.QtGui import QFont

    from app.ui.editor import items

    font = items.overlay_font(px)
    font.setStyleStrategy(QFont.StyleStrategy.NoFontMerging)  # no fallback: the app's face alone
    return font


def test_shipped_cjk_font_is_registered_and_used(qapp):
    from app import fonts
    from app.ui.editor import items
    from app.ui.shell.main import pick_cjk_font

    assert pick_cjk_font() == fonts.CJK_FAMILY
    assert items.overlay_font(12).family() == fonts.CJK_FAMILY
    assert fonts.font_file("cjk").stat().st_size > 1_000_000


def test_every_sample_glyph_differs_from_the_missing_glyph_box(qapp):
    from app.ui.shell.main import pick_cjk_font

    pick_cjk_font()
    font = _app_font()
    missing = _render(font, "\ue000")  # a private-use code point: no font has it, drawn as .notdef
    assert (missing < 128).sum() > 20, "the missing-glyph box should draw something to compare with"
    for ch in SAMPLE:
        glyph = _render(font, ch)
        assert (glyph < 128).sum() > 20, f"{ch!r} drew nothing"
        assert not np.array_equal(glyph, missing), f"{ch!r} is drawn as the missing-glyph box"


def test_the_panel_and_overlay_use_the_shipped_face(make_window):
    from app import fonts
    from app.ui.shell.main import pick_cjk_font

    pick_cjk_font()
    w = make_window()
    assert w.panel.list.font().family() == fonts.CJK_FAMILY
    assert w.panel.text_edit.font().family() == fonts.CJK_FAMILY


@pytest.mark.parametrize("role", ["cjk", "cjk-bold", "cjk-serif", "cjk-serif-bold", "comic"])
def test_shipped_faces_cover_what_they_promise(role):
    from fontTools.ttLib import TTFont

    from app import fonts

    cmap = TTFont(str(fonts.font_file(role)), lazy=True).getBestCmap()
    need = "Hello, World! ?" if role == "comic" else "漢字かなカナ、。「」ー！？…日本語ABC123"
    if role == "cjk":
        need += "한글中文简体繁體"
    assert not [c for c in need if ord(c) not in cmap]
