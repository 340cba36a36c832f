"""Tiny random-weight Hayai checkpoints in the published layout, for tests and examples.

    write_tiny_checkpoint(folder, variant="nova", seed=0) -> folder

Sizes are small (d_model 32, 2 decoder and 2 vision layers) so a checkpoint loads and reads a
crop in milliseconds; the layout, names and loader are those of the published models.
"""
from __future__ import annotations

import math
from pathlib import Path

import torch

from app.ocr.checkpoint import save_checkpoint, write_char_tokenizer
from app.ocr.config import HayaiConfig
from app.ocr.model import HayaiModel

# Printable ASCII and hiragana: 94 + 86 = 180 regular characters (+ 4 specials = 184 ids).
TINY_CHARS = [chr(c) for c in range(0x21, 0x7F)] + [chr(c) for c in range(0x3041, 0x3097)]

TINY_SIZES = dict(d_model=32, d_vision=32, d_ffn=64, n_layers=2, n_heads=2, n_kv_heads=1, head_dim=16,
                  vision_layers=2, vision_heads=2, vision_intermediate=64, vision_position_grid=16)


def tiny_config(variant: str = "nova", **overrides) -> HayaiConfig:
    vocab = 260 if variant == "alpha" else len(TINY_CHARS) + 4
    values = dict(TINY_SIZES, vocab_size=vocab, tied_head=(variant == "alpha"))
    values.update(overrides)
    return HayaiConfig(variant=variant, **values)


def random_model(cfg: HayaiConfig, seed: int = 0) -> HayaiModel:
    """Random weights that make greedy outputs vary (unit-scale embeddings and head)."""
    torch.manual_seed(seed)
    model = HayaiModel(cfg)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("token_embeddings.weight") or name.endswith("output_head.weight"):
                p.copy_(torch.randn(p.shape, generator=g))
            elif name.endswith("final_norm.weight"):  # zero-mean: a tied head then varies its argmax
                p.copy_(torch.randn(p.shape, generator=g))
            elif p.dim() == 1:
                base = 0.0 if name.endswith("bias") else 1.0
                p.copy_(base + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(p.shape[-1]))
    return model.eval()


def write_tiny_checkpoint(folder, variant: str = "nova", seed: int = 0,
                          vision_prefix: str = "vision_encoder.vision_model.", **overrides) -> Path:
    folder = Path(folder)
    cfg = tiny_config(variant, **overrides)
    model = random_model(cfg, seed)
    extras = {vision_prefix + "head.probe": torch.zeros(1, 1, cfg.d_vision)}
    if variant == "nova":
        extras["decoder.ids_head.weight"] = torch.zeros(8, cfg.d_model)
    save_checkpoint(model, folder, vision_prefix, extras)
    if variant != "alpha":
        write_char_tokenizer(folder, TINY_CHARS)
    return folder
