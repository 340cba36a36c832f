"""The device policy (app.models.device) for every combination of what the machine has: the
hardware answers are set per case (this machine has no GPU), the expected device is written out."""
from __future__ import annotations

import pytest
import torch

from app.detect import resolve_device as detector_device
from app.errors import UserError
from app.models.device import describe_device, resolve_device

# (CUDA usable, MPS usable) -> what "auto" picks
AUTO = [((True, True), "cuda"), ((True, False), "cuda"), ((False, True), "mps"), ((False, False), "cpu")]


@pytest.fixture
def machine(monkeypatch):
    def have(cuda: bool, mps: bool) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)

    return have


@pytest.mark.parametrize(("has", "expected"), AUTO)
def test_auto_prefers_cuda_then_mps_then_cpu(machine, has, expected):
    machine(*has)
    assert resolve_device("auto") == torch.device(expected)
    assert resolve_device(None) == torch.device(expected)  # no choice = auto
    assert detector_device("auto") == expected  # the detector follows the same policy


@pytest.mark.parametrize(("has", "name", "expected"), [
    ((True, False), "cuda", "cuda"), ((True, False), "CUDA", "cuda"), ((True, False), "cuda:1", "cuda:1"),
    ((False, True), "mps", "mps"), ((True, True), "cpu", "cpu"), ((False, False), "cpu", "cpu"),
])
def test_an_explicit_choice_is_kept_when_usable(machine, has, name, expected):
    machine(*has)
    assert resolve_device(name) == torch.device(expected)


@pytest.mark.parametrize(("has", "name", "says"), [
    ((False, True), "cuda", "CUDA was requested but no CUDA GPU is usable"),
    ((False, False), "cuda:0", "CUDA was requested"),
    ((True, False), "mps", "Apple MPS was requested but is not available"),
    ((True, True), "tpu", "unknown device 'tpu'"),
])
def test_an_unusable_choice_is_a_clear_error(machine, has, name, says):
    machine(*has)
    with pytest.raises(UserError, match=says):
        resolve_device(name)
    with pytest.raises(UserError, match=says):
        detector_device(name)


def test_devices_are_described_for_the_status_bar():
    assert describe_device(torch.device("cpu")) == "CPU"
    assert describe_device(torch.device("mps")) == "Apple MPS"
