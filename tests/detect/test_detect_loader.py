"""The YOLO loader and Detector on real (tiny, random-weight) ultralytics models."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from app.detect import Detection, load_detector
from app.errors import ModelError, UserError


def test_import_is_cheap_and_qt_free():
    code = ("import sys, app.detect, app.core.reading.pipeline, app.commands.ocr; "
            "print([m for m in sys.modules if m.startswith(('ultralytics', 'torch', 'PySide6', 'app.ui'))])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == "[]"


def test_loads_saved_detector_with_names_and_kinds(tiny_detector, tiny_yolo_path):
    assert tiny_detector.path == tiny_yolo_path.resolve()
    assert tiny_detector.name == "tiny-detect"
    assert tiny_detector.task == "detect"
    assert tiny_detector.device == "cpu"
    assert tiny_detector.names == {0: "bubble", 1: "text"}
    assert tiny_detector.class_map == {0: "bubble", 1: "text"}


def test_detect_returns_detections_in_image_pixels(tiny_detector, make_page):
    wide = make_page(480, 200, seed=1)
    images = [make_page(200, 500), wide.convert("L"), np.asarray(wide.convert("L"))]
    results = tiny_detector.detect(images, imgsz=320, conf=0.0, iou=0.5, batch=2)
    assert len(results) == 3
    assert sum(len(r) for r in results) > 0  # conf=0 keeps random-weight boxes
    sizes = [(200, 500), (480, 200), (480, 200)]
    for dets, (w, h) in zip(results, sizes, strict=True):
        assert [d.score for d in dets] == sorted((d.score for d in dets), reverse=True)
        for d in dets:
            assert isinstance(d, Detection)
            x0, y0, x1, y1 = d.box
            assert -0.5 <= x0 <= x1 <= w + 0.5 and -0.5 <= y0 <= y1 <= h + 0.5
            assert 0.0 <= d.score <= 1.0
            assert d.polygon is None  # a box model has no masks
            assert (d.label, d.kind) in {("bubble", "bubble"), ("text", "text")}
    # the grayscale PIL page and the grayscale array of the same page give the same boxes
    np.testing.assert_allclose([d.box for d in results[1]], [d.box for d in results[2]], atol=1.0)
    # a page's boxes do not depend on the other pages in the call
    (alone,) = tiny_detector.detect([images[0]], imgsz=320, conf=0.0, iou=0.5)
    assert alone == results[0]  # exactly, also on the first call after loading (warmed up)


def test_segmentation_model_gives_polygons_and_maps_names(tiny_seg_path, make_page):
    det = load_detector(tiny_seg_path, device="cpu")
    assert det.task == "segment"
    assert det.class_map == {0: "bubble", 1: "text", 2: "other"}
    (dets,) = det.detect([make_page(256, 320, seed=2)], imgsz=256, conf=0.0)
    with_poly = [d for d in dets if d.polygon is not None]
    assert with_poly, "a segmentation model should give outlines"
    for d in with_poly:
        assert len(d.polygon) >= 3
        xs = [p[0] for p in d.polygon]
        ys = [p[1] for p in d.polygon]
        assert min(xs) >= -1 and max(xs) <= 257 and min(ys) >= -1 and max(ys) <= 321
    assert {d.label for d in dets} <= {"Speech Balloon", "frame_text", "panel"}


def test_class_map_override_wins(tiny_yolo_path):
    det = load_detector(tiny_yolo_path, device="cpu", class_map={"TEXT": "other", 0: "text"})
    assert det.class_map == {0: "text", 1: "other"}
    with pytest.raises(ModelError, match="kind 'speech'"):
        load_detector(tiny_yolo_path, device="cpu", class_map={"bubble": "speech"})


def test_bad_files_give_model_errors(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        load_detector(tmp_path / "missing.pt")
    with pytest.raises(ModelError, match="is a folder"):
        load_detector(tmp_path)
    (tmp_path / "weights.onnx").write_bytes(b"x")
    with pytest.raises(ModelError, match="not an ultralytics detector"):
        load_detector(tmp_path / "weights.onnx")
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"\x89PNG not a checkpoint" * 10)
    with pytest.raises(ModelError, match="junk.pt"):
        load_detector(junk, device="cpu")
    empty = tmp_path / "empty.pt"
    empty.write_bytes(b"")
    with pytest.raises(ModelError, match="empty.pt"):
        load_detector(empty, device="cpu")


def test_missing_official_name_is_not_downloaded(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelError, match="yolov8n.pt"):
        load_detector("yolov8n.pt")
    assert not (tmp_path / "yolov8n.pt").exists()



def test_detector_leaves_torch_threads_alone(tmp_path, make_page):
    """ultralytics sets torch's CPU threads to cores - 1 and OMP_NUM_THREADS=1 and patches
    PIL.Image.open and torch.save; the OCR and page loading share the process, so all of that is
    undone. Running a detector pulls in no Qt either."""
    code = (
        "import os, sys, torch; sys.path.insert(0, '.'); os.environ.pop('OMP_NUM_THREADS', None)\n"
        "torch.set_num_threads(3); from app.detect import load_detector\n"
        "from app.detect.testing import write_tiny_detector\n"
        f"d = load_detector(write_tiny_detector(r'{tmp_path / 'd.pt'}'), device='cpu')\n"
        "from PIL import Image; d.detect([Image.new('RGB', (64, 64))], imgsz=64)\n"
        "print(torch.get_num_threads(), os.environ.get('OMP_NUM_THREADS'))\n"
        "import PIL.Image, io\n"
        "try: PIL.Image.open(io.BytesIO(b'not an image' * 50))\n"
        "except PIL.UnidentifiedImageError: pass\n"  # not ultralytics' pi-heif install attempt
        "assert PIL.Image.open.__module__ == 'PIL.Image' and torch.save.__module__ == 'torch.serialization'\n"
        "assert not [m for m in sys.modules if m.startswith(('PySide6', 'app.ui'))]\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.split()[-2:] == ["3", "None"]


def test_a_bare_name_goes_to_the_model_store(tmp_path, monkeypatch):
    """A name that is not a file is looked up in the model store, never handed to ultralytics
    (which would try to download it)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match="no-such-detector"):
        load_detector("no-such-detector")
    assert list(tmp_path.iterdir()) == []


def test_manifest_detector_through_the_model_store(tiny_yolo_path, tmp_path, monkeypatch):
    """A default detector is loaded by name only once the store holds it and trusts its sha256."""
    from app.models import store

    monkeypatch.setenv("HAYAI_MODELS_DIR", str(tmp_path / "models"))
    with pytest.raises(ModelError, match="models download comic-speech-bubble-detector"):
        load_detector("bubbles", device="cpu")
    stored = store.import_folder(tiny_yolo_path, "bubbles")  # what `models download` ends with
    det = load_detector("bubbles", device="cpu")
    assert det.path == stored.resolve() and det.name == "comic-speech-bubble-detector"
    assert det.class_map == {0: "bubble", 1: "text"}

    stored.write_bytes(stored.read_bytes() + b"tampered")  # a changed pickle is never loaded
    with pytest.raises(ModelError, match="sha256"):
        load_detector("comic-speech-bubble-detector", device="cpu")


def test_detector_runs_at_the_size_it_was_trained_at(tiny_detector, make_page):
    from types import SimpleNamespace

    from app.detect.detector import DEFAULT_IMGSZ, trained_imgsz

    assert trained_imgsz(SimpleNamespace(overrides={"imgsz": 640})) == 640
    assert trained_imgsz(SimpleNamespace(overrides={"imgsz": [480, 640]})) == 640
    assert trained_imgsz(SimpleNamespace(overrides={})) == DEFAULT_IMGSZ
    assert tiny_detector.imgsz == 640  # the ultralytics default args its .pt records
    page = make_page(256, 320, seed=3)
    explicit = tiny_detector.detect([page], imgsz=256, conf=0.0)
    assert tiny_detector.detect([page], conf=0.0) != explicit  # the default is not 256 ...
    tiny_detector.imgsz = 256
    try:
        assert tiny_detector.detect([page], conf=0.0) == explicit  # ... until the detector says so
    finally:
        tiny_detector.imgsz = 640


def test_a_corrupt_page_is_not_an_image_after_a_detector_is_loaded(tmp_path):
    """ultralytics replaces PIL.Image.open process-wide with a wrapper that answers a corrupt file
    by trying to install pi-heif; app.detect undoes that. Should the undo stop working (an
    ultralytics that renames its patches), a damaged page would no longer say what it is."""
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "p.png").write_bytes(b"not an image" * 50)
    code = (
        "import sys; sys.path.insert(0, '.')\n"
        "from app.detect import load_detector\n"
        "from app.detect.testing import write_tiny_detector\n"
        f"load_detector(write_tiny_detector(r'{tmp_path / 'd.pt'}'), device='cpu')\n"
        "from app.core.sources.source import open_source\n"
        "from app.errors import ImageError\n"
        f"source = open_source(r'{pages}')\n"
        "try: source.load('p.png')\n"
        "except ImageError as exc: print('MESSAGE', exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    message = next(ln for ln in out.stdout.splitlines() if ln.startswith("MESSAGE"))
    assert "p.png: not a readable image (the file content is not PNG data)" in message, message
