"""Device policy: auto = CUDA, then Apple MPS, then CPU."""
from __future__ import annotations

import torch

from app.errors import UserError

DEVICES = ("auto", "cuda", "mps", "cpu")


def resolve_device(name: str = "auto") -> torch.device:
    name = (name or "auto").lower()
    if name not in DEVICES and not name.startswith("cuda:"):
        raise UserError(f"unknown device {name!r}: use one of {', '.join(DEVICES)}")
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise UserError("CUDA was requested but no CUDA GPU is usable here (driver or PyTorch build); "
                        "use --device cpu or auto")
    if name == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise UserError("Apple MPS was requested but is not available; use --device cpu or auto")
    return torch.device(name)


def describe_device(device: torch.device) -> str:
    """Human-readable: 'CUDA (NVIDIA H200)', 'CPU', 'Apple MPS'."""
    if device.type == "cuda":
        try:
            return f"CUDA ({torch.cuda.get_device_name(device)})"
        except (RuntimeError, AssertionError):
            return "CUDA"
    return {"mps": "Apple MPS", "cpu": "CPU"}.get(device.type, str(device))


def is_out_of_memory(exc: BaseException) -> bool:
    return isinstance(exc, torch.OutOfMemoryError) or "out of memory" in str(exc).lower()
