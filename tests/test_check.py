"""The consistency check (app.core.translation.consistency) and `hayai-desktop check`: lines translated
differently, names not used, untranslated answers, lettering below the minimum size or
clipped (from the same layout the export letters), the rows in page and reading order, exit 1
when anything is found and 0 when nothing is."""
import shutil
from dataclasses import replace
from pathlib import Path

from app.cli import main
from app.core.document.types import Block, Page, Project
from app.core.project.files import save_project
from app.core.translation.consistency import check_project, check_text
from app.render.style import StyleOverride
from app.translate import GlossaryEntry
from app.translate.memory import Character, StoryMemory

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "app" / "resources" / "samples" / "page_0000.png"



def block(i, source, translation, box=None, **kw):
    return Block(id=f"b{i}", order=i, kind="text", box=box or (20.0 + 60 * i, 20.0, 70.0 + 60 * i, 200.0),
                 ocr_text=source, translation=translation, machine_translation=translation, **kw)


def volume(folder: Path) -> Project:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("001.png", "002.png"):
        shutil.copyfile(SAMPLE, folder / name)
    p1 = Page("001.png", 0, 0, processed=True, blocks=(
        block(1, "タナカさん、おはよう！", "Morning, Tanaka!"),
        block(2, "ユキ、まって！", "Snow, wait!"),  # the memory says ユキ is Yuki
        replace(block(3, "ありがとう", ""), machine_translation="ありがとう", machine_flag="untranslated"),
    ))
    p2 = Page("002.png", 0, 0, processed=True, blocks=(
        block(1, "タナカさん、\nおはよう！", "Good morning, Mr. Tanaka."),  # same line, another translation
        block(2, "タナカさん、おはよう！", "Morning, Tanaka!"),
        block(3, "うん", "This translation is far far too long for such a tiny box to hold it",
              box=(300.0, 300.0, 318.0, 312.0)),
        block(4, "ねえ", "Hey there, listen to me",
              box=(400.0, 400.0, 470.0, 440.0), style=StyleOverride(min_size=30, max_size=40)),
    ))
    return Project(source=str(folder), pages=[p1, p2], glossary=[GlossaryEntry("タナカ", "Tanaka")],
                   memory=StoryMemory((Character("ユキ", "Yuki"),)))


def test_text_findings(tmp_path):
    project = volume(tmp_path / "vol")
    rows = [(f.page, f.order, f.kind) for f in check_text(project)]
    assert ("002.png", 1, "inconsistent") in rows  # the minority translation of the line
    assert ("001.png", 1, "inconsistent") not in rows and ("002.png", 2, "inconsistent") not in rows
    assert ("001.png", 2, "name") in rows  # Yuki (memory) not in "Snow, wait!"
    assert ("002.png", 1, "name") not in rows  # "Tanaka" is used there
    assert ("001.png", 3, "untranslated") in rows
    detail = next(f.detail for f in check_text(project) if f.kind == "inconsistent")
    assert "Good morning, Mr. Tanaka." in detail and "001.png block 1" in detail
    extra = check_text(project, [GlossaryEntry("おはよう", "Hello")])
    assert sum(f.kind == "name" for f in extra) == 4  # the glossary given is checked too


def test_layout_findings_come_from_the_export_layout(tmp_path):
    project = volume(tmp_path / "vol")
    findings, skipped = check_project(project)
    assert skipped == []
    kinds = {(f.page, f.order): f.kind for f in findings if f.kind in ("below_min", "clipped")}
    assert kinds == {("002.png", 3): "clipped", ("002.png", 4): "below_min"}
    # in page and reading order
    order = [(f.page, f.order) for f in findings]
    assert order == sorted(order)


def test_cli_prints_the_rows_and_exits_1(tmp_path, capsys):
    project = volume(tmp_path / "vol")
    save_project(project)
    assert main(["check", str(tmp_path / "vol")]) == 1
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == "page\tblock\tkind\tdetail"
    assert "002.png\t3\tclipped\t" in out and "001.png\t2\tname\t" in out and "001.png\t3\tuntranslated\t" in out
    assert "finding(s)" in err
    assert main(["check", str(tmp_path / "vol"), "--no-layout"]) == 1
    assert "clipped" not in capsys.readouterr().out
    clean = Project(source=str(tmp_path / "ok"), pages=[Page("001.png", 0, 0, processed=True, blocks=(
        block(1, "タナカさん", "Tanaka"),))], glossary=[GlossaryEntry("タナカ", "Tanaka")])
    (tmp_path / "ok").mkdir()
    shutil.copyfile(SAMPLE, tmp_path / "ok" / "001.png")
    save_project(clean)
    assert main(["check", str(tmp_path / "ok")]) == 0
    assert capsys.readouterr().out == ""
    assert main(["check", str(tmp_path / "nowhere")]) == 2
