"""Precision modes of the Hayai engine, a load-time choice of the Recognizer.

    fp32  exact: the published inference path token for token (tests/test_golden.py)
    bf16  weights and activations in bfloat16; norms, RoPE, softmax and logits in float32
    fp16  float16 autocast with norms in float32 (the model card's CUDA setting)
    int8  CPU: the Linear layers of the vision tower (most of the work) dynamically quantized:
          int8 weights per output channel, activations quantized per call with the x86/fbgemm
          kernels (VNNI); the tower runs one crop per call, so a crop's activation scale never
          depends on its batch neighbours. Projector and decoder stay float32.
    auto  per device, the fastest mode that passed the accuracy guard
          (tests/test_precision_accuracy.py) on every seed it was measured on: CUDA -> fp16;
          a CPU with bfloat16 matrix instructions (AVX-512 BF16, AMX) -> bf16; a CPU with int8
          dot products only (AVX-VNNI, AVX-512 VNNI) would be int8, but int8 failed the guard on
          fresh seeds (precision_guard.json beside this module, written by
          bench/precision_seeds.py), so that CPU gets fp32; anything else (MPS, older CPUs) -> fp32.
          A mode the record says failed is never picked, whatever the CPU offers.

int8 uses torch.ao.quantization.quantize_dynamic, which torch marks deprecated (its notice says
"removed in 2.10"; torch 2.14 still has it and its fbgemm / x86 kernels). torch itself offers no
maintained replacement: the notice points to torchao, a separate package whose releases are
built against particular torch versions (a torch upgrade would also need a matching torchao),
for a mode that `auto` does not pick (it failed the accuracy guard) and that a user asks for by name, and torchao 0.18's eager
`quantize_(Int8DynamicActivationInt8WeightConfig())` is slower on the CPU: on the tower's MLP
shape, 1 thread of the AMD EPYC, torch.ao ran 3.4x faster than fp32 and torchao 1.9x
(`bench/int8_backends.py`, same run; torchao installed in a scratch folder). So it is kept: when torch drops
it, int8_available() turns False, `int8` is refused with a message and `auto` falls back to
fp32; pyproject.toml bounds torch below 3.

On the 2-core AMD EPYC (AVX-512 BF16 and VNNI) this project is developed on, bf16 is the fastest
of the CPU modes (docs/performance.md has the figures, `bench/ocr_throughput.py
--compare-official` measures them).
"""
from __future__ import annotations

import contextlib
import functools
import json
import logging
import warnings
from pathlib import Path

import torch
from torch import nn

from app.errors import UserError
from app.models.device import cpu_features
from app.ocr import PRECISIONS

log = logging.getLogger(__name__)

__all__ = ["PRECISIONS", "apply_precision", "auto_precision", "autocast", "resolve_precision"]
LABELS = {"fp32": "FP32", "bf16": "BF16", "fp16": "FP16", "int8": "INT8"}
INT8_CPU_FEATURES = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})
BF16_CPU_FEATURES = frozenset({"avx512_bf16", "amx_bf16"})
GUARD_RECORD = Path(__file__).with_name("precision_guard.json")


@functools.cache
def guard_failures(path: Path = GUARD_RECORD) -> frozenset[str]:
    """The modes the recorded accuracy guard says failed on at least one seed (never fp32, the
    reference). A missing or unreadable record fails every mode but fp32: Auto stays exact."""
    try:
        modes = json.loads(path.read_text(encoding="utf-8"))["modes"]
        return frozenset(m for m, v in modes.items() if m != "fp32" and not v["passed"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        log.warning("the precision guard's record %s cannot be read: auto uses fp32", path)
        return frozenset(m for m in PRECISIONS if m not in ("fp32", "auto"))


def auto_candidates(device: torch.device, features: frozenset[str]) -> list[str]:
    """The modes the device runs fast, fastest first, before the guard's record is consulted."""
    if device.type == "cuda":
        return ["fp16", "fp32"]
    if device.type != "cpu":
        return ["fp32"]
    out = []
    if features & BF16_CPU_FEATURES:
        out.append("bf16")
    if features & INT8_CPU_FEATURES and int8_available():
        out.append("int8")
    return [*out, "fp32"]


def auto_precision(device: torch.device, features: frozenset[str] | None = None,
                   failed: frozenset[str] | None = None) -> str:
    """The mode `auto` picks on `device`: the fastest it runs that the accuracy guard's record
    (`failed`: guard_failures() by default) does not say failed (the module docstring says why)."""
    features = (cpu_features() if features is None else features) if device.type == "cpu" else frozenset()
    failed = guard_failures() if failed is None else failed
    return next(m for m in auto_candidates(device, features) if m == "fp32" or m not in failed)


def int8_available() -> bool:
    """PyTorch's dynamic quantization with the x86 / fbgemm kernels is present."""
    try:
        from torch.ao.quantization import quantize_dynamic  # noqa: F401
    except ImportError:
        return False
    return bool({"x86", "fbgemm"} & set(torch.backends.quantized.supported_engines))


def resolve_precision(name: str, device: torch.device) -> str:
    """A precision name (auto included) -> the concrete mode for `device`; UserError when the
    name is unknown or the mode cannot run there."""
    name = (name or "auto").lower()
    if name not in PRECISIONS:
        raise UserError(f"unknown precision {name!r}: use one of {', '.join(PRECISIONS)}")
    if name == "auto":
        return auto_precision(device)
    if name == "int8" and device.type != "cpu":
        raise UserError("int8 runs on the CPU only (dynamic quantization); on a GPU use fp16 or bf16")
    if name == "int8" and not int8_available():
        raise UserError("int8 needs PyTorch's x86 / fbgemm quantized kernels, which this PyTorch build "
                        "lacks; use bf16 or fp32")
    return name


def _int8_targets(model: nn.Module) -> set[str]:
    """Names of the Linear layers to quantize: those of the vision tower's encoder layers (the
    patch embedding stays: the SigLIP2 tower reads its weight dtype directly)."""
    return {name for name, m in model.named_modules()
            if isinstance(m, nn.Linear) and name.startswith("vision_encoder.encoder.")}


def apply_precision(model: nn.Module, precision: str) -> nn.Module:
    """Convert a float32 model (on its device) for `precision`; returns the model to use."""
    if precision == "bf16":
        return model.to(torch.bfloat16)
    if precision == "int8":
        from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

        engines = torch.backends.quantized.supported_engines
        if torch.backends.quantized.engine not in ("x86", "fbgemm"):
            torch.backends.quantized.engine = "x86" if "x86" in engines else "fbgemm"
        spec = dict.fromkeys(_int8_targets(model), per_channel_dynamic_qconfig)
        with warnings.catch_warnings():  # torch.ao's deprecation notices (why it is kept: the module docstring)
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", UserWarning)
            model = quantize_dynamic(model, spec, dtype=torch.qint8, inplace=True)
        model.vision_per_crop = True  # one activation scale per crop: results independent of the batch
        return model
    return model


def autocast(precision: str, device: torch.device):
    """The context a forward pass runs in: float16 autocast for fp16, nothing otherwise."""
    if precision == "fp16":
        return torch.autocast(device.type, dtype=torch.float16)
    return contextlib.nullcontext()


def cpu_precision_after_fallback(requested: str) -> str:
    """What the CPU runs when an accelerator gives up: the user's explicit CPU-capable choice,
    else the CPU's auto pick (fp16 is the GPU's mode)."""
    return requested if requested in ("fp32", "bf16", "int8") else auto_precision(torch.device("cpu"))


def convert_precision(model: nn.Module, current: str, wanted: str) -> nn.Module:
    """Re-convert a model already set up for `current` (fp32 / bf16 / fp16 weights are float;
    int8 cannot be undone) to `wanted`."""
    if wanted == current:
        return model
    if current == "int8":
        raise ValueError("an int8 model cannot be converted back; load it again")
    if current == "bf16":
        model = model.float()
    return apply_precision(model, wanted)


MIXED_MIN_WIDTH = 512  # "auto" uses bf16 for models at least this wide (d_model or d_vision)


def mixed_precision(setting: str, device: torch.device, width: int = MIXED_MIN_WIDTH) -> torch.dtype | None:
    """The autocast dtype adapting the OCR (app.ocr.adapt) runs in (None: float32): bf16 where `setting` asks for it, or
    for "auto" where the device computes bf16 natively and the model is `width` >= MIXED_MIN_WIDTH
    wide (the weights and the adapters stay float32; the recognizer reads in its own precision
    afterwards). Measured on a 2-core AVX-512 BF16 CPU (bench/adapt.py, docs/accuracy.md): the
    real-size Nova's features and training steps 1.7-2x as fast, the same CER on the demo model,
    whose width-128 matrices are too small for bf16 to pay (1.5x slower)."""
    if setting == "off":
        return None
    if setting == "bf16":
        return torch.bfloat16
    if setting != "auto":
        raise UserError(f"unknown mixed precision {setting!r}: use auto, bf16 or off")
    if width < MIXED_MIN_WIDTH:
        return None
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else None
    if device.type == "cpu":
        return torch.bfloat16 if cpu_features() & BF16_CPU_FEATURES else None
    return None
