"""A generated corpus of bad sources (tests/bad_sources.py) through the sources, `ocr`, `render`
and `translate`: every bad page gets a message naming its file and saying what is wrong, no
traceback, the rest of the volume is read, and nothing is written outside the output folder."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.cli import main
from app.core.sources.source import open_source
from app.errors import ImageError
from app.render.writers import output_name
from tests.bad_sources import bad_archive, bad_folder

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "app" / "resources" / "demo"
OCR_ARGS = ["--model", str(DEMO / "hayai-demo-ocr"), "--detector", str(DEMO / "hayai-demo-detector.pt"),
            "--device", "cpu", "--patches", "256", "--max-new-tokens", "24"]



@pytest.fixture
def corpus(tmp_path):
    folder, in_folder = bad_folder(tmp_path / "in")
    archive, in_archive = bad_archive(tmp_path / "in", absolute_member=str(tmp_path / "escaped" / "abs.png"))
    return folder, in_folder, archive, in_archive


def _tree(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink()}


def test_every_bad_page_is_named_and_the_rest_read(corpus):
    folder, in_folder, archive, in_archive = corpus
    for source_path, expected in ((folder, in_folder), (archive, in_archive)):
        with open_source(source_path) as source:
            assert sorted(source.page_names) == sorted(expected)
            for name, error in expected.items():
                if error is None:
                    image = source.load(name)
                    assert image.mode == "RGB" and min(image.size) > 0
                    continue
                with pytest.raises(ImageError) as caught:
                    source.load(name)
                message = str(caught.value)
                assert name in message and error in message, message
                if any(w in error for w in ("outside", "inside the volume", "encrypted", "empty", "bomb")):
                    with pytest.raises(ImageError):  # refused before any pixel is decoded
                        source.size(name)
        if source_path == folder:
            with open_source(folder) as source:
                assert source.load("rotated.jpg").size == (240, 320)  # EXIF orientation applied


def test_page_names_never_lead_outside_the_output_folder():
    assert output_name("../x.png", "png") == "x.png"
    assert output_name("/etc/x.png", "psd") == "etc/x.psd"
    assert output_name("..\\..\\win.png", "png") == "win.png"
    assert output_name("C:/Users/x.png", "png") == "Users/x.png"
    assert output_name("ch1/./002.png", "png") == "ch1/002.png"
    assert output_name("..", "png") == "page.png"


def test_ocr_render_and_translate_over_the_bad_corpus(corpus, tmp_path, capfd, fake_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    folder, in_folder, archive, in_archive = corpus
    before = _tree(tmp_path / "in")
    out = tmp_path / "out"
    code = main(["ocr", str(folder), str(archive), "--out", str(out), *OCR_ARGS])
    err = capfd.readouterr().err
    assert code == 1 and "Traceback" not in err
    for name, error in {**in_folder, **in_archive}.items():
        if error is not None:
            assert f"page {name}: " in err and error in err.split(f"page {name}: ", 1)[1].split("\n", 1)[0], name
    exports = {p.name: json.loads(p.read_text(encoding="utf-8")) for p in out.glob("*.json")}
    assert set(exports) == {"bad-volume.json", "bad.json"}
    for key, expected in (("bad-volume.json", in_folder), ("bad.json", in_archive)):
        pages = {p["name"]: p for p in exports[key]["pages"]}
        assert set(pages) == set(expected)
        assert all(pages[n]["processed"] and not pages[n]["error"] for n, e in expected.items() if e is None)
        assert all(pages[n]["error"] for n, e in expected.items() if e is not None)

    rendered = tmp_path / "rendered"
    code = main(["render", str(out / "bad.json"), "--out", str(rendered), "--text", "source", "--inpaint", "opencv"])
    err = capfd.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert "page ../x.png skipped" in err and "outside the archive" in err
    written = sorted(str(p.relative_to(rendered)) for p in rendered.rglob("*") if p.is_file())
    assert written == ["001.png", "099.png"]

    translated = tmp_path / "translated.json"
    code = main(["translate", str(out / "bad-volume.json"), "--out", str(translated), "--provider", "openai",
                 "--base-url", fake_llm.base_url, "--model", "test-model", "--to", "en", "--timeout", "5",
                 "--use-env-key"])
    err = capfd.readouterr().err
    assert code == 0 and "Traceback" not in err, err
    assert len(json.loads(translated.read_text(encoding="utf-8"))["pages"]) == len(in_folder)

    # nothing written outside the output folders: the inputs are as they were, nothing escaped
    assert _tree(tmp_path / "in") == before
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "x.png").exists()
    assert not os.path.exists("/etc/x.png")
