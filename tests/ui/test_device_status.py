"""Device and precision in the window: the Precision setting beside Device reaches the worker
and the status bar; the models load as soon as the window is up; a GPU that gives up is visible
(the status bar's device label changes, the user is told once why) and the detector goes to the
CPU with the OCR model; MPS is offered only where the machine has it.

No GPU here: the worker's recognizer is told it is on CUDA while its tensors stay on the CPU,
and an out-of-memory error is injected into its decode step (tests/test_device_failures.py
drives the same policy without a window)."""
from __future__ import annotations

import torch
from PySide6.QtCore import Qt

from app.ocr import generate


def wait_models(w, qtbot):
    worker = w.host.worker
    qtbot.waitUntil(lambda: worker._recognizer is not None and worker._detector is not None, timeout=60000)
    qtbot.waitUntil(lambda: "on CPU" in w.device_label.text(), timeout=10000)


def test_models_load_when_the_window_is_up_and_the_status_bar_shows_the_precision(make_window, qtbot):
    w = make_window(precision="bf16")
    wait_models(w, qtbot)  # nobody asked for a page: the window preloaded them
    assert w.device_label.text().endswith("on CPU · BF16")
    assert w.host.worker._recognizer.precision == "bf16"
    assert w.act.device.findData("mps") < 0  # this machine has no Apple GPU: not offered
    assert w.act.precision.itemText(w.act.precision.findData("auto")).startswith("Auto (")


def test_choosing_a_precision_reloads_the_model_in_it(make_window, pages, qtbot):
    w = make_window(precision="fp32")
    wait_models(w, qtbot)
    assert w.device_label.text().endswith("· FP32")
    w.session.open_path(pages)
    w.act.precision.setCurrentIndex(w.act.precision.findData("int8"))
    w.act.precision.activated.emit(w.act.precision.currentIndex())
    assert w.settings.precision == "int8"
    with qtbot.waitSignal(w.run_finished, timeout=120000):
        w.run_pages([w.current])
    assert w.host.worker._recognizer.precision == "int8"
    assert w.device_label.text().endswith("· INT8")


def test_mps_is_offered_when_the_worker_finds_it(make_window, qtbot):
    w = make_window(device="mps")  # a settings file from a Mac
    w.host.worker.capabilities.emit({"cuda": False, "mps": True, "auto_precision": "fp32"})
    qtbot.waitUntil(lambda: w.act.device.findData("mps") >= 0)
    assert w.act.device.currentData() == "mps"
    assert w.act.device.itemText(w.act.device.findData("mps")) == "Apple MPS"


def test_a_gpu_out_of_memory_is_visible_and_told_once(make_window, pages, qtbot, monkeypatch):
    w = make_window()
    wait_models(w, qtbot)
    w.session.open_path(pages)
    qtbot.waitUntil(w.view.has_image, timeout=10000)
    worker = w.host.worker
    rec, det = worker._recognizer, worker._detector
    rec._device = torch.device("cuda")  # the recognizer believes it is on a GPU ...
    det.device = "cuda"  # ... and so does the detector (a region read does not run it)
    real_step = generate._step

    def step(model, state, tokens, s):
        if rec.device == "cuda":
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 64.00 MiB")
        return real_step(model, state, tokens, s)

    monkeypatch.setattr(generate, "_step", step)
    told = []
    worker.device_fell_back.connect(told.append, Qt.ConnectionType.DirectConnection)
    for box in ((40, 40, 300, 200), (60, 300, 400, 500)):
        before = len(w.doc.page(w.current).blocks)
        w._on_box_drawn(box)
        qtbot.waitUntil(lambda b=before: len(w.doc.page(w.current).blocks) == b + 1, timeout=60000)
    assert rec.device == "cpu" and det.device == "cpu"  # the detector went with the OCR model
    assert len(told) == 1 and "out of memory" in told[0]  # one message, for both models, once
    qtbot.waitUntil(lambda: "(GPU failed)" in w.device_label.text())
    assert "out of memory" in w.device_label.toolTip()
    assert w.notice.isVisible() and "now runs on the CPU" in w.notice.label.text()
