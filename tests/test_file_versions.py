"""Forward-compatible files: every past shape of the project file, the JSON export and
settings.json opens; keys this build does not know are kept and written back; a file of a
newer major version opens read-only and is never written over; the migration table moves old
versions forward one step at a time (app.core.project.versioning)."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from app.core.config.settings import AppSettings, load_settings, save_settings
from app.core.document import edits
from app.core.exports.json_read import read_json_export
from app.core.exports.json_txt import export_json
from app.core.project.files import load_project, open_project, save_project
from app.core.project.versioning import FileSchema, upgrade
from app.errors import UserError

_BLOCK_1_0 = {"id": "b1", "order": 1, "kind": "bubble", "box": [1, 2, 30, 40], "polygon": None,
              "vertical": True, "score": 0.9, "ocr_text": "テキスト", "text": "編集", "translation": "edited",
              "model": "hayai-ocr-nova", "patches": 384}
_HEAD = {"format": "hayai-desktop-project", "version": 1, "app_version": "0.1.0",
         "saved_at": "2026-11-29T10:00:00+00:00", "order": "rtl"}

# The shapes version 1 had as fields were added to it (the first release, machine translation
# and the glossary, translated pages), as those builds wrote them.
PAST_SHAPES = {
    "1.0 first": {**_HEAD, "pages": [{"name": "001.png", "width": 80, "height": 120, "processed": True,
                                      "error": None, "blocks": [_BLOCK_1_0]}]},
    "1.0 machine translation": {**_HEAD, "glossary": [{"source": "先輩", "target": "senpai", "note": ""}],
                                "pages": [{"name": "001.png", "width": 80, "height": 120, "processed": True,
                                           "error": None, "blocks": [{**_BLOCK_1_0, "machine_translation": "mt",
                                                                      "translator": "deepl"}]}]},
    "1.0 translated pages": {**_HEAD, "glossary": [], "style": {"font": "", "min_size": 12, "max_size": 40,
                                                                "color": "#000000"},
                             "pages": [{"name": "001.png", "width": 80, "height": 120, "processed": True,
                                        "error": None, "blocks": [{
                                            **_BLOCK_1_0, "machine_translation": "mt", "translator": "deepl",
                                            "style": {"max_size": 30},
                                            "mask_edits": [{"erase": True, "radius": 4, "points": [[1, 2], [3, 4]]}]}]}]},
    # 1.2: size harmonisation; free text had the kind "text" (no caption / sfx, no "outside")
    "1.2 sizes": {**_HEAD, "minor": 2, "glossary": [], "sizes": "one",
                  "pages": [{"name": "001.png", "width": 80, "height": 120, "processed": True, "error": None,
                             "sizes": "few", "blocks": [{**_BLOCK_1_0, "kind": "text", "machine_translation": "mt",
                                                         "translator": "deepl", "style": {"max_size": 30},
                                                         "mask_edits": [{"erase": False, "radius": 3,
                                                                         "points": [[5, 6]]}]}]}]},
}


def _write(path, data):
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path



@pytest.mark.parametrize("shape", sorted(PAST_SHAPES))
def test_each_past_shape_of_the_project_file_opens_and_saves_in_the_current_one(tmp_path, shape):
    source = tmp_path / "vol"
    source.mkdir()
    data = {**PAST_SHAPES[shape], "source": str(source)}
    path = _write(tmp_path / "old.json", data)
    project = load_project(path)
    block = project.pages[0].blocks[0]
    assert (block.ocr_text, block.text, block.translation) == ("テキスト", "編集", "edited")
    assert project.read_only is None
    saved = save_project(project, tmp_path / "new.json")
    written = json.loads(saved.read_text(encoding="utf-8"))
    assert (written["version"], written["minor"]) == (1, 5)
    # text outside bubbles: lettered in place, as every build before 1.3 did
    assert project.outside == {"caption": "translate", "sfx": "translate"} and "outside" not in written
    assert project.outside_policy(block.kind) == "translate"
    # the migration wrote out what 1.0 left implicit
    assert {"machine_translation", "translator", "style", "mask_edits"} <= set(written["pages"][0]["blocks"][0])
    assert load_project(saved) == project
    if "mask_edits" in data["pages"][0]["blocks"][0]:
        assert block.mask_edits and block.style.max_size == 30 and project.style.max_size == 40
    if data.get("glossary"):
        assert project.glossary[0].target == "senpai"


def _newer_minor_project(source) -> dict:
    """A file from a later 1.x build: keys this build does not know, at every level."""
    data = json.loads(json.dumps(PAST_SHAPES["1.0 translated pages"]))
    data.update(source=str(source), minor=7, reading_direction_hint="vertical", series={"title": "巻", "n": 3})
    data["pages"][0]["rotation"] = 90
    data["pages"][0]["blocks"][0]["furigana"] = [{"base": "先輩", "ruby": "せんぱい"}]
    return data


def test_unknown_keys_of_a_newer_minor_version_survive_an_edit_and_a_save(tmp_path):
    source = tmp_path / "vol"
    source.mkdir()
    (source / "001.png").write_bytes(b"")
    path = _write(tmp_path / "vol" / ".hayai-project.json", _newer_minor_project(source))
    project = open_project(source, ["001.png"])
    assert project.read_only is None  # same major version: editable
    project.pages[0] = edits.set_text(project.pages[0], "b1", "new text")
    save_project(project)
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["reading_direction_hint"] == "vertical" and written["series"] == {"title": "巻", "n": 3}
    assert written["pages"][0]["rotation"] == 90
    block = written["pages"][0]["blocks"][0]
    assert block["furigana"] == [{"base": "先輩", "ruby": "せんぱい"}] and block["text"] == "new text"
    assert (written["version"], written["minor"]) == (1, 5)


def test_a_newer_major_version_opens_read_only_and_is_never_written_over(tmp_path):
    source = tmp_path / "vol"
    source.mkdir()
    data = {**_newer_minor_project(source), "version": 2, "minor": 0}
    path = _write(tmp_path / "p.json", data)
    before = path.read_bytes()
    project = load_project(path)
    assert project.pages[0].blocks[0].text == "編集"  # read as far as this build can
    assert "p.json was saved by a newer Hayai Desktop" in project.read_only
    assert "read-only" in project.read_only and "Update Hayai Desktop" in project.read_only
    with pytest.raises(UserError, match="newer Hayai Desktop"):
        save_project(project, path)
    with pytest.raises(UserError, match="newer Hayai Desktop"):
        save_project(project)
    assert path.read_bytes() == before


def test_the_migration_table_moves_old_versions_forward_step_by_step():
    calls = []

    def step(version):
        def move(data):
            calls.append(version)
            return {**data, "version": version[0], "minor": version[1], f"moved{len(calls)}": True}
        return move

    schema = FileSchema("test file", (3, 1), {(1, 0): step((2, 0)), (2, 0): step((3, 0)), (3, 0): step((3, 1))})
    opened = upgrade({"version": 1}, schema, "t.json")
    assert calls == [(2, 0), (3, 0), (3, 1)] and opened.found == (1, 0) and opened.read_only is None
    assert opened.data["moved1"] and opened.data["moved3"] and opened.data["version"] == 3
    assert upgrade({"version": 3, "minor": 1}, schema, "t.json").data == {"version": 3, "minor": 1}
    with pytest.raises(UserError, match="t.json: test file version 0.0 is too old"):
        upgrade({"version": 0}, schema, "t.json")
    with pytest.raises(UserError, match="t.json: the test file is damaged"):
        upgrade({"version": "3"}, schema, "t.json")
    assert "read-only" in upgrade({"version": 4}, schema, "t.json").read_only


def _export(source, **top) -> dict:
    return {"format": "hayai-desktop-export", "version": 1, "app_version": "0.1.0",
            "exported_at": "2026-11-29T10:00:00+00:00", "source": str(source), "order": "rtl", **top,
            "pages": [{"number": 1, "name": "001.png", "width": 80, "height": 120, "processed": True,
                       "error": None, "blocks": [{**_BLOCK_1_0, "text": "編集", "edited": True}]}]}


def test_json_export_keeps_unknown_keys_and_reads_a_newer_major_read_only(tmp_path):
    old = read_json_export(_write(tmp_path / "old.json", _export(tmp_path)))  # 1.0: no "minor", no style
    assert old.pages[0].blocks[0].text == "編集" and old.read_only is None

    data = _export(tmp_path, minor=4, series="巻")
    data["pages"][0]["spread"] = True
    data["pages"][0]["blocks"][0]["furigana"] = "せんぱい"
    project = read_json_export(_write(tmp_path / "newer.json", data))
    out = json.loads(export_json(project, tmp_path / "again.json").read_text(encoding="utf-8"))
    assert out["series"] == "巻" and out["pages"][0]["spread"] is True
    assert out["pages"][0]["blocks"][0]["furigana"] == "せんぱい" and out["minor"] == 2

    project = read_json_export(_write(tmp_path / "major.json", {**data, "version": 2}))
    assert "major.json was saved by a newer Hayai Desktop" in project.read_only
    with pytest.raises(UserError, match=r"major\.json was saved by a newer .*cannot read it"):
        read_json_export(_write(tmp_path / "major.json", {**data, "version": 2, "pages": {"1": "x"}}))


def test_settings_keep_unknown_keys_and_a_newer_major_file_is_left_alone(tmp_path, caplog):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"patches": 512, "ui_scale": 1.25, "panels": {"style": False}}), encoding="utf-8")
    settings = load_settings(path)  # written before settings had a version
    assert settings.patches == 512 and settings.extra == {"ui_scale": 1.25, "panels": {"style": False}}
    save_settings(replace(settings, patches=256), path)
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["ui_scale"] == 1.25 and written["panels"] == {"style": False} and written["patches"] == 256
    assert (written["version"], written["minor"]) == (1, 0)

    newer = json.dumps({"version": 2, "patches": "wide", "model": "future"})
    path.write_text(newer, encoding="utf-8")
    settings = load_settings(path)
    assert "settings.json was saved by a newer Hayai Desktop" in settings.read_only
    assert any("read-only" in r.getMessage() for r in caplog.records)
    save_settings(replace(settings, patches=384), path)
    assert path.read_text(encoding="utf-8") == newer and not (tmp_path / "settings.json.bad").exists()
    assert AppSettings().read_only == ""
