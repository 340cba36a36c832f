"""Messages that go when their cause does: each notice has an owner that clears it (a failed run's
error by the next run that succeeds, the report of untranslated blocks once they are translated),
the translation report names every block by page and number, and what the status line said is
kept whole in the Messages dock."""
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from app.core.config import api_keys
from app.ui.common.dialogs import NoticeBar
from app.ui.translate.report import ReportDialog
from tests.llm_server import FakeLLM
from tests.ui.test_translation_gui import choose_backend, run_and_wait, translating_window


def test_a_notice_stands_until_its_owner_clears_it(qtbot):
    bar = NoticeBar()
    qtbot.addWidget(bar)
    bar.post("reading", "error", "the detector is missing")
    bar.post("translation", "error", "cannot connect")
    bar.show_message("info", "opened")  # no owner: replaced by the next one without an owner
    assert bar.owner == "" and bar.owners() == ["reading", "translation", ""]
    bar.dismiss()  # the user closes what is shown: the one under it shows again
    assert bar.owner == "translation" and "cannot connect" in bar.label.text()
    bar.clear("reading")  # not the one shown: it goes, what is shown stays
    assert bar.owner == "translation" and bar.owners() == ["translation"]
    bar.post("translation", "error", "cannot connect again")  # an owner's new message replaces its last
    assert bar.owners() == ["translation"] and "again" in bar.label.text()
    bar.clear("translation")
    assert bar.isHidden() and bar.owner == "" and bar.kind == ""


def test_the_report_names_every_block_and_goes_once_they_are_translated(make_window, pages, fake_llm, qtbot,
                                                                         monkeypatch):
    w = translating_window(make_window, pages, fake_llm, monkeypatch)
    fake_llm.script = ["garbage", "garbage"]  # page 1 answered twice with prose: not translated
    assert run_and_wait(w, qtbot, w.translation.translate_all) == "done"
    text = w.notice.label.text()
    assert w.notice.isVisible() and w.notice.owner == "translation-report"
    assert "page 1 (page-001.png): blocks 1, 2" in text, text  # by page and number, not by block id
    assert "b1" not in text and "more)" not in text
    show = next(b for b in w.notice.buttons() if b.text() == "Show every block")
    show.click()
    dialog = w.findChild(ReportDialog)
    assert dialog is not None and dialog.isVisible()
    rows = [(dialog.table.item(r, 0).text(), dialog.table.item(r, 1).text()) for r in range(dialog.table.rowCount())]
    assert rows == [("1 (page-001.png)", "1"), ("1 (page-001.png)", "2")]
    dialog.close()
    # Translate all resumes with them; once they are translated the report has nothing to say
    assert run_and_wait(w, qtbot, w.translation.translate_all) == "done"
    assert w.doc.page("page-001.png").translated
    assert w.notice.message("translation-report") == "" and w.notice.isHidden()


def test_a_failed_connection_is_forgotten_after_a_run_that_works(make_window, pages, fake_llm, qtbot, monkeypatch):
    w = translating_window(make_window, pages, fake_llm, monkeypatch)
    gone = FakeLLM()
    gone.close()  # a server that is not running: nothing listens on its port
    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    api_keys.tie_env_key("openai", gone.base_url)
    choose_backend(w, gone)
    assert run_and_wait(w, qtbot, w.translation.translate_all) in ("failed", "done")
    said = {owner: w.notice.message(owner) for owner in w.notice.owners()}
    assert any(f"127.0.0.1:{gone.port}" in text for text in said.values()) and w.notice.isVisible(), said
    choose_backend(w, fake_llm)  # the server that runs
    assert run_and_wait(w, qtbot, w.translation.translate_all) == "done"
    assert w.notice.message("translation") == "" and w.notice.message("translation-report") == ""
    assert not any(f":{gone.port}" in w.notice.message(owner) for owner in w.notice.owners())
    assert all(p.translated for p in w.doc.project.pages)


def test_the_status_line_is_kept_whole_in_the_messages(make_window, pages, qtbot):
    w = make_window()
    w.resize(1280, 800)
    w.session.open_path(pages)
    long = "Exported 30 file(s) to " + "/very/long/folder" * 12 + "; 2 page(s) skipped (page-009.png: unreadable)"
    w.show_status(long, owner="export")
    assert w.messages_dock.isHidden()
    QTest.mouseClick(w.status_label, Qt.MouseButton.LeftButton, pos=QPoint(5, 5))
    assert w.messages_dock.isVisible() and long in w.messages.text.toPlainText()
    w.clear_status("reading")  # another owner's: the line stays
    assert w.status_label.text() == long
    w.clear_status("export")
    assert w.status_label.text() == ""


def test_a_long_warning_leaves_the_status_line_room_to_be_read(make_window, pages, qtbot):
    """A window of 1250 pixels (not maximized), a long warning on the bar and the models' label: the
    status line still shows the start of what it says (before, it was squeezed to "Done:…")."""
    import logging

    w = make_window()
    w.resize(1250, 800)
    w.show()
    w.session.open_path(pages)
    logging.getLogger("app.core.project.lock").warning(
        "/home/reader/manga/a rather long series name/volume 1: took over the lock left by Hayai Desktop "
        "(process 8917 on vm, since 16:40), which is no longer running.")
    qtbot.waitUntil(w.warning_button.isVisible, timeout=5000)
    w.device_label.setText("hayai-demo-ocr + adapted to volume 1 + hayai-demo-detector on CPU · BF16")  # once loaded
    said = "Done: 1 page(s) in 0.1 s; boxes kept, 4 of 4 block(s) read differently"
    w.show_status(said, owner="reading")
    qtbot.waitUntil(lambda: w.status_label.width() > 0, timeout=5000)
    QTest.qWait(50)
    shown = w.status_label.fontMetrics().elidedText(said, Qt.TextElideMode.ElideRight, w.status_label.width())
    assert shown.startswith("Done: 1 page(s) in 0.1 s; boxes kept"), shown
    assert w.warning_button.toolTip().count("no longer running") == 1  # the warning itself is kept whole
