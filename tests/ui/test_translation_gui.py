"""Machine translation in the window, against the loopback OpenAI-compatible server: nothing
sent before a backend is chosen, translate all with progress and per-page undo, resume, hand
edits kept and the machine text restorable, cancel within a second, the glossary dialog, and
Test connection in the settings dialog."""
import json
from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.core.config import api_keys
from app.core.document.types import Block
from app.core.project.files import load_project
from app.translate.base import GlossaryEntry
from tests.llm_server import fake_translate, page_of

TEXTS = {"page-001.png": ["タナカさん、おはよう！", "おはよう、ユキ。"], "page-002.png": ["ユキ、まって！"],
         "page-003.png": ["ありがとう", "さようなら"]}


def read_pages(w):
    """Blocks on every page through the undo stack, as if detection + OCR had run."""
    for name, lines in TEXTS.items():
        blocks = tuple(Block(id=f"b{i + 1}", order=i + 1, kind="bubble", box=(20 + 100 * i, 30, 90 + 100 * i, 200),
                             vertical=True, ocr_text=t) for i, t in enumerate(lines))
        w.edit(lambda p, b=blocks: replace(p, blocks=b, processed=True), "read", page=name)


def choose_backend(w, server, **extra):
    w.update_settings(translation_provider="openai", translation_preset="custom", translation_base_url=server.base_url,
                      translation_model="test-model", translation_target="en", **extra)


def translating_window(make_window, pages, server, monkeypatch):
    """A window on the pages, every page read, the loopback server chosen with its key in the env."""
    monkeypatch.setenv("OPENAI_API_KEY", server.key)
    api_keys.tie_env_key("openai", server.base_url)  # the user's "use $OPENAI_API_KEY for this server"
    w = make_window()
    w.session.open_path(pages)
    read_pages(w)
    choose_backend(w, server)
    return w


def run_and_wait(w, qtbot, start, timeout=15000):
    with qtbot.waitSignal(w.translation.run_finished, timeout=timeout) as blocker:
        assert start()
    return blocker.args[0]


def test_nothing_is_sent_before_a_backend_is_chosen(make_window, pages, fake_llm, qtbot):
    w = make_window()
    w.session.open_path(pages)
    read_pages(w)
    w.questions.answers["translation_settings"] = None  # the settings dialog opens; the user cancels it
    assert w.translation.translate_all() == 0
    assert fake_llm.seen == [] and w.settings.translation_provider == "" and not w.translation.busy()
    # once chosen there, the run goes to that server
    values = {"translation_provider": "openai", "translation_preset": "custom",
              "translation_base_url": fake_llm.base_url, "translation_model": "test-model"}
    w.questions.answers["translation_settings"] = (values, fake_llm.key)
    assert run_and_wait(w, qtbot, w.translation.translate_all) == "done"
    assert len(fake_llm.chats()) == 3 and w.doc.page("page-003.png").translated


def test_translate_all_resume_undo_and_hand_edits(make_window, pages, fake_llm, qtbot, monkeypatch):
    w = translating_window(make_window, pages, fake_llm, monkeypatch)
    # Ctrl+T translates the page shown, through the toolbar/menu action
    w.show_page("page-002.png")
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=5000)
    w.view.setFocus()
    with qtbot.waitSignal(w.translation.run_finished, timeout=15000):
        QTest.keyClick(w, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
    assert w.doc.page("page-002.png").blocks[0].translation == fake_translate("ユキ、まって！")
    # translate all: only the pages not translated yet
    fake_llm.seen.clear()
    assert run_and_wait(w, qtbot, w.translation.translate_all) == "done"
    sent = [page_of(s.body)["page"] for s in fake_llm.chats()]
    assert sent == ["page-001.png", "page-003.png"]
    for name, lines in TEXTS.items():
        assert [b.translation for b in w.doc.page(name).blocks] == [fake_translate(t) for t in lines]
    assert "Translated: 4 block(s) on 2 page(s)" in w.translation.status.text()
    # the context of page 3 held page 2 (translated in the first run)
    assert json.loads(fake_llm.chats()[1].body["messages"][-2]["content"])["translations"][0]["text"] == \
        fake_translate("ユキ、まって！")
    # saved as they arrived: the autosave holds the translations
    from app.core.project.paths import autosave_path_for

    saved = load_project(autosave_path_for(w.doc.source))
    assert saved.pages[2].blocks[1].translation == fake_translate("さようなら")
    # one undo step per page
    w.undo_stack.undo()
    assert w.doc.page("page-003.png").blocks[0].translation == ""
    w.undo_stack.redo()
    # the side panel shows the machine translation; a hand edit is undoable and kept by later runs
    w.show_page("page-001.png")
    w.view.select_block("b1")
    w.panel.select_block("b1")
    assert w.panel.translation_edit.toPlainText() == fake_translate("タナカさん、おはよう！")
    assert "Machine (test-model @ " in w.panel.machine.text()
    w.panel.translation_edit.setPlainText("Morning, Mr. Tanaka!")
    w.panel.flush()
    block = w.doc.page("page-001.png").block("b1")
    assert block.translation == "Morning, Mr. Tanaka!" and block.translation_edited
    assert w.panel.restore_translation_button.isEnabled()
    w.questions.answers["translate_again"] = True
    assert run_and_wait(w, qtbot, w.translation.translate_all) == "done"
    assert w.doc.page("page-001.png").block("b1").translation == "Morning, Mr. Tanaka!"
    # the machine text is restorable (and that is undoable too)
    w.panel.restore_translation_button.click()
    assert w.doc.page("page-001.png").block("b1").translation == fake_translate("タナカさん、おはよう！")
    w.undo_stack.undo()
    assert w.doc.page("page-001.png").block("b1").translation == "Morning, Mr. Tanaka!"
    # asked explicitly, a run replaces the hand edit
    assert run_and_wait(w, qtbot, lambda: w.translation.translate_current(replace_edited=True)) == "done"
    assert w.doc.page("page-001.png").block("b1").translation == fake_translate("タナカさん、おはよう！")


def test_cancel_stops_mid_request_and_keeps_what_arrived(make_window, pages, fake_llm, qtbot, monkeypatch):
    w = translating_window(make_window, pages, fake_llm, monkeypatch)
    fake_llm.script = ["ok", "slow"]
    fake_llm.delay = 120.0  # page 2's answer is held past the end of the test
    with qtbot.waitSignal(w.translation.run_finished, timeout=60000) as blocker:
        w.translation.translate_all()
        # page 1's answer applied (its result crosses to the GUI thread as a queued signal), page 2's held
        qtbot.waitUntil(lambda: len(fake_llm.chats()) == 2 and w.doc.page("page-001.png").translated,
                        timeout=30000)
        rid = w.translation.run_id
        w.slots.action_cancel()  # Esc
        # a page the worker sends after the cancel is dropped, as the reading worker's are
        from app.core.translation.run import PageOutcome

        late = w.doc.page("page-002.png")
        w.translation.host.worker.page_translated.emit(rid, PageOutcome(late.name, late, {"b1": "Wait!"},
                                                                        translator="test"))
        assert not w.doc.page("page-002.png").translated
    assert blocker.args == ["cancelled"]
    assert fake_llm.holding == 1  # the run ended while page 2's answer was still held: it did not wait
    assert w.doc.page("page-001.png").translated and not w.doc.page("page-002.png").translated
    fake_llm.close()  # the abandoned request


def test_failures_are_reported_per_page(make_window, pages, fake_llm, qtbot, monkeypatch):
    w = translating_window(make_window, pages, fake_llm, monkeypatch)
    fake_llm.script = ["garbage", "garbage"]  # page 1 twice garbage; pages 2, 3 fine
    assert run_and_wait(w, qtbot, w.translation.translate_all) == "done"
    assert not w.doc.page("page-001.png").translated and w.doc.page("page-003.png").translated
    assert w.notice.isVisible() and "page-001.png" in w.notice.label.text()


def test_glossary_dialog_add_from_block_import_export_undo(make_window, pages, qtbot, tmp_path):
    w = make_window()
    w.session.open_path(pages)
    read_pages(w)
    w.show_page("page-002.png")
    w.view.select_block("b1")
    w.panel.select_block("b1")

    def fill(dialog):
        assert dialog.from_block.isEnabled()
        dialog.from_block.click()
        row = dialog.table.rowCount() - 1
        assert dialog.table.item(row, 0).text() == "ユキ、まって！"
        dialog.table.item(row, 0).setText("ユキ")
        dialog.table.item(row, 1).setText("Yuki")
        (tmp_path / "in.txt").write_text("タナカ -> Tanaka  # surname\nユキ -> Snow\n", encoding="utf-8")
        assert dialog.import_file(tmp_path / "in.txt") == 1  # ユキ is in the table already
        dialog.export_file(tmp_path / "out.json")
        return True

    w.questions.answers["glossary"] = fill
    w.translation.open_glossary()
    expected = [GlossaryEntry("ユキ", "Yuki"), GlossaryEntry("タナカ", "Tanaka", "surname")]
    assert w.doc.project.glossary == expected
    assert json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))[1] == {
        "source": "タナカ", "target": "Tanaka", "note": "surname"}
    assert w.is_dirty()
    assert w.session.save()
    assert load_project(session_project_file(w)).glossary == expected  # saved in the project file
    w.undo_stack.undo()
    assert w.doc.project.glossary == []


def session_project_file(w):
    from app.core.project.paths import find_project_file

    return find_project_file(w.doc.source)


def test_settings_dialog_tests_the_connection(make_window, fake_llm, qtbot):
    from app.core.config import api_keys
    from app.ui.translate.actions import key_state as _key_state
    from app.ui.translate.settings_dialog import TranslationSettingsDialog

    w = make_window()
    choose_backend(w, fake_llm)
    dialog = TranslationSettingsDialog(w.settings, _key_state, w)
    qtbot.addWidget(dialog)
    assert dialog.base_url.text() == fake_llm.base_url and dialog.model.currentText() == "test-model"
    dialog.key.setText(fake_llm.key)
    with qtbot.waitSignal(w.translation.probe_finished, timeout=10000) as blocker:
        w.translation._dialog = dialog
        w.translation.probe_finished.connect(w.translation._show_probe)
        w.translation.probe(dialog.translator_settings(), dialog.typed_key())
    assert blocker.args[0] == ["other-model", "test-model"]
    assert "Connected" in dialog.test_result.text()
    assert [dialog.model.itemText(i) for i in range(dialog.model.count())] == ["other-model", "test-model"]
    # a wrong key: the error is shown, without the key
    dialog.key.setText("sk-wrong-key-123456")
    with qtbot.waitSignal(w.translation.probe_finished, timeout=10000) as blocker:
        w.translation.probe(dialog.translator_settings(), dialog.typed_key())
    assert "refused the API key" in dialog.test_result.text() and "sk-wrong" not in dialog.test_result.text()
    w.translation.probe_finished.disconnect(w.translation._show_probe)
    # presets fill the URL; a local one needs no key
    dialog.preset.setCurrentIndex(dialog.preset.findData("ollama"))
    dialog._apply_preset()
    assert dialog.base_url.text() == "http://localhost:11434/v1" and not dialog.key.isEnabled()
    assert not api_keys.find_key("openai", fake_llm.base_url).key  # nothing stored until OK


def test_another_source_opened_mid_translation_gets_none_of_it(make_window, pages, fake_llm, qtbot, monkeypatch,
                                                               tmp_path):
    """The old run's pages carry the same names as the new source's (page-001.png ...): nothing of
    it may land there, and its progress goes when it ends."""
    from tests.ui.conftest import write_pages

    w = translating_window(make_window, pages, fake_llm, monkeypatch)
    fake_llm.script = ["slow"]
    fake_llm.delay = 1.5  # page-001's answer comes after the new source is open
    other = write_pages(tmp_path / "other", 3)
    with qtbot.waitSignal(w.translation.run_finished, timeout=15000):
        w.translation.translate_all()
        qtbot.waitUntil(lambda: len(fake_llm.chats()) == 1, timeout=10000)
        assert w.session.open_path(other)
        read_pages(w)  # the same page names and block ids as the old source
    qtbot.waitUntil(lambda: fake_llm.released == 1, timeout=30000)  # the old run's slow answer has come
    qtbot.waitUntil(lambda: not w.translation.busy(), timeout=30000)
    assert not any(p.translated for p in w.doc.project.pages)
    assert not w.translation.progress.isVisible() and not w.translation.busy()
    assert w.status_label.text().startswith("Opened other")


def test_a_key_over_plain_http_to_another_machine_is_asked_first(make_window, pages, fake_llm, monkeypatch):
    w = make_window()
    w.session.open_path(pages)
    read_pages(w)
    lan = "http://10.255.255.1:9/v1"  # not this machine: nothing may reach it without a yes
    w.update_settings(translation_provider="openai", translation_preset="custom", translation_base_url=lan,
                      translation_model="m", translation_target="en")
    api_keys.store_key("openai", lan, "sk-lan-secret")
    w.questions.answers["insecure_key"] = False
    assert w.translation.translate_current() == 0  # refused: no request made
    assert "Nothing was sent to http://10.255.255.1:9/v1" in w.notice.label.text()
    asked = []
    w.questions.insecure_key = lambda server: asked.append(server) or True
    from app.core.translation.run import translator_settings_from

    settings = translator_settings_from(w.settings)
    assert w.translation.key_may_go(settings) and w.translation.key_may_go(settings)
    assert asked == ["http://10.255.255.1:9/v1"]  # asked once for that server
    # loopback and https need no question; an environment key is withheld from this URL
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    choose_backend(w, fake_llm)
    api_keys.tie_env_key("openai", fake_llm.base_url, tied=False)
    from app.ui.translate.actions import key_state as _key_state

    assert "$OPENAI_API_KEY is set but goes only to api.openai.com" in _key_state("openai", fake_llm.base_url)


def _segments(seen) -> list[str]:
    return [s["text"] for s in page_of(seen.body)["segments"]]


def test_translate_the_selected_blocks_from_the_page_and_the_script_view(make_window, pages, fake_llm, qtbot,
                                                                         monkeypatch):
    """Ctrl+Shift+B: the blocks selected on the page, or the rows selected in the Script view
    (across pages); only they change, the page's other translated blocks go as context, and the
    whole selection is one undo step."""
    w = translating_window(make_window, pages, fake_llm, monkeypatch)
    w.show()
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=5000)
    w.show_page("page-001.png")
    w.view.select_block("b2")
    w.view.setFocus()
    depth = w.undo_stack.count()
    with qtbot.waitSignal(w.translation.run_finished, timeout=15000) as blocker:
        QTest.keyClick(w.view, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert blocker.args == ["done"]
    assert [_segments(s) for s in fake_llm.chats()] == [["おはよう、ユキ。"]]
    page = w.doc.page("page-001.png")
    assert page.block("b2").translation == fake_translate("おはよう、ユキ。") and page.block("b1").translation == ""
    assert w.undo_stack.count() == depth + 1
    # the Script view: rows of two pages, chosen with the mouse (ctrl+click adds a row)
    QTest.keyClick(w, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    view = w.script
    qtbot.waitUntil(view.dock.isVisible, timeout=5000)
    table = view.table
    for row, mods in ((0, Qt.KeyboardModifier.NoModifier), (4, Qt.KeyboardModifier.ControlModifier)):
        rect = table.visualRect(view.proxy.index(row, 3))
        QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, mods, rect.center())
    assert view.selected_keys() == [("page-001.png", "b1"), ("page-003.png", "b2")]
    assert w.current == "page-003.png"  # the last row chosen shows its block on its page
    fake_llm.seen.clear()
    depth = w.undo_stack.count()
    with qtbot.waitSignal(w.translation.run_finished, timeout=15000):
        QTest.keyClick(table, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert [_segments(s) for s in fake_llm.chats()] == [["タナカさん、おはよう！"], ["さようなら"]]
    # page 1's other block (translated by the first run) went along as the nearest context
    msgs = fake_llm.chats()[0].body["messages"]
    assert json.loads(msgs[-3]["content"])["page"] == "page-001.png"
    assert json.loads(msgs[-2]["content"])["translations"][0]["text"] == fake_translate("おはよう、ユキ。")
    one, three = w.doc.page("page-001.png"), w.doc.page("page-003.png")
    assert [b.translation for b in one.blocks] == [fake_translate(t) for t in TEXTS["page-001.png"]]
    assert [b.translation for b in three.blocks] == ["", fake_translate("さようなら")]
    assert not any(b.translation for b in w.doc.page("page-002.png").blocks)
    assert w.undo_stack.count() == depth + 1  # both pages: one step
    w.undo_stack.undo()
    assert w.doc.page("page-001.png").block("b1").translation == ""
    assert w.doc.page("page-003.png").block("b2").translation == ""
    assert w.doc.page("page-001.png").block("b2").translation == fake_translate("おはよう、ユキ。")
    w.undo_stack.redo()
    assert w.doc.page("page-003.png").block("b2").translation == fake_translate("さようなら")


def test_translate_a_page_range(make_window, pages, fake_llm, qtbot, monkeypatch):
    w = translating_window(make_window, pages, fake_llm, monkeypatch)
    menu = next(a.menu() for a in w.menuBar().actions() if a.text() == "&Translate")
    texts = [a.text() for a in menu.actions()]
    assert "Translate pages…" in texts and "Translate the selected blocks" in texts
    w.questions.answers["translate_pages"] = ("2-3", False, False)
    assert run_and_wait(w, qtbot, lambda: w.translation.act.translate_pages.trigger() or w.translation.busy()) == "done"
    assert [page_of(s.body)["page"] for s in fake_llm.chats()] == ["page-002.png", "page-003.png"]
    assert not w.doc.page("page-001.png").translated and w.doc.page("page-003.png").translated
    # translated already: said so, nothing sent, unless asked to send them again
    fake_llm.seen.clear()
    assert w.translation.translate_page_range(("3", False, False)) == 0
    assert "translated already" in w.notice.label.text() and fake_llm.chats() == []
    assert run_and_wait(w, qtbot, lambda: w.translation.translate_page_range(("3", True, False))) == "done"
    assert [page_of(s.body)["page"] for s in fake_llm.chats()] == ["page-003.png"]
    assert w.translation.translate_page_range(("4-5", False, False)) == 0
    assert "the volume has pages 1 to 3" in w.notice.label.text()


def test_the_pages_dialog_checks_the_range(qtbot):
    from app.ui.translate.pages_dialog import PagesDialog

    dialog = PagesDialog(12, 3)
    qtbot.addWidget(dialog)
    assert dialog.range_edit.text() == "3-12" and "10 page(s)" in dialog.error.text()
    ok = dialog.buttons.buttons()[0]
    dialog.range_edit.setText("")
    QTest.keyClicks(dialog.range_edit, "2-20")
    assert not ok.isEnabled() and "1 to 12" in dialog.error.text()
    dialog.range_edit.setText("1,4,9-")
    assert ok.isEnabled() and dialog.answer() == ("1,4,9-", False, False)
