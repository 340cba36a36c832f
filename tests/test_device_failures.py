"""What happens when a GPU fails (app.models.device policy), driven without a GPU.

No GPU is needed: failures are injected where a GPU would raise them. A "GPU recognizer" here is
a Recognizer that is told its device is CUDA while its tensors stay on the CPU, so the real
model runs and only the injected errors are fake. A move that fails part way goes to the `meta`
device, which exists everywhere.

- a `.to()` failing on the third parameter leaves the whole model on the CPU (not split);
- out of memory halves the batch, and the results are the same as without the failure;
- the memory is released after leaving the `except` block (the traceback pins the tensors);
- out of memory on a single crop on a GPU moves the model to the CPU, says why once, goes on;
- any other error (a shape bug, a device-side assert) surfaces as an error and moves nothing;
- the detector follows the same policy (halve, then the CPU).
"""
from __future__ import annotations

import re
import sys

import numpy as np
import pytest
import torch
from PIL import Image

from app.errors import OutOfMemory
from app.ocr import generate
from app.ocr.recognizer import Recognizer, load_recognizer

CUDA_OOM = "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity)"


@pytest.fixture(scope="module")
def crops():
    rng = np.random.default_rng(11)
    return [Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8))
            for h, w in [(37, 211), (300, 80), (120, 900), (64, 64), (17, 33), (90, 90)]]


@pytest.fixture(scope="module")
def reference(tiny_models, crops):
    """What the tiny model reads on the CPU with nothing failing."""
    rec = load_recognizer(tiny_models["nova"], device="cpu", precision="fp32")
    return [r.tokens for r in rec.recognize(crops, 128, 8)]


def gpu_recognizer(folder) -> Recognizer:
    """A recognizer that believes it is on CUDA (its tensors are on the CPU)."""
    cpu = load_recognizer(folder, device="cpu", precision="fp32")
    return Recognizer(cpu.model, cpu.tokenizer, torch.device("cuda"), cpu.name, folder, precision="fp32",
                      requested_precision="fp32")


def fail_steps(monkeypatch, error, when):
    """Make the decode step raise `error()` whenever when(live batch rows, recognizer) is true."""
    real = generate._step
    seen = []

    def step(model, state, tokens, s):
        seen.append(len(tokens))
        if when(len(tokens)):
            raise error()
        return real(model, state, tokens, s)

    monkeypatch.setattr(generate, "_step", step)
    return seen


def test_a_move_failing_on_the_third_parameter_leaves_the_model_whole_on_the_cpu(tiny_models, crops, reference,
                                                                                 monkeypatch):
    from app.models import device as device_policy
    from app.ocr import recognizer as recognizer_module

    real_to = torch.Tensor.to
    moved = []

    def to(self, *args, **kwargs):
        target = kwargs.get("device", args[0] if args else None)
        if isinstance(target, (str, torch.device)) and torch.device(target).type == "meta":
            moved.append(self.shape)
            if len(moved) == 3:
                raise torch.OutOfMemoryError(CUDA_OOM)
        return real_to(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "to", to)
    monkeypatch.setattr(recognizer_module, "resolve_device", lambda _name: torch.device("meta"))
    monkeypatch.setattr(device_policy, "release_memory", lambda _device: None)
    rec = load_recognizer(tiny_models["nova"], device="cuda", precision="fp32")
    assert len(moved) == 3  # two tensors reached the other device before the failure
    assert rec.device == "cpu" and "out of memory" in rec.fallback_reason
    assert {p.device.type for p in rec.model.parameters()} == {"cpu"}
    assert {b.device.type for b in rec.model.buffers()} <= {"cpu"}
    assert [r.tokens for r in rec.recognize(crops, 128, 8)] == reference


def test_out_of_memory_halves_the_batch_and_changes_no_result(tiny_models, crops, reference, monkeypatch):
    from app.ocr import recognizer as recognizer_module

    rec = load_recognizer(tiny_models["nova"], device="cpu", precision="fp32")
    seen = fail_steps(monkeypatch, lambda: torch.OutOfMemoryError(CUDA_OOM), lambda rows: rows > 2)
    released = []  # (device, an exception was being handled at the time)
    monkeypatch.setattr(recognizer_module, "release_memory",
                        lambda device: released.append((device.type, sys.exc_info()[0] is not None)))
    assert [r.tokens for r in rec.recognize(crops, 128, 8, batch_size=6)] == reference
    assert max(seen) == 6 and {n for n in seen if n <= 2}  # 6 failed, 3 failed, then batches of 2
    assert released and not any(during for _, during in released), "memory released inside the except block"
    assert rec.device == "cpu" and not rec.fallback_reason


def test_out_of_memory_on_one_crop_on_the_gpu_moves_to_the_cpu_and_says_why_once(tiny_models, crops, reference,
                                                                                  monkeypatch):
    rec = gpu_recognizer(tiny_models["nova"])
    told = []
    rec.on_fallback = told.append
    fail_steps(monkeypatch, lambda: torch.OutOfMemoryError(CUDA_OOM), lambda rows: rec.device == "cuda")
    assert [r.tokens for r in rec.recognize(crops, 128, 8, batch_size=4)] == reference
    assert rec.device == "cpu" and rec.device_label == "CPU"
    assert len(told) == 1 and "out of memory" in told[0] and "single crop" in told[0]
    assert rec.fallback_reason == told[0]
    rec.recognize(crops[:2], 128, 8)
    assert len(told) == 1  # told once, not at every batch


def test_the_cpu_precision_after_a_fallback_is_the_cpus_own(tiny_models):
    from app.ocr.precision import auto_precision

    rec = gpu_recognizer(tiny_models["nova"])
    rec.precision, rec.requested_precision = "fp16", "auto"  # what auto picks on CUDA
    rec.fall_back_to_cpu("test")
    assert rec.precision == auto_precision(torch.device("cpu"))


@pytest.mark.parametrize("message", ["CUDA error: device-side assert triggered",
                                     "mat1 and mat2 shapes cannot be multiplied (4x32 and 16x32)"])
def test_other_errors_surface_and_move_nothing(tiny_models, crops, monkeypatch, message):
    rec = gpu_recognizer(tiny_models["nova"])
    told = []
    rec.on_fallback = told.append
    fail_steps(monkeypatch, lambda: RuntimeError(message), lambda rows: True)
    with pytest.raises(RuntimeError, match=re.escape(message)):
        rec.recognize(crops, 128, 8)
    assert rec.device == "cuda" and not told and not rec.fallback_reason


def test_out_of_memory_on_one_crop_on_the_cpu_is_a_clear_error(tiny_models, crops, monkeypatch):
    rec = load_recognizer(tiny_models["nova"], device="cpu", precision="fp32")
    fail_steps(monkeypatch, lambda: RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to "
                                                 "allocate 1073741824 bytes"), lambda rows: True)
    with pytest.raises(OutOfMemory, match="one crop at 128 patches on the CPU"):
        rec.recognize(crops, 128, 8)


# --- the detector ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_yolo_path(tmp_path_factory):
    from app.detect.testing import write_tiny_detector

    return write_tiny_detector(tmp_path_factory.mktemp("yolo") / "tiny.pt", "yolov8n.yaml", {0: "bubble", 1: "text"})


def gpu_detector(tiny_yolo_path, monkeypatch, pages_that_fit: int):
    """The tiny YOLO detector believing it is on CUDA with room for `pages_that_fit` pages per call;
    ultralytics itself runs on the CPU."""
    from app.detect import load_detector

    det = load_detector(tiny_yolo_path, device="cpu")
    real = det._model.predict
    calls = []

    def predict(arrays, **kwargs):
        calls.append((kwargs["device"], len(arrays)))
        if kwargs["device"] != "cpu" and len(arrays) > pages_that_fit:
            raise torch.OutOfMemoryError(CUDA_OOM)
        return real(arrays, **{**kwargs, "device": "cpu", "half": False})

    monkeypatch.setattr(det._model, "predict", predict)
    monkeypatch.setattr(det._model, "to", lambda device: det._model)  # the weights are on the CPU already
    det.device = "cuda"
    return det, calls


@pytest.fixture(scope="module")
def pages_and_truth(tiny_yolo_path):
    from app.detect import load_detector

    rng = np.random.default_rng(5)
    pages = [Image.fromarray(rng.integers(0, 256, (160, 128, 3), dtype=np.uint8)) for _ in range(5)]
    return pages, load_detector(tiny_yolo_path, device="cpu").detect(pages, imgsz=128, batch=4)


def test_detector_halves_its_batch_on_out_of_memory(tiny_yolo_path, pages_and_truth, monkeypatch):
    pages, expected = pages_and_truth
    det, calls = gpu_detector(tiny_yolo_path, monkeypatch, pages_that_fit=2)
    assert det.detect(pages, imgsz=128, batch=4) == expected
    assert [n for _, n in calls][:2] == [4, 2] and det.device == "cuda"


def test_detector_moves_to_the_cpu_when_one_page_does_not_fit(tiny_yolo_path, pages_and_truth, monkeypatch):
    pages, expected = pages_and_truth
    det, calls = gpu_detector(tiny_yolo_path, monkeypatch, pages_that_fit=0)
    told = []
    det.on_fallback = told.append
    assert det.detect(pages, imgsz=128, batch=4) == expected
    assert det.device == "cpu" and len(told) == 1 and "single page" in told[0]
    assert calls[-1][0] == "cpu"


def test_detector_surfaces_other_errors(tiny_yolo_path, monkeypatch):
    from app.detect import load_detector

    det = load_detector(tiny_yolo_path, device="cpu")

    def broken(arrays, **kwargs):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    monkeypatch.setattr(det._model, "predict", broken)
    with pytest.raises(RuntimeError, match="illegal memory access"):
        det.detect([Image.new("RGB", (64, 64))], imgsz=64)
    assert det.device == "cpu" and not det.fallback_reason
