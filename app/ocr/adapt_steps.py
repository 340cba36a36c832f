"""The training steps of adapting (app.ocr.adapt) on the vision tower's cached features.

A crop is looked at once (`features`: the tower's rows the projector reads, kept as `Cached`
with its tokens and text); a step is then the projector and the decoder only (`loss`: cross
entropy over a batch, feature dropout on the cached rows in training), a reading is greedy from
the cached rows (`cer`). `trainable` picks what a run trains (the adapters, and the decoder's
own weights when whole) and `scale_adapters` sets the trained change to a share of itself (the
scale-back). Nothing here decides anything: app.ocr.adapt runs the epochs, the guard and the
report.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from PIL import Image
from torch import nn

from app.ocr import generate
from app.ocr.preprocess import preprocess
from app.ocr.teacher import IGNORE, forward_logits, text_batch
from app.ocr.text import score


def own(name: str) -> bool:
    """A base weight of the decoder (trained when `whole`), not an adapter's."""
    return not ("lora_" in name or name.endswith(".extra"))


def scale_adapters(params: list[tuple[str, nn.Parameter]], trained: dict[str, torch.Tensor], factor: float,
                    base: dict[str, torch.Tensor]) -> None:
    """Set the adapters to `factor` of their trained change: LoRA's B matrices (its change is
    B @ A, zero when B is) scaled, the decoder's own weights `factor` of the way from `base` to
    trained, the new characters' rows left as trained."""
    with torch.no_grad():
        for n, p in params:
            if n in base:
                p.copy_(base[n] + factor * (trained[n] - base[n]))
            else:
                p.copy_(trained[n] * factor if "lora_B" in n else trained[n])


def trainable(model, whole: bool) -> list[tuple[str, nn.Parameter]]:
    out = []
    for name, p in model.named_parameters():
        wanted = not own(name) or (whole and name.startswith("decoder."))
        p.requires_grad_(wanted)
        if wanted:
            out.append((name, p))
    return out


@dataclass
class Cached:
    feats: torch.Tensor  # (n, C): the tower's rows the projector reads
    shape: tuple[int, int]  # patch grid
    tokens: list[int]
    text: str


@torch.no_grad()
def features(model, images: list[Image.Image], patches: int, batch: int = 16,
              amp: torch.dtype | None = None) -> list[tuple[torch.Tensor, tuple]]:
    out = []
    mlp = model.cfg.projector != "dsc"
    for i in range(0, len(images), batch):
        pb = preprocess(images[i:i + batch], patches).to(model.device)
        with amp_context(model, amp):
            feats = generate.vision_features(model, pb).float()
        for b, (rows, cols) in enumerate(pb.spatial_shapes.tolist()):
            n = feats.shape[1] if mlp else rows * cols
            out.append((feats[b, :n].clone(), (rows, cols)))
    return out


def collate(items: list[Cached], device) -> tuple[torch.Tensor, torch.Tensor]:
    n = max(it.feats.shape[0] for it in items)
    feats = items[0].feats.new_zeros(len(items), n, items[0].feats.shape[1])
    for b, it in enumerate(items):
        feats[b, :it.feats.shape[0]] = it.feats
    shapes = torch.tensor([it.shape for it in items], dtype=torch.long, device=device)
    return feats, shapes


def amp_context(model, amp: torch.dtype | None):
    return torch.autocast(model.device.type, dtype=amp) if amp is not None else contextlib.nullcontext()


def loss(model, tok, items: list[Cached], amp: torch.dtype | None = None, dropout: float = 0.0) -> torch.Tensor:
    feats, shapes = collate(items, model.device)
    if dropout:  # training only: the held-out and check readings see the features as they are
        feats = F.dropout(feats, dropout, training=True)
    inputs, targets = text_batch([it.tokens for it in items], tok.bos_id, tok.eos_id, tok.pad_id, model.device)
    with amp_context(model, amp):
        prefix = generate.project_features(model, feats, shapes)
        logits = forward_logits(model, prefix, inputs)
    return F.cross_entropy(logits.float().flatten(0, 1), targets.flatten(), ignore_index=IGNORE)


@torch.no_grad()
def cer(model, tok, items: list[Cached], max_new_tokens: int, cancel=None, batch: int = 16,
         amp: torch.dtype | None = None) -> float:
    if not items:
        return 0.0
    stops = tuple(sorted({tok.eos_id, tok.pad_id}))
    preds = []
    for i in range(0, len(items), batch):
        chunk = items[i:i + batch]
        feats, shapes = collate(chunk, model.device)
        with amp_context(model, amp):
            prefix = generate.project_features(model, feats, shapes)
            found = generate.greedy_prefix(model, prefix, tok.bos_id, stops, max_new_tokens, cancel=cancel)
        preds += [tok.decode(ids) for ids in found]
    return score(preds, [it.text for it in items]).cer
