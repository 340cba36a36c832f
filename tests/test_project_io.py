"""Project files: round trip, atomic saves, locations, reopening with page changes, autosave."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import fields, replace
from pathlib import Path

import pytest

from app.core.document.types import Block, Page, Project
from app.core.project import codec, files
from app.core.project.files import (
    discard_autosave,
    load_autosave,
    load_project,
    open_project,
    recoverable_autosave,
    save_autosave,
    save_project,
)
from app.core.project.paths import autosave_path_for, find_project_file, project_path_for
from app.errors import UserError

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    folder = tmp_path / "data"
    monkeypatch.setenv("HAYAI_DATA_DIR", str(folder))
    return folder


def _block(i: int, **changes) -> Block:
    block = Block(
        id=f"b{i}", order=i, kind="bubble", box=(1.5, 2.0, 30.25, 40.0),
        polygon=((1.5, 2.0), (30.25, 2.0), (30.25, 40.0)), vertical=True, score=0.875,
        ocr_text=f"テキスト{i}", text=f"編集 {i}\n二行目", translation=f"translation {i}",
        model="hayai-ocr-nova", patches=384,
    )
    return replace(block, **changes)


def _project(source: Path) -> Project:
    pages = [
        Page(name="001.png", width=800, height=1200, processed=True,
             blocks=(_block(1, approved=True), _block(2, polygon=None, text=None, score=None, patches=None,
                                       kind="manual", vertical=False, translation=""))),
        Page(name="ch2/010.png", width=640, height=480, error="the page is damaged"),
        Page(name="ch2/ページ11.png"),
    ]
    return Project(source=str(source), pages=pages, order="ltr")


def test_round_trip_keeps_every_field(tmp_path):
    project = _project(tmp_path / "vol")
    path = save_project(project, tmp_path / "p.json")
    loaded = load_project(path)
    assert loaded == project
    # every Block field is written: a new field that is not saved would fail here
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert set(saved["pages"][0]["blocks"][0]) == {f.name for f in fields(Block)} - {"extra"}  # extra: unknown keys
    assert saved["format"] == "hayai-desktop-project" and saved["version"] == 1
    assert "テキスト1" in path.read_text(encoding="utf-8")  # readable UTF-8, not \\u escapes
    empty = Project(source=str(tmp_path / "empty"))
    assert load_project(save_project(empty, tmp_path / "e.json")) == empty


class _Unserializable:
    pass


def test_save_failing_midway_keeps_previous_file(tmp_path):
    path = tmp_path / "p.json"
    good = _project(tmp_path / "vol")
    save_project(good, path)
    before = path.read_bytes()
    # A block deep in the document that json cannot encode: the writer fails after it has
    # already streamed part of the file.
    many = [Page(name=f"{i}.png", blocks=(_block(1),)) for i in range(200)]
    bad_block = _block(1, translation=_Unserializable())
    bad = Project(source=good.source, pages=many + [Page(name="z.png", blocks=(bad_block,))])
    with pytest.raises(TypeError):
        save_project(bad, path)
    assert path.read_bytes() == before
    assert load_project(path) == good
    assert [p.name for p in tmp_path.iterdir()] == ["p.json"]  # no temp file left behind


_KILL_SCRIPT = r"""
import sys
from pathlib import Path
from app.core.document.types import Block, Page, Project
from app.core.project.files import save_project
path = Path(sys.argv[1])
block = Block(id="b", order=1, kind="bubble", box=(0, 0, 1, 1), ocr_text="x" * 200)
def project(tag):
    return Project(source=tag, pages=[Page(name=f"{i}.png", blocks=(block,) * 20) for i in range(400)])
projects = [project("A"), project("B")]
save_project(projects[0], path)
print("ready", flush=True)
i = 0
while True:
    i += 1
    save_project(projects[i % 2], path)
"""


def test_killed_mid_save_leaves_a_complete_file(tmp_path):
    path = tmp_path / "p.json"
    for delay in (0.05, 0.17, 0.31):
        proc = subprocess.Popen([sys.executable, "-c", _KILL_SCRIPT, str(path)], cwd=REPO,
                                stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline().strip() == "ready"
            time.sleep(delay)
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
        project = load_project(path)  # complete and valid whenever the kill landed
        assert project.source in ("A", "B") and len(project.pages) == 400


def test_damaged_and_unknown_files_name_the_file(tmp_path):
    path = tmp_path / "proj.json"
    path.write_text('{"format": "hayai-desktop-project", "version": 1, "pag', encoding="utf-8")
    with pytest.raises(UserError, match=r"proj\.json: the project file is damaged \(invalid JSON"):
        load_project(path)

    data = codec.project_to_dict(_project(tmp_path))
    data["version"] = 7
    blocks = data["pages"][0]["blocks"]
    data["pages"][0]["blocks"] = "a shape this build cannot read"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(UserError, match=r"proj\.json was saved by a newer Hayai Desktop .*cannot read it"):
        load_project(path)
    data["pages"][0]["blocks"] = blocks

    data["version"] = 1
    data["pages"][0]["blocks"][1]["box"] = [1, 2, 3]
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(UserError, match=r"pages\[0\]\.blocks\[1\]\.box: expected 4 numbers"):
        load_project(path)

    path.write_text('{"some": "other json"}', encoding="utf-8")
    with pytest.raises(UserError, match="not a Hayai Desktop project file"):
        load_project(path)

    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(UserError, match=r"proj\.json.*damaged"):
        load_project(path)

    with pytest.raises(UserError, match="no such project file"):
        load_project(tmp_path / "absent.json")


def test_project_locations(tmp_path, data_dir):
    folder = tmp_path / "漫画"
    folder.mkdir()
    assert project_path_for(folder) == folder / ".hayai-project.json"
    archive = tmp_path / "vol1.cbz"
    archive.write_bytes(b"")
    assert project_path_for(archive) == tmp_path / "vol1.cbz.hayai.json"
    # /proc refuses new files even to root: the project goes to the data dir
    fallback = project_path_for("/proc")
    assert fallback.parent == data_dir / "projects" and fallback.suffix == ".json"
    assert fallback == project_path_for("/proc/")  # same key for the same folder
    assert fallback != project_path_for("/sys")
    assert not list(folder.iterdir())  # the writability probe leaves nothing behind


def test_save_without_path_goes_beside_the_pages(tmp_path):
    folder = tmp_path / "vol"
    folder.mkdir()
    project = _project(folder)
    assert save_project(project) == folder / ".hayai-project.json"
    assert find_project_file(folder) == folder / ".hayai-project.json"


def test_open_project_merges_pages_added_and_removed(tmp_path):
    folder = tmp_path / "vol"
    (folder / "ch2").mkdir(parents=True)
    for name in ("001.png", "ch2/010.png", "ch2/ページ11.png"):
        (folder / name).write_bytes(b"x")
    fresh = open_project(folder)
    assert fresh.source == str(folder)
    assert [p.name for p in fresh.pages] == ["001.png", "ch2/010.png", "ch2/ページ11.png"]
    assert not any(p.blocks or p.processed for p in fresh.pages)

    save_project(_project(folder))
    (folder / "001.png").unlink()  # had blocks: kept, flagged missing
    (folder / "ch2/ページ11.png").unlink()  # no blocks: dropped
    (folder / "002.png").write_bytes(b"x")  # new page
    reopened = open_project(folder)
    names = [p.name for p in reopened.pages]
    assert names == ["001.png", "002.png", "ch2/010.png"]
    missing = reopened.pages[0]
    assert missing.blocks == _project(folder).pages[0].blocks
    assert missing.error.startswith(files.MISSING_PAGE_ERROR)
    assert reopened.pages[1] == Page(name="002.png")
    assert reopened.pages[2].error == "the page is damaged"  # saved state kept
    assert reopened.order == "ltr"

    save_project(reopened)
    (folder / "001.png").write_bytes(b"x")  # the file came back
    back = open_project(folder)
    assert back.pages[0].error is None and back.pages[0].blocks


def test_open_project_after_the_folder_moved(tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    (old / "1.png").write_bytes(b"x")
    project = open_project(old)
    project.pages[0] = replace(project.pages[0], blocks=(_block(1),))
    save_project(project)
    new = tmp_path / "new"
    old.rename(new)
    moved = open_project(new)
    assert moved.source == str(new) and moved.pages[0].blocks == (_block(1),)


def test_open_project_with_archive(tmp_path):
    import zipfile

    archive = tmp_path / "v.cbz"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("b/2.png", b"x")
        zf.writestr("b/10.png", b"x")
    project = open_project(archive)
    assert [p.name for p in project.pages] == ["b/2.png", "b/10.png"]
    assert save_project(project) == tmp_path / "v.cbz.hayai.json"
    assert open_project(archive) == project


def test_damaged_project_is_not_replaced_silently(tmp_path):
    folder = tmp_path / "vol"
    folder.mkdir()
    (folder / ".hayai-project.json").write_text("{", encoding="utf-8")
    with pytest.raises(UserError, match=r"\.hayai-project\.json: the project file is damaged"):
        open_project(folder, page_names=["1.png"])


def test_autosave_recovery_flow(tmp_path, data_dir):
    folder = tmp_path / "vol"
    folder.mkdir()
    project = _project(folder)
    assert recoverable_autosave(folder) is None and load_autosave(folder) is None

    save_project(project)
    edited = Project(source=project.source, order=project.order,
                     pages=[replace(project.pages[0], blocks=(_block(1, text="typed"),))]
                     + project.pages[1:])
    path = save_autosave(edited)
    assert path == autosave_path_for(folder) and path.parent == data_dir / "autosave"
    assert not (folder / path.name).exists()  # autosaves never go beside the pages
    # simulate a crash: the autosave is newer than the explicit save
    os.utime(path, ns=(time.time_ns() + 10**9,) * 2)
    assert recoverable_autosave(folder) == path
    assert load_autosave(folder) == edited
    restored = open_project(folder, page_names=[p.name for p in project.pages],
                            project_file=recoverable_autosave(folder))
    assert restored.pages[0].blocks[0].text == "typed"

    save_project(restored)  # an explicit save supersedes the autosave and removes it
    assert not path.exists() and recoverable_autosave(folder) is None

    save_autosave(restored)
    old = time.time_ns() - 10**10
    os.utime(path, ns=(old, old))  # autosave older than the project file: nothing to offer
    assert recoverable_autosave(folder) is None
    discard_autosave(folder)
    assert not path.exists()
    discard_autosave(folder)  # idempotent


def test_unwritable_target_raises_user_error(tmp_path):
    project = _project(tmp_path)
    with pytest.raises(UserError, match="cannot save the project"):
        save_project(project, Path("/proc/hayai.json"))




def test_styles_and_mask_edits_round_trip_and_old_files_load(tmp_path):
    from dataclasses import replace

    from app.core.exports.json_read import project_from_export
    from app.core.exports.json_txt import export_json_data
    from app.core.project.files import load_project, save_project
    from app.render.strokes import MaskStroke
    from app.render.style import StyleOverride, TextStyle

    stroke = MaskStroke(True, 4.5, ((10.0, 12.0), (30.5, 12.0)))
    block = Block(id="b1", order=1, kind="bubble", box=(1.0, 2.0, 50.0, 60.0), ocr_text="あ", translation="Ah",
                  style=StyleOverride(color="#112233", uppercase=True), mask_edits=(stroke,))
    plain = Block(id="b2", order=2, kind="text", box=(5.0, 5.0, 9.0, 9.0))
    project = Project(source=str(tmp_path), pages=[Page(name="1.png", blocks=(block, plain))],
                      style=TextStyle(font="comic-bold", max_size=33, outline_width=2))
    path = save_project(project, tmp_path / "p.json")
    back = load_project(path)
    assert back.style == project.style and back.pages[0].blocks == (block, plain)
    # the JSON export carries them too, and reads back
    data = export_json_data(project)
    assert "style" in data["pages"][0]["blocks"][0] and "style" not in data["pages"][0]["blocks"][1]
    again = project_from_export(data)
    assert again.style == project.style and again.pages[0].blocks[0].mask_edits == (stroke,)
    assert again.pages[0].blocks[0].style == block.style
    # a file written before these fields existed loads with the defaults
    old = json.loads(path.read_text(encoding="utf-8"))
    del old["style"]
    for b in old["pages"][0]["blocks"]:
        del b["style"], b["mask_edits"]
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    loaded = load_project(tmp_path / "old.json")
    assert loaded.style == TextStyle() and loaded.pages[0].blocks[0] == replace(block, style=None, mask_edits=())
    # a bad value is named
    old["style"] = {"color": "red"}
    (tmp_path / "bad.json").write_text(json.dumps(old), encoding="utf-8")
    with pytest.raises(UserError, match="style: color"):
        load_project(tmp_path / "bad.json")
