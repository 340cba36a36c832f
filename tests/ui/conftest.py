"""GUI test fixtures: offscreen Qt, isolated config/data dirs, tiny real models, generated pages,
and a guard that fails any test leaving a thread running."""
from __future__ import annotations

import os
import threading

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("YOLO_OFFLINE", "1")
os.environ.setdefault("YOLO_AUTOINSTALL", "false")
os.environ.setdefault("YOLO_VERBOSE", "false")

import pytest  # noqa: E402

# The pipeline on random weights: a very low detector confidence and a small input size make
# the tiny YOLO produce boxes quickly; short decodes keep the tiny recognizer fast.
TINY_PIPELINE = {"conf": 0.001, "imgsz": 320, "max_new_tokens": 8}


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path, monkeypatch):
    """Settings, projects, autosaves and the model store under the test's tmp_path."""
    monkeypatch.setenv("HAYAI_DESKTOP_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("HAYAI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HAYAI_MODELS_DIR", str(tmp_path / "models"))


@pytest.fixture(autouse=True)
def no_thread_left_running(qapp):
    """Fail a test that leaves a Python thread, a tracked QThread or a busy thread pool behind."""
    from app.ui import threads

    before = {t.ident for t in threading.enumerate()}
    yield
    for _ in range(50):  # let finishing threads finish (up to ~1 s)
        qapp.processEvents()
        left = threads.running() + [
            t.name for t in threading.enumerate()
            if t.ident not in before and t.is_alive() and not isinstance(t, threading._DummyThread)
        ]
        if not left:
            return
        threading.Event().wait(0.02)
    pytest.fail(f"threads left running after the test: {left}")


@pytest.fixture(scope="session")
def tiny_ocr(tmp_path_factory):
    from app.ocr.testing import write_tiny_checkpoint

    return write_tiny_checkpoint(tmp_path_factory.mktemp("ocr") / "tiny-nova", "nova", seed=1)


@pytest.fixture(scope="session")
def tiny_yolo(tmp_path_factory):
    from app.detect.testing import write_tiny_detector

    return write_tiny_detector(tmp_path_factory.mktemp("yolo") / "tiny-detect.pt", "yolov8n.yaml",
                               {0: "bubble", 1: "text"})


def write_pages(folder, n: int = 3, size=(480, 640)):
    """`n` generated manga-like pages (bubbles with strokes) as page-001.png, ..."""
    from PIL import Image, ImageDraw

    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        image = Image.new("RGB", size, "white")
        d = ImageDraw.Draw(image)
        for k in range(4):
            x, y = 30 + (k % 2) * 220, 40 + (k // 2) * 300 + 10 * i
            d.ellipse((x, y, x + 180, y + 220), outline="black", width=4)
            for j in range(4):
                d.line((x + 60 + 18 * j, y + 40, x + 60 + 18 * j, y + 170), fill="black", width=5)
        image.save(folder / f"page-{i + 1:03d}.png")
    return folder


@pytest.fixture
def pages(tmp_path):
    return write_pages(tmp_path / "vol1", 3)


@pytest.fixture
def make_window(qtbot, tiny_ocr, tiny_yolo):
    """Build MainWindows wired to the tiny models; each is closed (threads stopped) at teardown."""
    from app.core.settings import AppSettings
    from app.ui.main_window import MainWindow

    made = []

    def make(**settings):
        values = {"model": str(tiny_ocr), "detector": str(tiny_yolo), "device": "cpu", **settings}
        window = MainWindow(AppSettings(**values))
        window.pipeline_overrides.update(TINY_PIPELINE)
        window.configure_worker()
        window.questions.answers.update(restore_autosave=True, unsaved_changes="discard")
        qtbot.addWidget(window)
        window.resize(1200, 800)
        window.show()
        made.append(window)
        return window

    yield make
    for window in made:
        window.questions.answers["unsaved_changes"] = "discard"
        window.close()
        window.shutdown()
