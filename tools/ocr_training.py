"""Teacher-forced training forward for Hayai models, plus data and evaluation helpers used by
tools/train_recognizer.py.

The training forward runs the same modules, RoPE angles and attention mask as the decode loop
in app/ocr/generate.py, over the whole sequence at once:

    cache positions  [vision 0..M-1 | BOS at M | t_1 at M+1 | ... | t_n at M+n]
    targets                          t_1         t_2            EOS

so the logits at text position s equal those greedy decoding computes at step s
(tests/test_demo_recognizer.py checks that the argmax matches greedy's tokens).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from PIL import Image

from app.ocr import generate
from app.ocr.model import HayaiModel, rope_frequencies
from app.ocr.preprocess import PixelBatch, preprocess
from app.ocr.text import score

IGNORE = -100  # target id that the loss skips (padding after EOS)


def encode_prefix_train(model: HayaiModel, batch: PixelBatch) -> generate.Prefix:
    """generate.encode_prefix with gradients: the same code, without its no_grad wrapper."""
    return generate.encode_prefix.__wrapped__(model, batch)


def text_batch(token_lists: list[list[int]], bos_id: int, eos_id: int, pad_id: int,
               device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids per crop -> (inputs (B, L), targets (B, L)), L = longest + 1.

    inputs = [BOS, t_1..t_n, PAD...]; targets = [t_1..t_n, EOS, IGNORE...].
    """
    L = max(len(t) for t in token_lists) + 1
    inputs = torch.full((len(token_lists), L), pad_id, dtype=torch.long)
    targets = torch.full((len(token_lists), L), IGNORE, dtype=torch.long)
    for b, toks in enumerate(token_lists):
        n = len(toks)
        inputs[b, 0] = bos_id
        inputs[b, 1:n + 1] = torch.tensor(toks, dtype=torch.long)
        targets[b, :n] = torch.tensor(toks, dtype=torch.long)
        targets[b, n] = eos_id
    return inputs.to(device), targets.to(device)


def forward_logits(model: HayaiModel, prefix: generate.Prefix, inputs: torch.Tensor) -> torch.Tensor:
    """Logits (B, L, V) float32 of every text position for inputs (B, L) = [BOS, t_1, ...].

    One pass over [prefix, text] with cache positions 0..M+L-1 and the decode loop's mask:
    vision tokens see the valid vision tokens, text sees valid vision tokens and text up to itself.
    """
    cfg = model.cfg
    B, M, _ = prefix.embeds.shape
    L = inputs.shape[1]
    device = prefix.embeds.device
    freqs = rope_frequencies(cfg, device)
    x = torch.cat((prefix.embeds, model.decoder.token_embeddings(inputs).to(prefix.embeds.dtype)), dim=1)
    text = generate._text_angles(torch.arange(L, device=device), freqs)[None].expand(B, -1, -1)
    angles = torch.cat((prefix.angles, text), dim=1)  # (B, M+L, E/2)
    key_valid = torch.cat((prefix.valid, torch.ones(B, L, dtype=torch.bool, device=device)), dim=1)
    mask = generate._attention_mask(key_valid, M, 0, M + L)  # (B, 1, M+L, M+L)
    cos, sin = angles.cos()[:, None], angles.sin()[:, None]  # (B, 1, M+L, E/2)
    S = M + L
    caches = [(x.new_zeros(B, cfg.n_kv_heads, S, cfg.head_dim), x.new_zeros(B, cfg.n_kv_heads, S, cfg.head_dim))
              for _ in range(cfg.n_layers)]
    h = model.decoder(x, cos, sin, mask, caches, 0)  # (B, M+L, D)
    return model.decoder.logits(h[:, M:])  # (B, L, V)


def loss_on_batch(model: HayaiModel, batch: PixelBatch, token_lists: list[list[int]], bos_id: int,
                  eos_id: int, pad_id: int, label_smoothing: float = 0.0) -> torch.Tensor:
    """Mean token cross-entropy (EOS included) of a batch of crops and their token ids."""
    prefix = encode_prefix_train(model, batch)
    inputs, targets = text_batch(token_lists, bos_id, eos_id, pad_id, prefix.embeds.device)
    logits = forward_logits(model, prefix, inputs)
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE,
                           label_smoothing=label_smoothing)


@dataclass
class Sample:
    image: Path
    text: str


def read_manifest(path: Path) -> list[Sample]:
    """A tools.synth crops manifest (JSONL {"image", "text"}) -> samples with absolute paths."""
    path = Path(path)
    samples = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            samples.append(Sample(path.parent / row["image"], row["text"]))
    return samples


def load_images(samples: list[Sample]) -> list[Image.Image]:
    images = []
    for s in samples:
        with Image.open(s.image) as im:
            images.append(im.convert("RGB"))
    return images


@torch.no_grad()
def evaluate(model: HayaiModel, tokenizer, images: list[Image.Image], texts: list[str], patches: int,
             batch_size: int = 32, max_new_tokens: int = 40) -> dict:
    """Greedy-decode the crops at a patch budget -> {"cer", "exact_match", "count"} (card normalization)."""
    was_training = model.training
    model.eval()
    stops = tuple(sorted({tokenizer.eos_id, tokenizer.pad_id}))
    preds = []
    for i in range(0, len(images), batch_size):
        batch = preprocess(images[i:i + batch_size], patches)
        for ids in generate.greedy(model, batch, tokenizer.bos_id, stops, max_new_tokens):
            preds.append(tokenizer.decode(ids))
    model.train(was_training)
    s = score(preds, texts)
    return {"patches": patches, "cer": round(s.cer, 5), "exact_match": round(s.exact_match, 5), "count": s.count}


def short_crop(rng, max_len: int | None = None) -> tuple[Image.Image, str]:
    """A cheap warm-up sample: 1..max_len characters of tools.synth text in one line or column
    (max_len drawn from 1, 2, 3, 6 when None: single glyphs teach the vision side fastest),
    drawn with the synth fonts on light paper with a little blur and noise -> (RGB crop, text).

    Small crops read at a small patch budget cost a fraction of a page crop: the model learns the
    glyphs on them first, then the layout of whole blocks on page crops.
    """
    import numpy as np
    from PIL import ImageFilter

    from tools.synth.fonts import find_faces
    from tools.synth.text import TextStyle, random_text, render

    faces = find_faces()
    if max_len is None:
        max_len = int(rng.choice([1, 2, 3, 6]))
    text = random_text(rng, 1, max_len)
    vertical = bool(rng.random() < 0.65)
    style = TextStyle(faces[int(rng.integers(len(faces)))], int(rng.integers(16, 40)),
                      advance=float(rng.uniform(1.0, 1.08)))
    mask = render([text], style, vertical)
    pad = [int(v) for v in rng.integers(2, 2 + style.size // 2, size=4)]
    w, h = mask.width + pad[0] + pad[2], mask.height + pad[1] + pad[3]
    paper, ink = float(rng.uniform(200, 255)), float(rng.uniform(0, 60))
    arr = np.full((h, w), paper, np.float32)
    m = np.asarray(mask, np.float32) / 255.0
    region = arr[pad[1]:pad[1] + mask.height, pad[0]:pad[0] + mask.width]
    arr[pad[1]:pad[1] + mask.height, pad[0]:pad[0] + mask.width] = region * (1 - m) + ink * m
    image = Image.fromarray(arr.clip(0, 255).astype(np.uint8), "L")
    if rng.random() < 0.3:
        image = image.filter(ImageFilter.GaussianBlur(float(rng.uniform(0.3, 0.9))))
    if rng.random() < 0.5:
        noisy = np.asarray(image, np.float32) + rng.normal(0, rng.uniform(1, 6), size=(h, w))
        image = Image.fromarray(noisy.clip(0, 255).astype(np.uint8), "L")
    return image.convert("RGB"), text
