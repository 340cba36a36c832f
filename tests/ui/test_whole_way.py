"""A translator's first evening, walked the whole way through the real window (offscreen), with
the demo models and a loopback OpenAI-compatible server: open the demo, read all, read all again
(the real question, answered Yes), edit a block and undo, translate against a server answering
"The" for every line (nothing taken) and again against an honest one, check consistency, export
every format through the real file dialogs, save, close, and reopen the volume in a second
window to find the work there. Each dialog is the real one, answered as a user would
(tests.ui.conftest.answer_dialog)."""
import json
import zipfile

from PySide6.QtWidgets import QMessageBox

from app.core.config import api_keys
from tests.ui.conftest import answer_dialog
from tests.ui.test_translation_gui import choose_backend

LONG = 300000  # ms: two runs of the demo models over the sample pages on a small CPU


def _export(w, qtbot, trigger, answers, finished=None):
    """Start an export from its menu entry; `answers` go to the dialogs it opens, in turn."""
    asked: list = []
    answer_dialog(list(answers), asked)
    if finished is None:
        trigger()
    else:
        with qtbot.waitSignal(finished, timeout=120000) as sig:
            trigger()
        assert sig.args == ["done"], (asked, w.notice.label.text())
    assert len(asked) == len(answers), asked
    return asked


def test_the_whole_way(make_window, fake_llm, qtbot, tmp_path, monkeypatch):
    w = make_window()
    w.slots.action_open_demo()
    assert w.demo and w.doc.project is not None
    names = w.doc.page_names()
    source = w.doc.source
    # read all
    with qtbot.waitSignal(w.run_finished, timeout=LONG) as run:
        w.slots.action_run_all()
    assert run.args == ["done"] and all(p.processed and p.blocks for p in w.doc.project.pages)
    # read all again: every page is read, so the window asks first (the real dialog; Yes)
    asked: list = []
    answer_dialog(QMessageBox.StandardButton.Yes, asked)
    with qtbot.waitSignal(w.run_finished, timeout=LONG) as run:
        w.slots.action_run_all()
    assert run.args == ["done"] and "Read all pages again?" in asked[0] and w.last_error == ""
    assert w.notice.message("reading") == ""
    # edit a block in the block panel, undo it
    w.show_page(names[0])
    block = w.doc.page(names[0]).blocks[0]
    w.panel.text_edited.emit(block.id, "わたしの手直し")
    assert w.doc.page(names[0]).block(block.id).display_text == "わたしの手直し"
    w.undo_stack.undo()
    assert w.doc.page(names[0]).block(block.id).display_text == block.display_text
    w.panel.text_edited.emit(block.id, "わたしの手直し")  # and made again: the work to find later
    # translate the volume against a loopback server that answers "The" for every line (what a
    # small model did): nothing of it is counted or remembered, every block is flagged and named
    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    api_keys.tie_env_key("openai", fake_llm.base_url)
    choose_backend(w, fake_llm)
    memory = w.doc.project.memory
    fake_llm.default = "the"
    with qtbot.waitSignal(w.translation.run_finished, timeout=60000):
        assert w.translation.translate_all()
    blocks = [b for p in w.doc.project.pages for b in p.blocks]
    assert all(b.looks_degenerate and not b.translation and b.needs_translation for b in blocks), \
        [(b.display_text, b.translation, b.machine_translation) for b in blocks]
    assert w.doc.project.memory == memory and "Translated: 0 block(s)" in w.translation.status.text()
    assert f"Some blocks were not translated: {len(blocks)} on" in w.notice.message("translation-report")
    # the same run against an honest server: the flagged blocks are asked again, the banner goes
    fake_llm.default = "ok"
    with qtbot.waitSignal(w.translation.run_finished, timeout=60000) as tr:
        assert w.translation.translate_all()
    assert tr.args == ["done"], w.notice.label.text()
    blocks = [b for p in w.doc.project.pages for b in p.blocks]
    assert blocks and all(b.translation for b in blocks)
    assert "Translated:" in w.translation.status.text() and w.notice.message("translation-report") == ""
    said = [m for _k, _o, m in w.messages.entries]
    assert any("Translated:" in m for m in said)  # kept whole in the Messages
    assert not any(m.startswith("Reading pages ") for m in said)  # progress counts are not kept
    # check consistency
    panel = w.translation.series.check_panel
    with qtbot.waitSignal(panel.checked, timeout=60000):
        w.translation.series.open_check()
    assert w.translation.series.check_dock.isVisible()
    # export every format through the menus' real dialogs
    out = tmp_path / "out"
    out.mkdir()
    _export(w, qtbot, lambda: w.slots.action_export("txt", "volume", True), [str(out / "volume.txt")])
    assert "わたしの手直し" in (out / "volume.txt").read_text(encoding="utf-8")
    exporter = w.render_ctl.exporter
    (out / "png").mkdir()
    _export(w, qtbot, lambda: exporter.choose("images"), ["PNG", str(out / "png")], exporter.finished)
    assert sorted(p.name for p in (out / "png").iterdir()) == sorted(n.rsplit(".", 1)[0] + ".png" for n in names)
    _export(w, qtbot, lambda: exporter.choose("cbz"), [str(out / "v.cbz")], exporter.finished)
    with zipfile.ZipFile(out / "v.cbz") as z:
        assert z.namelist() == [f"{i:03d}.png" for i in range(1, len(names) + 1)] + ["ComicInfo.xml"]
    _export(w, qtbot, lambda: exporter.choose("pdf"), [str(out / "v.pdf")], exporter.finished)
    assert (out / "v.pdf").read_bytes().startswith(b"%PDF-")
    (out / "psd").mkdir()
    _export(w, qtbot, lambda: exporter.choose("psd"), [str(out / "psd")], exporter.finished)
    assert len(list((out / "psd").glob("*.psd"))) == len(names)
    reader = w.reader_exporter
    (out / "mokuro").mkdir()
    _export(w, qtbot, lambda: reader.choose("mokuro"), [str(out / "mokuro")], reader.finished)
    mokuro_files = list((out / "mokuro").glob("*.mokuro"))
    assert len(mokuro_files) == 1 and len(json.loads(mokuro_files[0].read_text(encoding="utf-8"))["pages"]) == len(names)
    _export(w, qtbot, lambda: reader.choose("reader"), [str(out / "reader.html")], reader.finished)
    html = (out / "reader.html").read_text(encoding="utf-8")
    edited = "わたしの手直し"
    assert html.startswith("<!DOCTYPE html>") and len(html) > 1000
    assert edited in mokuro_files[0].read_text(encoding="utf-8") or json.dumps(edited)[1:-1] in \
        mokuro_files[0].read_text(encoding="utf-8")  # the edit went out with the volume
    assert w.notice.message("export") == ""
    # save and close
    assert w.slots.action_save()
    w.close()
    # a second window opens the volume and finds the work
    again = make_window()
    assert again.session.open_path(source)
    page = again.doc.page(names[0])
    assert page.block(block.id).display_text == "わたしの手直し"
    assert all(b.translation for p in again.doc.project.pages for b in p.blocks)
