"""The model manager dialog against a local HTTP server laid out like the Hugging Face Hub:
download with byte progress, cancel and resume, verify, remove; the main window's banner."""
import hashlib
import random

import pytest
from PySide6.QtCore import Qt

from app.models import store
from app.models.store import ModelEntry, ModelFile

REPO, REV = "tester/tiny-ocr", "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def served(local_hub):
    rng = random.Random(3)
    files = {"config.json": b'{"d_model": 64}', "model.safetensors": rng.randbytes(2_000_000),
             "tokenizer.json": b"{}", "tokenizer_config.json": b"{}"}
    _server, serve = local_hub
    return serve("tiny-test-ocr", REPO, files)


def test_download_cancel_resume_verify_remove(qtbot, served):
    from app.ui.models.manager import ModelManagerDialog

    dlg = ModelManagerDialog()
    qtbot.addWidget(dlg)
    dlg.show()
    progress = []
    # the user presses Cancel as soon as bytes arrive (set from the worker thread: deterministic)
    cancel_now = dlg._runner.progressed.connect(
        lambda f, done, total: (progress.append((f, done, total)), dlg._cancel.set() if done and total and
                                done < total else None), Qt.ConnectionType.DirectConnection)
    with qtbot.waitSignal(dlg.task_done, timeout=30000) as blocker:
        dlg.start_download(served.name)
    assert blocker.args[1] == "cancelled"
    assert served.name not in store.installed_models()
    dlg._runner.progressed.disconnect(cancel_now)
    with qtbot.waitSignal(dlg.task_done, timeout=30000) as blocker:
        dlg.start_download(served.name)  # resumes
    assert blocker.args[1] == "ok"
    assert served.name in store.installed_models()
    assert any(total == 2_000_000 for _f, _d, total in progress)
    row = [dlg.table.item(r, 0).text() for r in range(dlg.table.rowCount())].index(served.name)
    assert dlg.table.item(row, 3).text() == "installed"
    with qtbot.waitSignal(dlg.task_done, timeout=30000) as blocker:
        dlg.select(served.name)
        dlg._on_verify()
    assert blocker.args[1] == "ok" and "All files verified" in dlg.progress_label.text()
    chosen = []
    dlg.model_chosen.connect(chosen.append)
    dlg._on_use()
    assert chosen == [served.name]
    dlg.remove(served.name)
    assert served.name not in store.installed_models()
    dlg.done(0)


def test_banner_offers_download_when_no_model(make_window, tmp_path):
    w = make_window(model="hayai-ocr-v2.5-nova")
    w.update_model_banner()
    assert w.banner.isVisible()
    labels = [b.text() for b in w.banner.buttons()]
    assert any(t.startswith("Download Hayai v2.5 Nova (") for t in labels)
    assert "Choose a local folder…" in labels
    w.update_settings(model=str(tmp_path))  # a local folder counts as chosen
    w.update_model_banner()
    assert w.banner.kind == "demo" and "not installed" not in w.banner.label.text()  # the demo detector reads
    (tmp_path / "detector.pt").write_bytes(b"")
    w.update_settings(detector=str(tmp_path / "detector.pt"))
    w.update_model_banner()
    assert not w.banner.isVisible()


def test_demo_models_are_labelled(make_window):
    w = make_window()
    w.demo = True
    w.update_model_banner()
    assert w.banner.isVisible() and w.banner.kind == "demo"
    assert "synthetic" in w.banner.label.text() and "Hayai v2.5 Nova" in w.banner.label.text()


def test_an_installed_inpainting_model_is_not_offered_as_ocr_or_detector(qtbot, tmp_path, monkeypatch):
    from app.ui.models.manager import ModelManagerDialog

    data = b"not really onnx"
    entry = ModelEntry(name="tiny-test-lama", repo_id="tester/lama", revision=REV, kind="inpainting",
                       description="test inpainting", files=(ModelFile("lama.onnx", hashlib.sha256(data).hexdigest(), len(data)),))
    monkeypatch.setitem(store.MODELS, entry.name, entry)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    folder = store.models_dir() / entry.name
    folder.mkdir(parents=True)
    (folder / "lama.onnx").write_bytes(data)
    dlg = ModelManagerDialog()
    qtbot.addWidget(dlg)
    chosen = []
    dlg.model_chosen.connect(chosen.append)
    dlg.detector_chosen.connect(chosen.append)
    try:
        dlg.select(entry.name)
        assert dlg.buttons["verify"].isEnabled() and not dlg.buttons["use"].isEnabled()
        dlg._on_use()
        assert chosen == []
    finally:
        dlg.done(0)  # stops the dialog's thread even when an assertion failed
