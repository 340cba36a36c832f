"""Series, translation memory, story memory, glossary proposals and the consistency check in
the window, against the loopback server: the Memory panel's edits undoable and saved; proposals
accepted into the glossary or dismissed (remembered); the consistency rows jump to their
block; a volume in a series folder takes the series' glossary, gets suggestions from its
translation memory, Approve (Ctrl+Enter), exact repeats filled without a request (undoable with
the page's step), and what it learned written back to the series file when saved."""
import json
from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.core.project.files import load_project
from app.core.project.paths import find_project_file
from app.core.translation.series import SERIES_FILE, Series, load_series, save_series
from app.core.translation.translation_memory import LABEL
from app.translate.base import GlossaryEntry
from app.translate.memory import Character, StoryMemory
from tests.ui.test_translation_gui import read_pages, run_and_wait, translating_window


def open_read(make_window, pages):
    w = make_window()
    w.session.open_path(pages)
    read_pages(w)
    return w


def test_memory_panel_edits_are_undoable_and_saved(make_window, pages):
    w = open_read(make_window, pages)
    panel = w.translation.series.memory_panel
    w.doc.project.memory = StoryMemory((Character("ユキ", "Yuki", "she"),))
    panel.refresh()
    assert panel.characters.rowCount() == 1 and panel.characters.item(0, 1).text() == "Yuki"
    panel.characters.item(0, 1).setText("Yuki-chan")  # the user's edit: one undoable step, theirs now
    assert w.doc.project.memory.characters == (Character("ユキ", "Yuki-chan", "she", by_user=True),)
    panel._add_row(panel.terms)
    panel.terms.setItem(0, 0, panel.terms.item(0, 0).__class__("先生"))
    assert [t.source for t in w.doc.project.memory.terms] == ["先生"]
    panel.summary.setPlainText("Yuki meets Tanaka.")
    panel.flush()
    assert w.doc.project.memory.summary == "Yuki meets Tanaka." and w.doc.project.memory.summary_by_user
    w.undo_stack.undo()
    assert w.doc.project.memory.summary == "" and panel.summary.toPlainText() == ""
    w.undo_stack.undo()
    w.undo_stack.undo()
    assert w.doc.project.memory.characters[0].target == "Yuki" and panel.characters.item(0, 1).text() == "Yuki"
    w.undo_stack.redo()
    assert w.session.save()
    saved = load_project(find_project_file(pages))
    assert saved.memory.characters == (Character("ユキ", "Yuki-chan", "she", by_user=True),)


def test_glossary_proposals_accepted_or_dismissed(make_window, pages):
    w = open_read(make_window, pages)
    panel = w.translation.series.memory_panel
    w.translation.series.memory_panel.set_memory(StoryMemory((Character("タナカ", "Tanaka"),)))
    # ユキ recurs on pages 1 and 2 (a katakana run of 2 is too short; make one of 3)
    for name in ("page-001.png", "page-002.png"):
        w.edit(lambda p: replace(p, blocks=(replace(p.blocks[0], ocr_text="ユキコ、まって"), *p.blocks[1:])),
               "text", page=name)
    rows = {panel.proposed.item(r, 0).text(): (panel.proposed.item(r, 1).text(), panel.proposed.item(r, 2).text())
            for r in range(panel.proposed.rowCount())}
    assert rows == {"タナカ": ("Tanaka", "story memory"), "ユキコ": ("", "on 2 pages")}
    assert w.doc.project.glossary == []  # never added on its own
    panel.proposed.selectRow(0)
    assert panel.accept_selected() == 1
    assert w.doc.project.glossary == [GlossaryEntry("タナカ", "Tanaka")]
    assert [panel.proposed.item(r, 0).text() for r in range(panel.proposed.rowCount())] == ["ユキコ"]
    panel.proposed.selectRow(0)
    assert panel.dismiss_selected() == 1 and panel.proposed.rowCount() == 0
    assert w.session.save()
    saved = load_project(find_project_file(pages))
    assert saved.dismissed_proposals == ["ユキコ"] and saved.glossary == [GlossaryEntry("タナカ", "Tanaka")]
    w.undo_stack.undo()  # the dismissal is undoable too
    assert panel.proposed.rowCount() == 1


def test_consistency_rows_jump_to_their_block(make_window, pages, qtbot):
    w = open_read(make_window, pages)
    w.edit(lambda p: replace(p, blocks=tuple(replace(b, translation=t) for b, t in
                                             zip(p.blocks, ["Morning, Tanaka!", "Morning, Yuki."]))),
           "tr", page="page-001.png")
    w.edit(lambda p: replace(p, blocks=(replace(p.blocks[0], ocr_text="タナカさん、おはよう！",
                                                translation="Hi Mr. Tanaka"),)), "tr", page="page-002.png")
    w.edit(lambda p: replace(p, blocks=(replace(p.blocks[0], translation="x" * 200), p.blocks[1])),
           "tr", page="page-003.png")
    check = w.translation.series.check_panel
    w.translation.series.memory_panel.set_memory(StoryMemory((Character("ユキ", "Yukiko"),)))
    with qtbot.waitSignal(check.checked, timeout=60000):
        w.translation.series.open_check()
    rows = [(check.table.item(r, 0).text(), check.table.item(r, 1).text()) for r in range(check.table.rowCount())]
    assert len(rows) == len(set(rows))  # each finding once (the lettering pass adds only its own)
    assert ("page-002.png #1", "translated differently") in rows
    assert ("page-001.png #2", "name not used") in rows
    assert any(r[0] == "page-003.png #1" and r[1] in ("clipped", "below minimum size") for r in rows)
    row = rows.index(("page-002.png #1", "translated differently"))
    check.table.cellClicked.emit(row, 0)
    assert w.current == "page-002.png" and w.panel.current_id == "b1"


def test_series_volume_suggestions_approve_and_memory_fill(make_window, pages, fake_llm, qtbot, monkeypatch):
    series_file = pages.parent / SERIES_FILE
    save_series(Series(series_file, [GlossaryEntry("タナカ", "Tanaka-sensei")],
                       StoryMemory(summary="Earlier volume."),
                       [("ありがとう", "Thanks a lot!"), ("タナカさん、おはよう", "Morning, sensei.")]))
    w = translating_window(make_window, pages, fake_llm, monkeypatch)
    project = w.doc.project
    assert project.glossary == [GlossaryEntry("タナカ", "Tanaka-sensei")]  # a new volume takes the series'
    assert project.memory.summary == "Earlier volume."
    # the block panel suggests the close match; a click uses it
    w.show_page("page-001.png")
    w.select_block("b1")
    panel = w.panel
    assert panel.suggestions.isVisible() or panel.suggestions.count() == 1
    assert panel.suggestions.item(0).text().startswith("Morning, sensei.")
    panel._use_suggestion(panel.suggestions.item(0))
    assert w.doc.page("page-001.png").blocks[0].translation == "Morning, sensei."
    # translate all: ありがとう (page 3) is filled from memory, the rest asked for
    assert run_and_wait(w, qtbot, w.translation.translate_all) == "done"
    third = w.doc.page("page-003.png")
    assert third.blocks[0].translation == "Thanks a lot!" and third.blocks[0].translator == LABEL
    assert third.blocks[1].translator not in ("", LABEL)
    asked = json.dumps([c.body for c in fake_llm.chats()], ensure_ascii=False)
    assert "ありがとう" not in asked.split("さようなら")[-1] or "\"ありがとう\"" not in asked
    steps = 0
    while w.undo_stack.undoText().startswith("story memory"):  # the model's memory proposals, their own steps
        w.undo_stack.undo()
        steps += 1
    assert w.undo_stack.undoText() == "translate page-003.png"
    w.undo_stack.undo()  # the page's step, the memory's fill with it
    assert w.doc.page("page-003.png").blocks[0].translation == ""
    for _ in range(steps + 1):
        w.undo_stack.redo()
    # Approve with Ctrl+Enter in the translation field: the machine translation enters the memory
    w.show_page("page-002.png")
    w.select_block("b1")
    panel.translation_edit.setFocus()
    qtbot.waitUntil(panel.translation_edit.hasFocus, timeout=5000)
    QTest.keyClick(panel.translation_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    block = w.doc.page("page-002.png").blocks[0]
    assert block.approved and panel.approve_button.text() == "Approved ✓"
    assert w.session.save()  # saving writes what the volume learned to the series file
    pairs = load_series(series_file).tm
    assert ("ユキ、まって！", block.translation) in pairs and ("タナカさん、おはよう！", "Morning, sensei.") in pairs
