"""Series > Teach the OCR my corrections, through the window with the demo models: a volume whose
blocks (white on black, a look the demo model never saw) were corrected by hand is taught in the
background (progress, then the report in a message box), the model box says "+ adapted to", the
toggle switches back to the model as published, Read again the pages not edited by hand reads
only those and leaves every hand edit as it was; Mark page checked sets the page's mark (undoable).
A save looks, in the background, at the crops the next teaching will look at; a reading asked for
cancels that."""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from app.core.document import edits
from app.core.reading.corrections import PROJECT_ADAPTER_SUFFIX
from tests.test_adapt import _samples, _volume


def _answer_report(w, qtbot) -> str:
    def shown():
        return [b for b in w.findChildren(QMessageBox) if b.isVisible()]

    qtbot.waitUntil(lambda: bool(shown()), timeout=10000)
    box = shown()[0]
    text = box.text()
    box.button(QMessageBox.StandardButton.Ok).click()
    return text


def test_teach_the_ocr_report_toggle_and_read_again_keep_hand_edits(make_window, qtbot, tmp_path):
    folder = _volume(tmp_path, _samples(44, seed=6), checked_pages=(9,), read_pages=(10,))  # as the command's test
    w = make_window(patches=128)
    w.session.open_path(folder)
    qtbot.waitUntil(lambda: w.doc.project is not None and len(w.doc.page_names()) == 11, timeout=10000)
    assert not w.adapting.use_adapter.isEnabled()  # no adapter yet
    edited = {p.name: [b.text for b in p.blocks] for p in w.doc.project.pages if any(b.edited for b in p.blocks)}
    assert len(edited) == 9

    # Save (Ctrl+S) looks ahead of the next teaching in the background: the crops it will look at
    # are looked at now; nothing the user asked for is running (Cancel stays off, a reading may start)
    features = Path(os.environ["XDG_CACHE_HOME"]) / "hayai-desktop" / "adapt-features"
    assert w.slots.action_save()
    assert w.reading.host.busy("look_ahead") and not w.reading.busy() and not w.act.cancel.isEnabled()
    assert w.status_label.text() == "Looking at 36 corrected blocks for the next teaching"
    qtbot.waitUntil(lambda: not w.reading.host.busy("look_ahead"), timeout=300000)
    assert "Looking at" not in w.status_label.text() and len(list(features.rglob("*.safetensors"))) > 40
    assert w.slots.action_save() and not w.reading.host.busy("look_ahead")  # nothing new: nothing to look at

    with qtbot.waitSignal(w.adapting.taught, timeout=900000) as blocker:
        w.adapting.teach.trigger()
        qtbot.waitUntil(w.progress.isVisible, timeout=10000)  # in the background: the window answers
        assert w.act.cancel.isEnabled()
    result, path = blocker.args
    report = _answer_report(w, qtbot)
    assert "held-out corrections: CER" in report and "36 corrections from 1 volume" in report
    assert "40 blocks already looked at in an earlier teaching" in report  # the 36 and the 4 confirmed
    assert "plain print (" in report  # page 010, read and left alone, drawn in the app's faces
    assert result.kept and path.endswith(PROJECT_ADAPTER_SUFFIX)
    logged = [m for kind, _, m in w.messages.entries if m.startswith("Teaching the OCR")]
    assert logged[0] == "Teaching the OCR your corrections…" and len(logged) <= 2  # the start and the model's
    assert not any("/" in m for m in logged)  # loading, not every step's count
    qtbot.waitUntil(lambda: "adapted to vol1" in w.device_label.text(), timeout=60000)
    assert w.adapting.use_adapter.isEnabled() and w.adapting.use_adapter.isChecked()

    w.adapting.use_adapter.setChecked(False)  # the model as published
    qtbot.waitUntil(lambda: "adapted to" not in w.device_label.text() and "hayai-demo-ocr" in w.device_label.text(),
                    timeout=60000)
    w.adapting.use_adapter.setChecked(True)
    qtbot.waitUntil(lambda: "adapted to vol1" in w.device_label.text(), timeout=60000)

    # read again the pages nobody edited by hand and nobody checked: 010 only; every hand edit
    # stays, and so does the checked page 009, its confirmed text and its mark
    # 010's boxes are read again with the adapter, the detector left out: its four blocks stay
    # (the demo detector finds none of them) with their ids, boxes, order and translation
    checked = w.doc.page("009.png")
    w.edit(lambda p: edits.set_translation(p, "b1", "kept"), "translation", page="010.png")
    before = w.doc.page("010.png")
    with qtbot.waitSignal(w.run_finished, timeout=180000) as run:
        assert w.adapting.read_unedited.isEnabled()
        w.adapting.read_unedited.trigger()
    assert run.args == ["done"]
    assert w.reading.run_stats.total == 1
    page = w.doc.page("010.png")
    assert len(page.blocks) == 4 and page.processed
    assert "; boxes kept, " in w.status_label.text() and " of 4 block(s) read differently" in w.status_label.text()
    assert [(b.id, b.order, b.box, b.translation) for b in page.blocks] == [
        (b.id, b.order, b.box, b.translation) for b in before.blocks]
    assert all(b.model.endswith("adapted to vol1") and b.text is None for b in page.blocks)
    assert w.undo_stack.undoText() == "read 010.png again"
    w.undo_stack.undo()
    assert w.doc.page("010.png") == before
    w.undo_stack.redo()
    assert w.doc.page("010.png") == page
    assert w.doc.page("009.png") == checked and checked.checked
    for name, texts in edited.items():
        assert [b.text for b in w.doc.page(name).blocks] == texts, name

    # the report says that the adapter was trained again on every correction once the held-out chose
    assert result.refit == "kept" and "then trained again from the start on all 36 corrections" in report
    # taught again (nothing new corrected): the adapter there learned every page (trained again on all of
    # them), so it cannot be weighed on the held-out ones and the report says so; it is kept beside the
    # new one, and the reading worker loads the new file (the same path, rewritten)
    worker = w.reading.host.worker
    loaded = worker._recognizer.adapter
    with qtbot.waitSignal(w.adapting.taught, timeout=900000) as blocker:
        w.adapting.teach.trigger()
    report = _answer_report(w, qtbot)
    assert "the adapter you had learned every page held out now, so the two could not be weighed" in report
    assert blocker.args[1] == path and Path(blocker.args[0].replaced) == Path(path.replace(".safetensors",
                                                                                          ".previous.safetensors"))
    assert Path(blocker.args[0].replaced).is_file()
    with qtbot.waitSignal(w.run_finished, timeout=180000):
        w.adapting.read_unedited.trigger()
    assert worker._recognizer.adapter is not loaded and worker._recognizer.adapter.path == Path(path)

    # Series > Go back to the adapter before this one: the two files change places and the worker
    # reads with the one before; the same again goes forward
    series = next(a.menu() for a in w.menuBar().actions() if a.text() == "&Series")
    go_back = next(a for a in series.actions() if a.text() == "Go &back to the adapter before this one")
    assert go_back.isEnabled()
    newer, before = Path(path).stat().st_ino, Path(blocker.args[0].replaced).stat().st_ino
    loaded = worker._recognizer.adapter
    go_back.trigger()
    assert Path(path).stat().st_ino == before and Path(blocker.args[0].replaced).stat().st_ino == newer
    assert "Reading with the adapter you had before" in w.status_label.text()
    with qtbot.waitSignal(w.run_finished, timeout=180000):
        w.adapting.read_unedited.trigger()
    assert worker._recognizer.adapter is not loaded and worker._recognizer.adapter.path == Path(path)
    go_back.trigger()
    assert Path(path).stat().st_ino == newer and go_back.isEnabled()
    assert "Reading with the newer adapter again" in w.status_label.text()

    # Mark page checked: the page's mark, undoable
    w.show_page("000.png")
    assert not w.doc.page("000.png").checked and not w.adapting.mark_checked.isChecked()
    w.adapting.mark_checked.trigger()
    assert w.doc.page("000.png").checked and w.adapting.mark_checked.isChecked()
    w.undo_stack.undo()
    assert not w.doc.page("000.png").checked and not w.adapting.mark_checked.isChecked()

    # a page marked checked and saved: looked ahead again; a reading asked for cancels that at once
    w.adapting.mark_checked.trigger()
    assert w.slots.action_save() and w.reading.host.busy("look_ahead")
    ahead = w.reading.host.live[w.adapting._ahead_id].request
    with qtbot.waitSignal(w.run_finished, timeout=180000) as run:
        w.adapting.read_unedited.trigger()
        assert ahead.cancel.is_set() and w.act.cancel.isEnabled()
    assert run.args == ["done"]
    qtbot.waitUntil(lambda: not w.reading.host.busy("look_ahead"), timeout=60000)
    assert w.slots.action_save() and w.reading.host.busy("look_ahead")  # cut short: the next save looks again
    qtbot.waitUntil(lambda: not w.reading.host.busy("look_ahead"), timeout=300000)
    w.undo_stack.undo()

    # after a restart: opening the volume loads its adapter, and the model box says so before any reading
    w.session.save()
    w2 = make_window(patches=128)
    w2.session.open_path(folder)
    qtbot.waitUntil(lambda: w2.doc.project is not None, timeout=10000)
    assert w2.adapting.use_adapter.isEnabled() and w2.adapting.use_adapter.isChecked()
    qtbot.waitUntil(lambda: "adapted to vol1" in w2.device_label.text(), timeout=60000)


def test_stop_teaching_keeps_what_it_learned_so_far(make_window, qtbot, tmp_path):
    folder = _volume(tmp_path, _samples(44, seed=6), checked_pages=(9,), read_pages=(10,))
    w = make_window(patches=128)
    w.session.open_path(folder)
    qtbot.waitUntil(lambda: w.doc.project is not None and len(w.doc.page_names()) == 11, timeout=10000)
    series = next(a.menu() for a in w.menuBar().actions() if a.text() == "&Series")
    stop = next(a for a in series.actions() if a.text().startswith("&Stop teaching"))
    assert not stop.isEnabled()  # nothing to stop yet

    with qtbot.waitSignal(w.adapting.taught, timeout=900000) as blocker:
        w.adapting.teach.trigger()
        qtbot.waitUntil(lambda: "learning" in w.status_label.text(), timeout=600000)  # the training steps
        assert stop.isEnabled()
        stop.trigger()  # as from the Series menu
        assert not stop.isEnabled() and "stopping" in w.status_label.text()
    result, path = blocker.args
    report = _answer_report(w, qtbot)
    assert result.stopped == "asked" and "stopped when you asked, after" in report
    assert result.epochs < 30 and not stop.isEnabled()
    if result.kept:  # the best epoch so far read the held-out corrections better: kept, and read with
        assert path and w.adapting.use_adapter.isEnabled()
    else:
        assert not path and "Adapter discarded" in report
