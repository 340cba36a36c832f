"""The window as the one writer of its project: it holds the project's lock and journals every
committed edit at once; a project held by another process opens read-only (its files are never
touched); the journal of a session that did not end is offered and replayed."""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from app.core.document.types import Block
from app.core.project import journal
from app.core.project.files import open_project, save_autosave
from app.core.project.lock import ProjectLock
from app.core.project.paths import autosave_path_for, project_path_for

ROOT = Path(__file__).resolve().parents[2]
HOLD = """
import sys
from app.core.project.lock import ProjectLock
lock = ProjectLock(sys.argv[1], "hayai-desktop translate")
print("held" if lock.acquire() else "refused", flush=True)
sys.stdin.read()
lock.release()
"""


def _block_page(page, text="書いた"):
    block = Block(id="b1", order=1, kind="bubble", box=(10, 10, 90, 90), ocr_text="元", text=text)
    return replace(page, blocks=(block,), processed=True)


def test_every_committed_edit_is_in_the_journal_before_any_autosave(make_window, pages):
    w = make_window()
    assert w.session.open_path(pages)
    assert not ProjectLock(pages, "another").acquire()  # the window holds the project
    w.autosave_timer.setInterval(3_600_000)  # no autosave during this test: only the journal
    name = w.current
    w.edit(lambda p: _block_page(p), "read")
    w.edit(lambda p: _block_page(p, "二度目"), "edit text")
    records = journal.records(pages)  # what a crash at this moment would leave on disk
    assert [r["page"]["blocks"][0]["text"] for r in records] == ["書いた", "二度目"]
    assert not autosave_path_for(pages).exists()
    restored = open_project(pages, [p.name for p in w.doc.project.pages], replay_journal=True)
    assert restored.page_index(name) == 0 and restored.pages[0].blocks[0].text == "二度目"
    w.undo_stack.undo()  # undo is an edit too
    assert journal.records(pages)[-1]["page"]["blocks"][0]["text"] == "書いた"
    w.autosave()  # the autosave folds the journal in
    assert journal.records(pages) == [] and autosave_path_for(pages).exists()


def test_a_session_that_did_not_end_is_offered_back_with_its_journal(make_window, pages):
    w = make_window()
    assert w.session.open_path(pages)
    w.autosave_timer.setInterval(3_600_000)
    w.edit(lambda p: _block_page(p, "救われた"), "edit text")
    # the process dies here: nothing is closed, saved or released (the lock goes with the process)
    w.session.journal.close()
    w.session.journal = None
    w.session.lock.release()
    w.session.lock = None
    w.undo_stack.setClean()  # so that closing this window asks nothing and deletes nothing

    again = make_window()
    asked = []
    again.questions.answers["restore_autosave"] = True
    original = again.questions.restore_autosave
    again.questions.restore_autosave = lambda source: asked.append(source) or original(source)
    assert again.session.open_path(pages)
    assert asked == [str(pages)]
    assert again.doc.project.pages[0].blocks[0].text == "救われた" and again.is_dirty()
    assert "restored" in again.status_label.text()


def test_a_project_held_elsewhere_opens_read_only_and_its_files_are_left_alone(make_window, pages):
    # the holder's own autosave, which the second window shows but must not delete
    from app.core.project.files import open_project as load

    save_autosave(load(pages))
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(pages)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout.readline().strip() == "held"
        w = make_window()
        assert w.session.open_path(pages)
        assert w.read_only and f"hayai-desktop translate (process {holder.pid} on " in w.read_only
        assert w.notice.kind == "warning" and "read-only" in w.notice.label.text()
        assert "[read-only]" in w.windowTitle()
        w.edit(lambda p: _block_page(p), "read")
        assert journal.records(pages) == []  # no journal for a read-only project
        w.autosave()
        assert not w.session.save() and "Not saved" in w.notice.label.text()
        assert not project_path_for(pages).exists()
        w.questions.answers["unsaved_changes"] = "discard"
        w.close()
        w.shutdown()
        assert autosave_path_for(pages).exists()  # the holder's autosave is still there
    finally:
        holder.stdin.close()
        holder.wait()
        holder.stdout.close()
    w2 = make_window()
    assert w2.session.open_path(pages) and not w2.read_only  # free again: editable


def test_a_second_window_sees_the_work_the_first_has_so_far(make_window, pages):
    first = make_window()
    assert first.session.open_path(pages)
    first.autosave_timer.setInterval(3_600_000)  # autosaves only where the test asks for one
    names = [p.name for p in first.doc.project.pages]
    first.edit(lambda p: _block_page(p, "自動保存"), "read", page=names[0])
    first.autosave()  # page 1 is in the autosave, nothing saved by hand
    assert not project_path_for(pages).exists() and journal.records(pages) == []
    first.edit(lambda p: _block_page(p, "日誌だけ"), "read", page=names[1])  # page 2 only in the journal so far
    assert len(journal.records(pages)) == 1

    second = make_window()
    assert second.session.open_path(pages)
    assert second.read_only and "read-only" in second.notice.label.text()
    got = {p.name: p for p in second.doc.project.pages}
    assert got[names[0]].processed and got[names[0]].blocks[0].text == "自動保存"
    assert got[names[1]].processed and got[names[1]].blocks[0].text == "日誌だけ"
    assert not any(got[n].processed for n in names[2:])
    # the reader left the writer's files as they were
    assert autosave_path_for(pages).exists() and len(journal.records(pages)) == 1
    second.close()
    second.shutdown()
    first.undo_stack.setClean()
