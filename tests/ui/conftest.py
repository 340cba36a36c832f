"""GUI test fixtures: offscreen Qt (the folders are isolated by tests/conftest.py's own_machine), the demo models (app/resources/demo)
reading synthetic manga pages with known text (tools.synth), tiny random models for the
smoke test, and a guard that fails any test leaving a thread running."""
from __future__ import annotations

import functools
import json
import os
import threading
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("YOLO_OFFLINE", "1")
os.environ.setdefault("YOLO_AUTOINSTALL", "false")
os.environ.setdefault("YOLO_VERBOSE", "false")

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def no_thread_left_running(qapp):
    """Fail a test that leaves a Python thread, a tracked QThread or a busy thread pool behind."""
    from app.ui.common import threads

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


@pytest.fixture
def local_hub(tmp_path, monkeypatch):
    """(server, serve): a local Hub (tests/hub_server.py) that HF_ENDPOINT points to, and
    `serve(name, repo_id, files) -> ModelEntry`, which serves a model's files (name -> bytes) at
    HUB_REVISION and lists it in the manifest."""
    import hashlib

    from huggingface_hub.utils import close_session

    from app.models import store
    from app.models.store import ModelEntry, ModelFile
    from tests.hub_server import FakeHub

    server = FakeHub()
    monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")

    def serve(name: str, repo_id: str, files: dict[str, bytes]) -> ModelEntry:
        server.add_repo(repo_id, HUB_REVISION, files)
        entry = ModelEntry(name=name, repo_id=repo_id, revision=HUB_REVISION, kind="ocr", description="test model",
                           files=tuple(ModelFile(n, hashlib.sha256(d).hexdigest(), len(d)) for n, d in files.items()))
        monkeypatch.setitem(store.MODELS, entry.name, entry)
        return entry

    yield server, serve
    for _bytes, release in server.hold.values():
        release.set()
    close_session()  # drop pooled keep-alive connections before the server goes
    server.close()


HUB_REVISION = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="session")
def tiny_ocr(tmp_path_factory):
    from app.ocr.testing import write_tiny_checkpoint

    return write_tiny_checkpoint(tmp_path_factory.mktemp("ocr") / "tiny-nova", "nova", seed=1)


@pytest.fixture(scope="session")
def tiny_yolo(tmp_path_factory):
    from app.detect.testing import write_tiny_detector

    return write_tiny_detector(tmp_path_factory.mktemp("yolo") / "tiny-detect.pt", "yolov8n.yaml",
                               {0: "bubble", 1: "text"})


PAGE_SEED = 4242  # synthetic pages of the GUI tests: a seed no demo model was trained or tuned on
DEMO = Path(__file__).resolve().parents[2] / "app" / "resources" / "demo"
DEMO_OCR, DEMO_DETECTOR = DEMO / "hayai-demo-ocr", DEMO / "hayai-demo-detector.pt"
DEMO_PATCHES = 256


@functools.lru_cache(maxsize=64)
def _synth_page(index: int) -> tuple[bytes, dict]:
    import io

    from tools.synth import generate_page

    image, truth = generate_page(PAGE_SEED, index)
    buf = io.BytesIO()
    image.save(buf, format="PNG", compress_level=1)
    return buf.getvalue(), truth


def write_pages(folder, n: int = 3):
    """`n` synthetic manga pages (tools.synth, seed PAGE_SEED) as page-001.png, ..., each with its
    truth (boxes, kinds and texts of the blocks) beside it as page-001.json."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        png, truth = _synth_page(i)
        name = f"page-{i + 1:03d}"
        (folder / f"{name}.png").write_bytes(png)
        (folder / f"{name}.json").write_text(json.dumps({**truth, "image": f"{name}.png"}, ensure_ascii=False),
                                             encoding="utf-8")
    return folder


def truth_of(folder, name: str):
    """The truth (app.core.reading.evaluation.TruthPage) of page `name` written by write_pages."""
    from app.core.reading.evaluation import read_truth_folder

    (page,) = [p for p in read_truth_folder(folder) if p.name == name]
    return page


@pytest.fixture
def pages(tmp_path):
    return write_pages(tmp_path / "vol1", 3)


@pytest.fixture
def make_window(qtbot):
    """Build MainWindows wired to the demo models (app/resources/demo: they read the synthetic pages'
    text); each is closed (threads stopped) at teardown."""
    from app.core.config.settings import AppSettings
    from app.ui.shell.main_window import MainWindow

    made = []

    def make(**settings):
        values = {"model": str(DEMO_OCR), "detector": str(DEMO_DETECTOR), "device": "cpu",
                  "patches": DEMO_PATCHES, **settings}
        window = MainWindow(AppSettings(**values))
        window.pipeline_overrides.update(max_new_tokens=48)
        window.configure_worker()
        window.questions.answers.update(restore_autosave=True, unsaved_changes="discard")
        qtbot.addWidget(window)
        window.resize(1200, 800)
        window.show()
        made.append(window)
        return window

    yield make
    # the last made closes first: a window's exit waits for every tracked thread of the process
    # (the app has one window a process), so closing the first while a later one's workers run
    # would wait out the whole stop timeout
    for window in reversed(made):
        window.questions.answers["unsaved_changes"] = "discard"
        window.close()
        window.shutdown()


def answer_dialog(button, asked: list | None = None, timeout_ms: int = 10000):
    """Answer the next modal dialog as a user would: a timer looks for the active modal widget (a
    QMessageBox or any QDialog the window opens), records its text in `asked` and clicks the button
    `button` (a QMessageBox.StandardButton, or a button's label); a file dialog is given the path
    `button` and accepted, a list to choose from (QInputDialog) the item `button`. A list of
    buttons answers that many dialogs in turn. Start it just before the call that opens the
    dialog; the call returns once the button is clicked."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import (
        QAbstractButton,
        QApplication,
        QFileDialog,
        QInputDialog,
        QLineEdit,
        QMessageBox,
    )

    todo = list(button) if isinstance(button, list) else [button]
    timer = QTimer()
    timer.setInterval(20)
    state = {"ms": 0, "last": None}

    def answer(dialog, button) -> None:
        if isinstance(dialog, QFileDialog):  # `button` is the path to choose, typed as a user would
            # typed into the file-name box: selectFile() leaves a name the dialog was opened with
            # in that box (PySide6 6.11.3), and the file would go there instead
            path = str(Path(button).absolute())
            typed = dialog.findChild(QLineEdit, "fileNameEdit")
            if typed is not None:
                typed.setText(path)
            else:
                dialog.selectFile(path)
            if dialog.selectedFiles()[:1] != [path]:  # closed, so the test fails here and does not hang
                dialog.reject()
                raise AssertionError(f"the dialog {dialog.windowTitle()!r} chose {dialog.selectedFiles()}, not {path}")
            dialog.accept()
            return
        if isinstance(dialog, QInputDialog) and isinstance(button, str) and button in dialog.comboBoxItems():
            dialog.setTextValue(button)
            dialog.accept()
            return
        if isinstance(dialog, QMessageBox) and not isinstance(button, str):
            target = dialog.button(button)
        else:
            target = next((b for b in dialog.findChildren(QAbstractButton) if b.text().replace("&", "") == button),
                          None)
        assert target is not None, f"no button {button!r} on the dialog {dialog.windowTitle()!r}"
        target.click()

    def look() -> None:
        state["ms"] += 20
        dialog = QApplication.activeModalWidget()
        if dialog is None or dialog is state["last"]:
            if state["ms"] > timeout_ms:
                timer.stop()
            return
        state["last"], state["ms"] = dialog, 0
        if asked is not None:
            asked.append(dialog.text() if isinstance(dialog, QMessageBox) else dialog.windowTitle())
        answer(dialog, todo.pop(0))
        if not todo:
            timer.stop()

    timer.timeout.connect(look)
    timer.start()
    return timer
