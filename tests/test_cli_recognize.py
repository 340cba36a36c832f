"""`hayai-desktop recognize` and `eval` end to end on tiny checkpoints, through app.cli.main."""
import json
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from app.cli import main
from app.ocr import load_recognizer
from tests.conftest import ROOT


@pytest.fixture()
def crop_files(tmp_path):
    rng = np.random.default_rng(11)
    paths = []
    for i, (h, w) in enumerate([(40, 200), (300, 90), (64, 64)]):
        path = tmp_path / f"crop{i}.png"
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(path)
        paths.append(path)
    return paths


def test_recognize_plain_and_json(tiny_models, crop_files, capsys):
    model = str(tiny_models["nova"])
    args = ["recognize", "--model", model, "--device", "cpu", "--patches", "256", "--max-new-tokens", "6"]
    expected = load_recognizer(model, "cpu").recognize([Image.open(p) for p in crop_files], 256, 6)

    assert main(args + [str(p) for p in crop_files]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [r.text.replace("\n", " ") for r in expected]

    assert main(args + ["--json"] + [str(p) for p in crop_files]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [o["image"] for o in out] == [str(p) for p in crop_files]
    assert [o["tokens"] for o in out] == [r.tokens for r in expected]
    assert [o["text"] for o in out] == [r.text for r in expected]


def test_recognize_errors_are_one_line_and_nonzero(tiny_models, crop_files, tmp_path, capsys):
    bad_image = tmp_path / "broken.png"
    bad_image.write_bytes(b"not an image at all")
    assert main(["recognize", "--model", str(tiny_models["nova"]), str(bad_image)]) == 2
    err = capsys.readouterr().err
    assert "broken.png" in err and "Traceback" not in err

    bad_model = tmp_path / "model"
    bad_model.mkdir()
    (bad_model / "config.json").write_text("{}")
    (bad_model / "model.safetensors").write_bytes(b"\x00" * 10)
    assert main(["recognize", "--model", str(bad_model), str(crop_files[0])]) == 2
    err = capsys.readouterr().err
    assert "model.safetensors" in err and "damaged" in err

    assert main(["recognize", "--model", str(tmp_path / "missing"), str(crop_files[0])]) == 2
    assert "models download" in capsys.readouterr().err


def test_eval_reports_cer_and_exact_match(tiny_models, crop_files, tmp_path, capsys):
    model = str(tiny_models["v2"])
    results = load_recognizer(model, "cpu").recognize([Image.open(p) for p in crop_files], 256, 6)
    data = tmp_path / "data.jsonl"
    refs = [results[0].text, results[1].text + "x", "zz"]  # one exact, one off by one, one wrong
    data.write_text("\n".join(json.dumps({"image": p.name, "text": t}) for p, t in zip(crop_files, refs)))
    from app.ocr.text import score

    want = score([r.text for r in results], refs)
    assert main(["eval", "--model", model, "--device", "cpu", "--patches", "256", "--max-new-tokens", "6",
                 "--json", str(data)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["samples"] == 3
    assert abs(got["cer"] - want.cer) < 1e-12 and abs(got["exact_match"] - want.exact_match) < 1e-12
    assert got["exact_match"] >= 1 / 3


def test_module_entry_point_runs_without_traceback(tmp_path):
    """`python -m app recognize` with a missing file: clean message, exit 2."""
    proc = subprocess.run([sys.executable, "-m", "app", "recognize", "--model", str(tmp_path), "nope.png"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "nope.png" in proc.stderr and "Traceback" not in proc.stderr
