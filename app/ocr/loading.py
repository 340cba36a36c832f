"""Checkpoint folder -> HayaiModel on a device (docs/ocr-engine.md, the checkpoint). safetensors only: an OCR
checkpoint is never unpickled.

Policy: every parameter the model needs must be present with the right shape (else ModelError
naming the key and the file); the known extras (the vision tower's pooling `head.*`, the v2.5
`decoder.ids_*` head) are ignored; anything else unexpected is reported as a warning.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

import torch

from app.errors import ModelError
from app.ocr.config import HayaiConfig, make_config, read_config_json
from app.ocr.model import HayaiModel

log = logging.getLogger(__name__)

WEIGHTS = "model.safetensors"
_VISION_PREFIXES = ("vision_encoder.vision_model.", "vision_encoder.")
_IGNORED = re.compile(r"^(vision_encoder\.(vision_model\.)?head\.|decoder\.ids_)")


@dataclass
class LoadReport:
    ignored: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)


def canonical_key(key: str) -> str:
    """Checkpoint name -> module name: both vision-tower prefixes map to `vision_encoder.`."""
    for prefix in _VISION_PREFIXES:
        if key.startswith(prefix):
            return "vision_encoder." + key[len(prefix):]
    return key


def _redownload_hint(folder: Path) -> str:
    return (f"Re-download it (`hayai-desktop models download nova`) or choose another model folder "
            f"than {folder}.")


def read_checkpoint(folder: Path) -> tuple[dict[str, torch.Tensor], Path]:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    path = Path(folder) / WEIGHTS
    if not path.is_file():
        raise ModelError(f"{path}: the model weights are missing. {_redownload_hint(Path(folder))}")
    try:
        return load_file(str(path)), path
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise ModelError(f"{path}: the weights file is damaged or incomplete ({exc}). "
                         f"{_redownload_hint(Path(folder))}") from None


def build_model(cfg: HayaiConfig, state: dict[str, torch.Tensor], source: Path) -> tuple[HayaiModel, LoadReport]:
    """Check names and shapes against the modules, then load (no random init is ever computed)."""
    with torch.device("meta"):
        model = HayaiModel(cfg)
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    report = LoadReport()
    weights: dict[str, torch.Tensor] = {}
    for key, tensor in state.items():
        name = canonical_key(key)
        if _IGNORED.match(key):
            report.ignored.append(key)
        elif name not in expected:
            report.unexpected.append(key)
        else:
            weights[name] = tensor
    for name, shape in expected.items():
        if name not in weights:
            raise ModelError(f"{source}: missing parameter {name!r} (a {cfg.variant} checkpoint needs it). "
                             f"{_redownload_hint(source.parent)}")
        if tuple(weights[name].shape) != shape:
            raise ModelError(f"{source}: parameter {name!r} has shape {tuple(weights[name].shape)}, expected "
                             f"{shape} for a {cfg.variant} model with this config.json. The checkpoint and "
                             f"its config.json do not belong together. {_redownload_hint(source.parent)}")
    if report.unexpected:
        log.warning("%s: %d unexpected key(s) ignored: %s", source, len(report.unexpected),
                    ", ".join(report.unexpected[:5]))
    model.load_state_dict({k: v.float() for k, v in weights.items()}, strict=True, assign=True)
    return model.eval(), report


def load_model(folder, device: torch.device | str = "cpu") -> tuple[HayaiModel, LoadReport]:
    """A model folder in the published layout -> (model on device, load report)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ModelError(f"{folder}: no such model folder. Download a model with "
                         "`hayai-desktop models download nova` or pass --model DIR.")
    state, path = read_checkpoint(folder)
    cfg = make_config(read_config_json(folder / "config.json"), state.keys(), str(path))
    model, report = build_model(cfg, state, path)
    return model.to(device), report
