"""JSON/TXT exports (schema-validated) and TXT re-import of texts and translations."""
from __future__ import annotations

import copy
import json
from dataclasses import replace

import jsonschema
import pytest

from app.core.document.types import Block, Page, Project
from app.core.exports.json_txt import (
    EXPORT_SCHEMA_PATH,
    export_json,
    export_json_data,
    export_txt,
    export_txt_text,
    import_txt,
    import_txt_text,
)
from app.errors import UserError


def _block(order: int, ocr: str, **changes) -> Block:
    block = Block(id=f"b{order}", order=order, kind="bubble", box=(10.0 * order, 5, 60, 90.5),
                  score=0.9, ocr_text=ocr, model="hayai-ocr-nova", patches=384)
    return replace(block, **changes)


@pytest.fixture
def project() -> Project:
    # blocks stored out of order on purpose: exports sort them by reading order
    page1 = Page(name="001.png", width=800, height=1200, processed=True, blocks=(
        _block(2, "二行の\nテキスト", vertical=True, polygon=((1.0, 2.0), (3.0, 4.0), (5, 6))),
        _block(1, "なんだって!?", text="なんだって！？", translation="What?!"),
        _block(3, "", kind="manual", score=None, patches=None, model=""),
    ))
    page2 = Page(name="ch2/002.png", processed=True)
    page3 = Page(name="ch2/010.png", error="ch2/010.png: the image is damaged\nsecond line")
    page4 = Page(name="ch2/ページ11.png", width=10, height=10, processed=True,
                 blocks=(_block(1, "最後"),))
    return Project(source="/manga/vol1", pages=[page1, page2, page3, page4], order="rtl")


def _schema() -> dict:
    return json.loads(EXPORT_SCHEMA_PATH.read_text(encoding="utf-8"))


def test_json_export_validates_against_schema(tmp_path, project):
    path = export_json(project, tmp_path / "out.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(_schema())
    jsonschema.validate(data, _schema(), cls=jsonschema.Draft202012Validator)

    assert data["format"] == "hayai-desktop-export" and data["version"] == 1
    assert data["source"] == "/manga/vol1" and data["order"] == "rtl"
    assert [p["number"] for p in data["pages"]] == [1, 2, 3, 4]
    blocks = data["pages"][0]["blocks"]
    assert [b["order"] for b in blocks] == [1, 2, 3]
    first, second = blocks[0], blocks[1]
    assert first["text"] == "なんだって！？" and first["edited"] is True
    assert first["ocr_text"] == "なんだって!?" and first["translation"] == "What?!"
    assert first["box"] == [10.0, 5.0, 60.0, 90.5] and first["polygon"] is None
    assert second["vertical"] is True and second["polygon"] == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    assert second["text"] == "二行の\nテキスト" and second["edited"] is False
    assert blocks[2]["score"] is None and blocks[2]["kind"] == "manual"
    assert data["pages"][2]["error"].startswith("ch2/010.png")


def test_schema_rejects_broken_exports(project):
    data = export_json_data(project)
    broken = copy.deepcopy(data)
    del broken["pages"][0]["blocks"][0]["box"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, _schema(), cls=jsonschema.Draft202012Validator)
    broken = copy.deepcopy(data)
    broken["pages"][0]["blocks"][0]["box"] = [1, 2, 3]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, _schema(), cls=jsonschema.Draft202012Validator)


def test_page_selection_keeps_volume_numbers(project):
    data = export_json_data(project, pages=["ch2/ページ11.png", "001.png"])
    assert [(p["number"], p["name"]) for p in data["pages"]] == [(1, "001.png"), (4, "ch2/ページ11.png")]
    text = export_txt_text(project, pages=["ch2/ページ11.png"])
    assert "=== page 4: ch2/ページ11.png ===\n[1] 最後\n" in text and "001.png" not in text
    with pytest.raises(UserError, match="no page named nope.png"):
        export_json_data(project, pages=["nope.png"])


def test_txt_export_layout(tmp_path, project):
    text = export_txt(project, tmp_path / "out.txt").read_text(encoding="utf-8")
    body = text.split("\n\n", 1)[1]
    assert body == (
        "=== page 1: 001.png ===\n"
        "[1] なんだって！？\n"
        "\n"
        "[2] 二行の\n"
        "テキスト\n"
        "\n"
        "[3]\n"
        "\n"
        "=== page 2: ch2/002.png ===\n"
        "# no text found\n"
        "\n"
        "=== page 3: ch2/010.png ===\n"
        "# error: ch2/010.png: the image is damaged second line\n"
        "\n"
        "=== page 4: ch2/ページ11.png ===\n"
        "[1] 最後\n"
    )
    translated = export_txt_text(project, translations=True)
    assert "[1] なんだって！？\n> What?!\n\n[2] 二行の\nテキスト\n>\n\n[3]\n>\n" in translated


def test_txt_round_trip_unchanged(tmp_path, project):
    for translations in (False, True):
        path = export_txt(project, tmp_path / "t.txt", translations=translations)
        for into in ("text", "translation") if translations else ("text",):
            result = import_txt(project, path, into=into)
            assert result.warnings == [] and result.updated == 0
            assert result.project == project


def test_txt_edit_and_import_texts(tmp_path, project):
    path = export_txt(project, tmp_path / "t.txt")
    text = path.read_text(encoding="utf-8")
    text = text.replace("[2] 二行の\nテキスト", "[2] 直した\n\n三行目も\n")  # multi-line with a blank line
    text = text.replace("[1] 最後", "\n\n[1]   最後！  \n\n\n")
    text = text.replace("[1] なんだって！？", "[1] なんだって!?")  # back to the OCR text
    path.write_bytes(text.replace("\n", "\r\n").encode("utf-8-sig"))  # Windows editor: CRLF + BOM
    before = copy.deepcopy(project)

    result = import_txt(project, path, into="text")
    assert result.warnings == []
    assert result.updated == 3
    page1 = {b.order: b for b in result.project.pages[0].blocks}
    assert page1[2].text == "直した\n\n三行目も" and page1[2].edited
    assert page1[1].text is None and page1[1].display_text == "なんだって!?"  # not edited any more
    assert page1[3].text is None  # empty stays empty
    assert result.project.pages[3].blocks[0].text == "最後！"
    assert page1[2].ocr_text == "二行の\nテキスト"  # the model's text is kept
    assert project == before  # the input project is untouched


def test_txt_translations_from_a_translated_file(tmp_path, project):
    # A translation tool rewrote the text export: every block now holds its translation.
    text = export_txt_text(project)
    text = (text.replace("なんだって！？", "What?!?").replace("二行の\nテキスト", "Two lines\nof text")
            .replace("最後", "The end"))
    path = tmp_path / "translated.txt"
    path.write_text(text, encoding="utf-8")
    result = import_txt(project, path, into="translation")
    assert result.warnings == [] and result.updated == 3
    page1 = {b.order: b for b in result.project.pages[0].blocks}
    assert page1[1].translation == "What?!?" and page1[2].translation == "Two lines\nof text"
    assert page1[1].text == "なんだって！？"  # the transcription is not touched
    assert result.project.pages[3].blocks[0].translation == "The end"

    # and the translations variant comes back for both fields
    both = export_txt(result.project, tmp_path / "both.txt", translations=True)
    content = both.read_text(encoding="utf-8").replace("> The end", "> The End\n> (fin)")
    both.write_text(content, encoding="utf-8")
    again = import_txt(result.project, both, into="translation")
    assert again.updated == 1 and again.warnings == []
    assert again.project.pages[3].blocks[0].translation == "The End\n(fin)"
    texts = import_txt(again.project, both, into="text")
    assert texts.updated == 0 and texts.project == again.project  # '>' lines are not text


def test_txt_import_reports_what_it_cannot_place(project):
    text = "\n".join([
        "stray line before any page",
        "=== page 1: 001.png ===",
        "orphan text",
        "[1] one",
        "[7] no such block",
        "[1] one again",
        "=== page 9: 999.png ===",
        "[1] lost",
        "=== page 4: renamed.png ===",
        "[1] by number",
        "=== ページ 1 ===",
        "［２］ full-width",
    ])
    result = import_txt_text(project, text, into="text", name="in.txt")
    warnings = "\n".join(result.warnings)
    assert len(result.warnings) == 6, warnings
    assert "in.txt line 1: text before the first page header" in warnings
    assert "in.txt line 3: text before the first block of page 1" in warnings
    assert "in.txt line 5: page 1 (001.png) has no block [7]" in warnings
    assert "in.txt line 6: block [1] appears twice in page 1; the later one was used" in warnings
    assert "in.txt line 7: page 9 (999.png) is not in this project (it has 4 pages); its 1 block(s)" in warnings
    assert "in.txt line 9: no page named 'renamed.png'; used page 4 (ch2/ページ11.png)" in warnings
    assert result.updated == 3
    assert result.project.pages[0].block("b1").text == "one again"
    assert result.project.pages[3].blocks[0].text == "by number"
    assert result.project.pages[0].block("b2").text == "full-width"  # ページ header, ［２］


def test_txt_import_encodings(tmp_path, project):
    path = tmp_path / "utf16.txt"
    path.write_text("=== page 4: ch2/ページ11.png ===\n[1] ユニコード\n", encoding="utf-16")
    assert import_txt(project, path).project.pages[3].blocks[0].text == "ユニコード"
    path.write_bytes("=== page 1 ===\n[1] caf\xe9\n".encode("latin-1"))
    with pytest.raises(UserError, match="utf16.txt: the TXT file is not UTF-8, UTF-16 or Shift-JIS text"):
        import_txt(project, path)
    with pytest.raises(ValueError):
        import_txt_text(project, "", into="notes")


def test_export_to_unwritable_place(project):
    with pytest.raises(UserError, match="cannot write the export"):
        export_txt(project, "/proc/out.txt")


def test_the_json_export_carries_the_policy_for_text_outside_bubbles(tmp_path, project):
    from app.core.exports.json_read import project_from_export, read_json_export
    from app.errors import UserError

    project = replace(project, outside={"caption": "beside", "sfx": "keep"})
    path = export_json(project, tmp_path / "out.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(data, _schema(), cls=jsonschema.Draft202012Validator)
    assert data["outside"] == {"caption": "beside", "sfx": "keep"} and data["minor"] == 2
    assert read_json_export(path).outside == {"caption": "beside", "sfx": "keep"}  # render --from it letters alike
    older = {k: v for k, v in data.items() if k != "outside"}  # a 1.1 export: the defaults
    assert project_from_export(older).outside == {"caption": "translate", "sfx": "translate"}
    with pytest.raises(UserError, match="outside.sfx: must be one of"):
        project_from_export({**data, "outside": {"sfx": "shout"}}, tmp_path / "bad.json")
    broken = copy.deepcopy(data)
    broken["outside"]["caption"] = "shout"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, _schema(), cls=jsonschema.Draft202012Validator)
