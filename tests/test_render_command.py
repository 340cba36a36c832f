"""`hayai-desktop render`: every format from a JSON export, a project file or the source folder,
the text modes, and clear errors."""
from __future__ import annotations

import json
import re
import shutil
import zipfile
from dataclasses import replace

import numpy as np
import pytest
from PIL import Image

from app.cli import main
from app.core.document.types import Block, Page, Project
from app.core.exports.json_txt import export_json
from app.core.project.files import save_project
from app.render.strokes import MaskStroke
from app.render.style import StyleOverride, TextStyle
from tools.synth import write_pages

SIZE = (768, 1086)


@pytest.fixture(autouse=True)
def no_installed_models(tmp_path, monkeypatch):
    """--inpaint auto means OpenCV here: no LaMa in an empty model store."""
    monkeypatch.setenv("HAYAI_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))


@pytest.fixture(scope="module")
def volume(tmp_path_factory):
    """Two synthetic pages, a saved project where every other block has a translation, and its
    JSON export."""
    root = tmp_path_factory.mktemp("render-cli")
    pages_dir = root / "vol"
    write_pages(pages_dir, 2, seed=31, size=SIZE)
    pages = []
    for truth_file in sorted(pages_dir.glob("*.json")):
        truth = json.loads(truth_file.read_text(encoding="utf-8"))
        truth_file.unlink()  # the folder holds only the pages
        blocks = tuple(Block(id=b["id"], order=b["order"], kind=b["kind"], box=tuple(map(float, b["box"])),
                             ocr_text=b["text"], translation="Hello there, friend!" if b["order"] % 2 else "")
                       for b in truth["blocks"])
        pages.append(Page(name=truth["image"], width=SIZE[0], height=SIZE[1], blocks=blocks, processed=True))
    big = max((b for b in pages[0].blocks if b.translation), key=lambda b: (b.box[2] - b.box[0]) * (b.box[3] - b.box[1]))
    pages[0] = replace(pages[0], blocks=tuple(replace(b, style=StyleOverride(color="#ff0000")) if b is big else b
                                              for b in pages[0].blocks))
    project = Project(source=str(pages_dir), pages=pages, style=TextStyle(max_size=30))
    save_project(project)
    export_json(project, root / "export.json")
    return root, project


def _rgb(path):
    return np.asarray(Image.open(path).convert("RGB"))


def _inside(shape, blocks):
    out = np.zeros(shape[:2], bool)
    for b in blocks:
        x0, y0, x1, y1 = (int(v) for v in b.box)
        out[y0:y1 + 1, x0:x1 + 1] = True
    return out


def test_png_pages_named_after_the_pages_and_only_translated_blocks_change(volume, tmp_path, capsys):
    root, project = volume
    assert main(["render", str(root / "export.json"), "--out", str(tmp_path / "out"), "--inpaint", "opencv"]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["page_0000.png", "page_0001.png"]
    for page in project.pages:
        original = _rgb(root / "vol" / page.name)
        out = _rgb(tmp_path / "out" / page.name)
        translated = [b for b in page.blocks if b.translation]
        changed = (out != original).any(axis=2)
        assert not (changed & ~_inside(original.shape, translated)).any(), "other pixels are byte-identical"
        for b in translated:
            x0, y0, x1, y1 = (int(v) for v in b.box)
            assert changed[y0:y1, x0:x1].sum() > 50, f"block {b.order} was cleaned and lettered"
    red = _rgb(tmp_path / "out" / "page_0000.png")
    red_block = next(b for b in project.pages[0].blocks if b.style is not None)
    x0, y0, x1, y1 = (int(v) for v in red_block.box)
    crop = red[y0:y1, x0:x1].astype(int)
    assert ((crop[..., 0] > 200) & (crop[..., 1] < 60)).sum() > 20, "the block's own colour"
    assert "wrote 2 file(s)" in capsys.readouterr().err


def test_project_file_and_folder_inputs_give_the_same_pixels(volume, tmp_path):
    root, _project = volume
    assert main(["render", str(root / "export.json"), "--out", str(tmp_path / "a"), "--format", "webp"]) == 0
    assert main(["render", str(root / "vol"), "--out", str(tmp_path / "b"), "--format", "webp"]) == 0
    assert main(["render", str(root / "vol" / ".hayai-project.json"), "--out", str(tmp_path / "c"), "--format", "webp"]) == 0
    for name in ("page_0000.webp", "page_0001.webp"):
        a = _rgb(tmp_path / "a" / name)
        assert np.array_equal(a, _rgb(tmp_path / "b" / name)) and np.array_equal(a, _rgb(tmp_path / "c" / name))


def test_text_none_cleans_every_block_and_letters_nothing(volume, tmp_path):
    root, project = volume
    assert main(["render", str(root / "vol"), "--out", str(tmp_path / "clean"), "--text", "none"]) == 0
    page = project.pages[1]
    original = _rgb(root / "vol" / page.name)
    out = _rgb(tmp_path / "clean" / page.name)
    changed = (out != original).any(axis=2)
    assert not (changed & ~_inside(original.shape, page.blocks)).any()
    for b in page.blocks:
        x0, y0, x1, y1 = (int(v) for v in b.box)
        assert changed[y0:y1, x0:x1].any(), f"block {b.order} (translated or not) was cleaned"


def test_cbz_and_pdf_are_one_file(volume, tmp_path):
    root, _project = volume
    assert main(["render", str(root / "export.json"), "--out", str(tmp_path / "v.cbz")]) == 0
    with zipfile.ZipFile(tmp_path / "v.cbz") as z:
        assert z.namelist() == ["001.png", "002.png", "ComicInfo.xml"]  # by reading order
    from comicapi.comicarchive import ComicArchive

    info = ComicArchive(str(tmp_path / "v.cbz")).read_cix()
    assert (info.series, info.page_count, info.manga, info.language) == ("vol", 2, "YesAndRightToLeft", "en")
    assert main(["render", str(root / "export.json"), "--out", str(tmp_path / "v.pdf"), "--text", "source"]) == 0
    data = (tmp_path / "v.pdf").read_bytes()
    assert data.startswith(b"%PDF-") and len(re.findall(rb"/Type /Page ", data)) == 2


def test_psd_per_page_with_original_cleaned_and_one_layer_per_lettered_block(volume, tmp_path):
    from psd_tools import PSDImage

    root, project = volume
    assert main(["render", str(root / "export.json"), "--out", str(tmp_path / "psd"), "--format", "psd"]) == 0
    assert sorted(p.name for p in (tmp_path / "psd").iterdir()) == ["page_0000.psd", "page_0001.psd"]
    psd = PSDImage.open(tmp_path / "psd" / "page_0000.psd")
    translated = [f"block {b.order}" for b in project.pages[0].blocks if b.translation]
    assert [layer.name for layer in psd] == ["original", "cleaned", "inpainting patches", *reversed(translated)]
    assert all(group[1].kind == "type" and group[1].text for group in psd[3:])
    assert np.array_equal(np.asarray(psd[0].topil().convert("RGB")), _rgb(root / "vol" / "page_0000.png"))
    assert psd.size == SIZE


def test_mask_edits_reach_the_export(volume, tmp_path):
    root, project = volume
    page = project.pages[0]
    target = next(b for b in page.blocks if not b.translation)
    x0, y0, x1, y1 = target.box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    stroke = MaskStroke(False, 6.0, ((cx - 10, cy), (cx + 10, cy)))
    edited = replace(page, blocks=tuple(replace(b, mask_edits=(stroke,)) if b.id == target.id else b for b in page.blocks))
    export_json(replace(project, pages=[edited, *project.pages[1:]]), tmp_path / "e.json")
    assert main(["render", str(tmp_path / "e.json"), "--out", str(tmp_path / "a"), "--text", "none"]) == 0
    assert main(["render", str(root / "export.json"), "--out", str(tmp_path / "b"), "--text", "none"]) == 0
    a, b = _rgb(tmp_path / "a" / page.name), _rgb(tmp_path / "b" / page.name)
    diff = (a != b).any(axis=2)
    assert diff.any() and diff[int(cy) - 8:int(cy) + 9, int(cx) - 18:int(cx) + 19].sum() == diff.sum()


def test_errors_are_one_clear_line(volume, tmp_path, capsys):
    root, _project = volume
    assert main(["render", str(tmp_path / "nothing"), "--out", str(tmp_path / "o")]) == 2
    assert "no such export" in capsys.readouterr().err
    bare = tmp_path / "bare"
    shutil.copytree(root / "vol", bare, ignore=shutil.ignore_patterns(".hayai-project.json"))
    assert main(["render", str(bare), "--out", str(tmp_path / "o")]) == 2
    assert "no saved project" in capsys.readouterr().err
    assert main(["render", str(root / "export.json"), "--out", str(tmp_path / "o"), "--font", "No Such Font 9"]) == 2
    assert "no font named" in capsys.readouterr().err
    (tmp_path / "file.txt").write_text("x")
    assert main(["render", str(root / "export.json"), "--out", str(tmp_path / "file.txt")]) == 2
    assert "is a file" in capsys.readouterr().err
    assert main(["render", str(root / "export.json"), "--out", str(tmp_path / "o"), "--inpaint", "lama"]) == 2
    assert "models download lama-manga" in capsys.readouterr().err


def test_a_missing_page_is_skipped_and_reported(volume, tmp_path, capsys):
    root, project = volume
    data = json.loads((root / "export.json").read_text(encoding="utf-8"))
    data["pages"][1]["name"] = "gone.png"
    (tmp_path / "x.json").write_text(json.dumps(data), encoding="utf-8")
    assert main(["render", str(tmp_path / "x.json"), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "gone.png skipped" in err
    assert [p.name for p in (tmp_path / "o").iterdir()] == ["page_0000.png"]


def test_cbz_pages_are_numbered_in_reading_order():
    from app.core.exports.translated_pages import cbz_entry_name

    names = [cbz_entry_name(i, 12) for i in (1, 2, 10, 12)]
    assert names == ["001.png", "002.png", "010.png", "012.png"] and sorted(names) == names
    assert cbz_entry_name(7, 1500) == "0007.png"  # wide enough for the volume
