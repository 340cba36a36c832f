"""The edit journal (app.core.project.journal): a process killed right after an edit loses nothing;
replay on the next open; folded in by an autosave or a save; a torn last line is left out."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from app.core.document import edits
from app.core.document.types import Block, Page, Project
from app.core.project.files import (
    open_project,
    recoverable_autosave,
    recoverable_edits,
    save_autosave,
    save_project,
)
from app.core.project.journal import EditJournal, journal_path_for, records
from app.render.style import TextStyle
from app.translate.base import GlossaryEntry

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["001.png", "002.png"]

# A writer that edits page 001's text over and over and says so after each committed edit; the
# test kills it with SIGKILL right after reading a line.
WRITER = """
import sys
from app.core.document.types import Block, Page
from app.core.project.journal import EditJournal
journal = EditJournal(sys.argv[1])
for n in range(1, 100000):
    page = Page(name="001.png", width=10, height=10, processed=True,
                blocks=(Block(id="b1", order=1, kind="bubble", box=(0, 0, 5, 5), ocr_text="x", text=f"edit {n}"),))
    journal.record_page(page)
    print(n, flush=True)
    sys.stdin.readline()
"""



def _source(tmp_path) -> Path:
    folder = tmp_path / "vol"
    folder.mkdir(exist_ok=True)
    return folder


def _page(name: str, text: str) -> Page:
    block = Block(id="b1", order=1, kind="bubble", box=(1, 2, 30, 40), ocr_text="テキスト", text=text)
    return Page(name=name, width=80, height=120, processed=True, blocks=(block,))


@pytest.mark.parametrize("edits_before_kill", [1, 3, 17])
def test_a_process_killed_right_after_an_edit_loses_none(tmp_path, edits_before_kill):
    source = _source(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(source)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        for _ in range(edits_before_kill - 1):
            proc.stdout.readline()
            proc.stdin.write("\n")
            proc.stdin.flush()
        last = int(proc.stdout.readline())  # committed: the writer returned from record_page
        os.kill(proc.pid, signal.SIGKILL)  # no chance to fsync, close or save anything
    finally:
        proc.wait()
        proc.stdout.close()
        proc.stdin.close()
    assert last == edits_before_kill
    assert recoverable_edits(source)
    project = open_project(source, NAMES, replay_journal=True)
    assert project.pages[0].blocks[0].text == f"edit {last}"
    assert [p.name for p in project.pages] == NAMES


def test_replay_applies_pages_and_project_fields_over_the_autosave(tmp_path):
    source = _source(tmp_path)
    base = Project(source=str(source), pages=[_page("001.png", "saved"), _page("002.png", "saved")])
    save_project(base)
    later = Project(source=str(source), pages=[_page("001.png", "autosaved"), base.pages[1]])
    save_autosave(later)
    journal = EditJournal(source)
    page2 = edits.set_text(base.pages[1], "b1", "journaled")
    journal.record_page(page2)
    journal.record_project(replace(later, order="ltr", style=TextStyle(max_size=33),
                                   glossary=[GlossaryEntry("先輩", "senpai", "")]))
    assert journal.synced(timeout=30)
    journal.close()

    # without replay: the saved project; with: the autosave and the journal on top
    assert open_project(source, NAMES).pages[1].blocks[0].text == "saved"
    restored = open_project(source, NAMES, project_file=recoverable_autosave(source), replay_journal=True)
    assert [p.blocks[0].text for p in restored.pages] == ["autosaved", "journaled"]
    assert restored.order == "ltr" and restored.style.max_size == 33 and restored.glossary[0].target == "senpai"


def test_an_autosave_folds_the_journal_in_and_a_save_removes_it(tmp_path):
    source = _source(tmp_path)
    journal = EditJournal(source)
    journal.record_page(_page("001.png", "one"))
    project = Project(source=str(source), pages=[_page("001.png", "one"), Page(name="002.png")])
    save_autosave(project)
    journal.folded()
    assert records(source) == []
    journal.record_page(_page("001.png", "two"))  # after the autosave: only this one is replayed
    assert [r["seq"] for r in records(source)] == [1]
    restored = open_project(source, NAMES, project_file=recoverable_autosave(source), replay_journal=True)
    assert restored.pages[0].blocks[0].text == "two"

    save_project(restored)  # the explicit save: autosave and journal go
    assert not recoverable_edits(source)
    journal.folded()  # the window starts a new journal after saving
    journal.record_page(_page("001.png", "three"))
    assert records(source)[0]["page"]["blocks"][0]["text"] == "three"
    journal.close(delete=True)
    assert not journal_path_for(source).exists()


def test_a_torn_or_damaged_line_is_left_out_and_the_rest_replayed(tmp_path, caplog):
    source = _source(tmp_path)
    journal = EditJournal(source)
    journal.record_page(_page("001.png", "kept"))
    journal.close()
    path = journal_path_for(source)
    with open(path, "ab") as stream:
        stream.write(b'{"seq": 2, "page": {"name": "001.png", "blocks": [{"id": "b1", "order": 1, "kind": "x", "box": [1,\n')
        stream.write(b'{"seq": 3, "page": {"name": 7}}\n')
        stream.write(b'{"seq": 4, "page": {"name": "002.png"')  # torn by the crash: no newline
    project = open_project(source, NAMES, replay_journal=True)
    assert project.pages[0].blocks[0].text == "kept" and project.pages[1].blocks == ()
    assert any("left out" in r.getMessage() and path.name in r.getMessage() for r in caplog.records)
    # the journal reopens after the torn line: new records start on a line of their own
    journal = EditJournal(source)
    journal.record_page(_page("002.png", "after"))
    journal.close()
    assert open_project(source, NAMES, replay_journal=True).pages[1].blocks[0].text == "after"
