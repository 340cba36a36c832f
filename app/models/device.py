"""Device policy for every model the app runs: which device, what the CPU can do, and how a
model moves and recovers when an accelerator fails.

- `resolve_device("auto")`: CUDA, then Apple MPS, then the CPU.
- `move_module(module, device)`: a move that fails half way (out of memory on the third
  parameter) moves everything back to the CPU, so nothing is left split across devices.
- `is_out_of_memory(exc)`: the errors that smaller batches can cure (CUDA, MPS and CPU
  allocators); any other error is a real error and surfaces as one.
- `release_memory(device)`: give cached accelerator memory back; call it *after* leaving the
  `except` block, when the traceback no longer pins the failed batch's tensors.
"""
from __future__ import annotations

import logging
from functools import lru_cache

import torch

from app.errors import UserError

log = logging.getLogger(__name__)

DEVICES = ("auto", "cuda", "mps", "cpu")


def mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def resolve_device(name: str = "auto") -> torch.device:
    name = (name or "auto").lower()
    if name not in DEVICES and not name.startswith("cuda:"):
        raise UserError(f"unknown device {name!r}: use one of {', '.join(DEVICES)}")
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise UserError("CUDA was requested but no CUDA GPU is usable here (driver or PyTorch build); "
                        "use --device cpu or auto")
    if name == "mps" and not mps_available():
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


def available_devices() -> dict[str, bool]:
    """What this machine offers: {"cuda": bool, "mps": bool} (the GUI lists only these)."""
    return {"cuda": torch.cuda.is_available(), "mps": mps_available()}


@lru_cache(maxsize=1)
def cpu_features() -> frozenset[str]:
    """Instruction-set extensions of this CPU that change which precision is fastest:
    avx512_bf16 / amx_bf16 (bfloat16 matrix products), avx512_vnni / avx_vnni / amx_int8 (int8
    dot products). Empty when PyTorch cannot tell."""
    caps = getattr(torch.cpu, "get_capabilities", None)
    try:
        found = caps() if caps is not None else {}
    except (RuntimeError, OSError) as exc:  # an exotic platform: behave as a plain CPU
        log.warning("could not read the CPU's capabilities (%s)", exc)
        found = {}
    wanted = ("avx512_bf16", "amx_bf16", "avx512_vnni", "avx_vnni", "amx_int8")
    return frozenset(k for k in wanted if found.get(k))


def is_out_of_memory(exc: BaseException) -> bool:
    """CUDA / MPS / CPU allocator failures: the errors a smaller batch can cure."""
    if isinstance(exc, torch.OutOfMemoryError):
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text)


def release_memory(device: torch.device) -> None:
    """Return the allocator's cached blocks to the driver (a no-op on the CPU)."""
    if device.type == "cuda" and torch.cuda.is_available():
        torch.cuda.empty_cache()
    elif device.type == "mps" and mps_available():
        torch.mps.empty_cache()


class MoveFailed(Exception):
    """A module could not be moved to a device; it is whole on the CPU again. `reason` is the
    error's message (the error itself is not kept: its traceback would pin device memory)."""

    def __init__(self, device: torch.device, reason: str):
        super().__init__(f"could not move the model to {describe_device(device)}: {reason}")
        self.device = device
        self.reason = reason


def move_module(module: torch.nn.Module, device: torch.device | str) -> None:
    """Move `module` (parameters and buffers) to `device`. When the move fails part way, every
    tensor gets its original data back (kept aside during the move: nothing is copied back from
    the failing device) and MoveFailed is raised: the module is never left split."""
    device = torch.device(device)
    originals = [(slots, key, t, t.data) for slots, key, t in _slots(module)]  # the data as it was: no copy
    reason = ""
    try:
        module.to(device)
    except (RuntimeError, torch.OutOfMemoryError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if not reason:
        return
    # outside the handler: the traceback is gone, the tensors already moved can be freed
    for slots, key, tensor, data in originals:
        if tensor.device != data.device:  # moved in place (module.to sets .data when it can)
            tensor.data = data
        slots[key] = tensor  # or replaced by a new object: put the original back
    del originals
    release_memory(device)
    raise MoveFailed(device, reason)


def _slots(module: torch.nn.Module):
    """(the dict holding it, its key, tensor) for every parameter and buffer of `module`."""
    for sub in module.modules():
        for slots in (sub._parameters, sub._buffers):
            for key, tensor in slots.items():
                if tensor is not None:
                    yield slots, key, tensor
