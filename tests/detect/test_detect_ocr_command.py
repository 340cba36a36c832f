"""`hayai-desktop ocr` end to end with tiny models, on a generated folder and a CBZ, via app.cli.main."""
from __future__ import annotations

import json
import os
import pty
import zipfile

import jsonschema
import pytest

from app.cli import main
from app.core.exports.json_txt import EXPORT_SCHEMA_PATH


@pytest.fixture(scope="module")
def pages_dir(tmp_path_factory, make_page):
    folder = tmp_path_factory.mktemp("chapter")
    for i, name in enumerate(["p1.png", "p2.png", "p10.jpg"]):
        make_page(240, 320, seed=10 + i).save(folder / name)
    return folder


@pytest.fixture(scope="module")
def cbz(tmp_path_factory, pages_dir):
    path = tmp_path_factory.mktemp("cbz") / "vol 1.cbz"
    with zipfile.ZipFile(path, "w") as z:
        for name in ("p10.jpg", "p1.png", "p2.png"):
            z.write(pages_dir / name, f"vol1/{name}")
    return path


@pytest.fixture(scope="module")
def base_args(tiny_yolo_path, tiny_models):
    return ["--detector", str(tiny_yolo_path), "--model", str(tiny_models["nova"]), "--device", "cpu",
            "--imgsz", "256", "--conf", "0", "--patches", "64", "--max-new-tokens", "6"]


def _schema():
    return json.loads(open(EXPORT_SCHEMA_PATH, encoding="utf-8").read())


def test_folder_to_json_file(pages_dir, base_args, tmp_path, tiny_detector, tiny_models, capsys):
    out = tmp_path / "out.json"
    assert main(["ocr", str(pages_dir), "--out", str(out)] + base_args) == 0
    assert capsys.readouterr().out == ""
    data = json.loads(out.read_text(encoding="utf-8"))
    jsonschema.validate(data, _schema(), cls=jsonschema.Draft202012Validator)
    assert data["source"] == str(pages_dir) and data["order"] == "rtl"
    assert [p["name"] for p in data["pages"]] == ["p1.png", "p2.png", "p10.jpg"]
    assert all(p["processed"] and p["error"] is None and p["blocks"] for p in data["pages"])

    # the command runs the same pipeline as the app: same blocks, same text
    from app.core.reading.pipeline import Pipeline, PipelineSettings
    from app.core.sources.source import open_source
    from app.ocr import load_recognizer

    settings = PipelineSettings(patches=64, max_new_tokens=6, imgsz=256, conf=0.0, batch_size=8)
    with open_source(pages_dir) as source:
        pages = list(Pipeline(tiny_detector, load_recognizer(tiny_models["nova"], "cpu"), settings).process(source))
    for got, page in zip(data["pages"], pages, strict=True):
        assert [(b["id"], b["box"], b["ocr_text"], b["patches"]) for b in got["blocks"]] == [
            (b.id, list(b.box), b.ocr_text, 64) for b in page.blocks]


def test_cbz_to_txt_on_stdout(cbz, base_args, capsys):
    assert main(["ocr", str(cbz), "--format", "txt", "--order", "ltr"] + base_args) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# Hayai Desktop transcription of {cbz}")
    headers = [line for line in out.splitlines() if line.startswith("=== page")]
    assert headers == ["=== page 1: vol1/p1.png ===", "=== page 2: vol1/p2.png ===", "=== page 3: vol1/p10.jpg ==="]
    assert out.count("\n[1]") == 3


def test_format_follows_out_suffix_and_translations_variant(cbz, base_args, tmp_path):
    out = tmp_path / "vol.txt"
    assert main(["ocr", str(cbz), "--out", str(out), "--translations"] + base_args) == 0
    text = out.read_text(encoding="utf-8")
    assert "=== page 1: vol1/p1.png ===" in text and text.count("\n>\n") == 3  # empty translations


def test_several_sources_one_output_each(pages_dir, cbz, base_args, tmp_path, capsys):
    out_dir = tmp_path / "exports"
    assert main(["ocr", str(pages_dir), str(cbz), "--out", str(out_dir)] + base_args) == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["chapter0.json", "vol 1.json"]
    assert json.loads((out_dir / "vol 1.json").read_text(encoding="utf-8"))["source"] == str(cbz)

    assert main(["ocr", str(pages_dir), str(cbz)] + base_args) == 2
    assert "--out DIR" in capsys.readouterr().err

    assert main(["ocr", str(pages_dir), str(cbz), "--format", "txt"] + base_args) == 0
    out = capsys.readouterr().out
    assert out.index(f"==> {pages_dir} <==") < out.index(f"==> {cbz} <==")


def test_bad_page_is_reported_and_the_rest_is_read(pages_dir, base_args, tmp_path, capsys):
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "a.png").write_bytes((pages_dir / "p1.png").read_bytes())
    (folder / "b.png").write_bytes(b"not a png")
    out = tmp_path / "mixed.json"
    assert main(["ocr", str(folder), "--out", str(out)] + base_args) == 1
    err = capsys.readouterr().err
    assert "b.png" in err and "1 page(s) could not be read" in err and "Traceback" not in err
    pages = json.loads(out.read_text(encoding="utf-8"))["pages"]
    assert pages[0]["processed"] and pages[0]["blocks"]
    assert "b.png" in pages[1]["error"] and not pages[1]["processed"]


def test_usage_and_model_errors(pages_dir, base_args, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HAYAI_MODELS_DIR", str(tmp_path / "empty-store"))
    no_detector = base_args[2:]  # the default detector, not installed in this store
    assert main(["ocr", str(pages_dir)] + no_detector) == 2
    assert "hayai-desktop models download comic-speech-bubble-detector" in capsys.readouterr().err

    assert main(["ocr", str(tmp_path / "nowhere")] + base_args) == 2
    assert "nowhere" in capsys.readouterr().err
    args = list(base_args)
    args[args.index("--detector") + 1] = str(tmp_path / "missing.pt")
    assert main(["ocr", str(pages_dir)] + args) == 2
    assert "missing.pt" in capsys.readouterr().err
    assert main(["ocr", str(pages_dir), "--patches", "0"] + base_args[:-4]) == 2
    assert "--patches" in capsys.readouterr().err


def test_progress_bar_on_a_terminal(pages_dir, base_args, tmp_path, monkeypatch):
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as tty:
        monkeypatch.setattr("sys.stderr", tty)
        assert main(["ocr", str(pages_dir), "--out", str(tmp_path / "o.json")] + base_args) == 0
    drawn = os.read(master, 65536).decode()
    os.close(master)
    assert "\r" in drawn and "3/3 [" in drawn and "page/s" in drawn and "blocks" in drawn, drawn
