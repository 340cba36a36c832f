"""The script as CSV / TSV: export, import by page and block id, and the CLI round trip."""
from __future__ import annotations

import csv
import io
from dataclasses import replace

import pytest

from app.cli import main
from app.core.document.types import Block, Page, Project
from app.core.exports.script_table import (
    COLUMNS,
    block_status,
    export_script,
    export_script_text,
    import_script,
    import_script_text,
)
from app.core.project.codec import project_to_dict
from app.core.project.files import load_project, save_project
from app.core.project.paths import project_path_for
from app.errors import UserError


def _content(project) -> dict:
    """The project file's content without the moment it was written (two calls can straddle a second)."""
    d = project_to_dict(project)
    d.pop("saved_at", None)
    return d



def _block(order: int, ocr: str, **changes) -> Block:
    block = Block(id=f"b{order}", order=order, kind="bubble", box=(10.0 * order, 5, 60, 90.5),
                  score=0.9, ocr_text=ocr, model="hayai-ocr-nova", patches=384, vertical=True)
    return replace(block, **changes)


@pytest.fixture
def project(tmp_path) -> Project:
    page1 = Page(name="001.png", width=800, height=1200, processed=True, blocks=(
        _block(2, "二行の\nテキスト", translation="Two, lines", machine_translation="Two, lines", translator="deepl"),
        _block(1, "なんだって!?", text="なんだって！？", translation="What?!"),
        _block(3, "「引用」", machine_flag="untranslated", machine_translation="「引用」"),
    ))
    page2 = Page(name="ch2/002.png", processed=True, blocks=(_block(1, "最後"),))
    return Project(source=str(tmp_path / "vol"), pages=[page1, page2], order="rtl")


def _rows(text: str, delimiter: str = ",") -> list[dict]:
    return list(csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter))


def test_export_lists_every_block_in_reading_order(project):
    rows = _rows(export_script_text(project))
    assert list(rows[0]) == list(COLUMNS)
    assert [(r["page"], r["block"], r["block_id"]) for r in rows] == [
        ("1", "1", "b1"), ("1", "2", "b2"), ("1", "3", "b3"), ("2", "1", "b1")]
    assert rows[0]["source"] == "なんだって！？" and rows[1]["source"] == "二行の\nテキスト"
    assert rows[1]["translation"] == "Two, lines" and "deepl" in rows[1]["notes"]
    assert "looks untranslated" in rows[2]["notes"]
    assert [block_status(b) for b in sorted(project.pages[0].blocks, key=lambda b: b.order)] == [
        "edited", "machine", "looks untranslated"]
    tsv = _rows(export_script_text(project, "tsv"), "\t")
    assert tsv == rows


@pytest.mark.parametrize("suffix", ["csv", "tsv"])
def test_round_trip_changes_only_the_cells_edited(tmp_path, project, suffix):
    path = export_script(project, tmp_path / f"script.{suffix}")
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    unchanged = import_script(project, path)
    assert unchanged.updated == 0 and unchanged.warnings == []
    assert _content(unchanged.project) == _content(project)

    text = path.read_text(encoding="utf-8-sig")
    sep = "\t" if suffix == "tsv" else ","
    rows = _rows(text, sep)
    rows[1]["translation"] = "Two\nlines, fixed"
    rows[3]["source"] = "最後だ"
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, delimiter=sep, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")
    result = import_script(project, path)
    assert result.updated == 2 and result.warnings == []

    expected = _content(project)
    expected["pages"][0]["blocks"][0]["translation"] = "Two\nlines, fixed"
    expected["pages"][1]["blocks"][0]["text"] = "最後だ"
    assert _content(result.project) == expected
    assert project.pages[0].blocks[0].translation == "Two, lines"  # the given project is untouched


def test_rows_that_cannot_be_placed_are_reported_and_nothing_else_changes(project):
    text = ("page,page_name,block_id,translation\n"
            "1,001.png,b9,lost\n"          # no such block
            "7,,b1,lost too\n"             # no such page
            "1,other.png,b1,wrong page\n"  # a name this project lacks: not placed by number
            "2,ch2/002.png,b1,The end\n"
            "2,ch2/002.png,b1,The end.\n")  # twice: the later row wins, reported
    result = import_script_text(project, text, name="s.csv")
    assert result.updated == 1
    assert result.project.pages[1].blocks[0].translation == "The end."
    assert len(result.warnings) == 4 and all(w.startswith("s.csv row ") for w in result.warnings)
    assert "b9" in result.warnings[0] and "row 3" in result.warnings[1] and "twice" in result.warnings[3]
    # no source column: the sources are kept as they were
    assert _content(result.project)["pages"][0] == _content(project)["pages"][0]


def test_a_file_without_the_columns_is_refused(project):
    with pytest.raises(UserError, match="block_id"):
        import_script_text(project, "a,b\n1,2\n", name="x.csv")
    with pytest.raises(UserError, match="empty"):
        import_script_text(project, "", name="x.csv")


def test_cli_export_and_import_script(tmp_path, project, capsys):
    src = tmp_path / "vol"
    src.mkdir()
    saved = save_project(project, project_path_for(src))
    out = tmp_path / "script.tsv"
    assert main(["export", str(src), "--out", str(out)]) == 0
    rows = _rows(out.read_text(encoding="utf-8-sig"), "\t")
    assert len(rows) == 4
    csv_out = tmp_path / "plain.txt"
    assert main(["export", str(src), "--out", str(csv_out), "--format", "csv"]) == 0
    assert _rows(csv_out.read_text(encoding="utf-8-sig")) == rows

    edited = tmp_path / "edited.csv"
    edited.write_text("page,block_id,translation\n1,b3,“Quote”\n1,b7,nowhere\n", encoding="utf-8")
    before = _content(load_project(saved))
    assert main(["import-script", str(src), str(edited), "--dry-run"]) == 1
    assert _content(load_project(saved)) == before
    assert main(["import-script", str(src), str(edited)]) == 1
    err = capsys.readouterr().err
    assert "row 3" in err and "b7" in err and "changed 1 block(s)" in err
    after = _content(load_project(saved))
    before["pages"][0]["blocks"][2]["translation"] = "“Quote”"
    assert after == before
    assert main(["import-script", str(tmp_path / "nowhere"), str(edited)]) == 2
