"""Typing in the block panel as a user does (key presses into the real window): the fields stay
where they are (the translation memory's box has one place, filled or empty), the memory never
offers a block its own translation, and Approve is set only when the user presses it."""
from dataclasses import replace

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from app.ui.editor.block_panel import NO_SUGGESTION
from tests.ui.test_translation_gui import read_pages


def _places(panel) -> dict:
    """Where each field of the editor is, in the panel's coordinates (top-left and size)."""
    out = {}
    for name in ("text_edit", "translation_edit", "machine", "approve_button", "suggestions_label", "suggestions"):
        widget = getattr(panel, name)
        top_left = widget.mapTo(panel, QPoint(0, 0))
        out[name] = (top_left.x(), top_left.y(), widget.width(), widget.height(), widget.isVisible())
    return out


def _texts(panel) -> list[str]:
    return [panel.suggestions.item(i).text() for i in range(panel.suggestions.count())]


def _type(qtbot, panel, editor, keys: str) -> None:
    editor.setFocus()
    qtbot.waitUntil(editor.hasFocus, timeout=5000)
    QTest.keyClicks(editor, keys)
    qtbot.waitUntil(lambda: not panel.typing(), timeout=5000)  # committed after the pause, as when typing stops


def test_typing_moves_nothing_offers_no_own_text_and_approves_nothing(make_window, pages, qtbot):
    w = make_window()
    w.resize(1280, 800)
    w.session.open_path(pages)
    read_pages(w)
    w.show_page("page-001.png")
    w.select_block("b1")
    panel = w.panel
    qtbot.waitUntil(lambda: panel.translation_edit.isEnabled(), timeout=5000)
    qapp_events(qtbot)
    before = _places(panel)
    assert _texts(panel) == [NO_SUGGESTION] and before["suggestions"][4]  # the box is there, empty
    _type(qtbot, panel, panel.translation_edit, "M")  # the first keystroke, then a pause
    block = w.doc.page("page-001.png").block("b1")
    assert block.translation == "M"
    qapp_events(qtbot)
    assert _places(panel) == before  # nothing moved
    # the block's own translation is in the memory (typed by hand), yet never offered back to it
    assert not any(t.startswith("M ") for t in _texts(panel)) and _texts(panel) == [NO_SUGGESTION]
    _type(qtbot, panel, panel.translation_edit, "orning, Tanaka!")
    qapp_events(qtbot)
    assert _places(panel) == before
    assert _texts(panel) == [NO_SUGGESTION]
    # typing a translation is not approving it
    block = w.doc.page("page-001.png").block("b1")
    assert not block.approved and panel.approve_button.text() == "Approve" and panel.approve_button.isEnabled()
    QTest.keyClick(panel.translation_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert w.doc.page("page-001.png").block("b1").approved and panel.approve_button.text() == "Approved ✓"
    qapp_events(qtbot)
    assert _places(panel) == before
    _type(qtbot, panel, panel.text_edit, "X")  # the transcription too: the fields stay put
    qapp_events(qtbot)
    assert _places(panel) == before
    w.undo_stack.undo()


def test_the_same_line_elsewhere_is_offered_and_its_own_is_not(make_window, pages, qtbot):
    """Another block with the same source and its own approved translation is a real suggestion
    (100 %); once this block holds that same translation, nothing is left to offer."""
    w = make_window()
    w.session.open_path(pages)
    read_pages(w)
    same = w.doc.page("page-001.png").block("b1").display_text
    w.edit(lambda p: replace(p, blocks=(replace(p.blocks[0], ocr_text=same, translation="Good morning, Tanaka!"),)),
           "text", page="page-002.png")
    w.show_page("page-001.png")
    w.select_block("b1")
    panel = w.panel
    assert _texts(panel)[0].startswith("Good morning, Tanaka!") and _texts(panel)[0].endswith("(100 %)")
    panel._use_suggestion(panel.suggestions.item(0))
    assert w.doc.page("page-001.png").block("b1").translation == "Good morning, Tanaka!"
    assert _texts(panel) == [NO_SUGGESTION]
    panel._use_suggestion(panel.suggestions.item(0))  # the placeholder is not a suggestion
    assert w.doc.page("page-001.png").block("b1").translation == "Good morning, Tanaka!"
    w.show_page("page-002.png")
    w.select_block("b1")  # the other block is not offered its own translation either
    assert _texts(panel) == [NO_SUGGESTION]


def qapp_events(qtbot) -> None:
    qtbot.wait(50)  # layouts settle
