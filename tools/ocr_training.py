"""The training loss of Hayai models (the teacher-forced forward is app.ocr.teacher's), plus
data and evaluation helpers used by tools/train_recognizer.py."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from PIL import Image

from app.ocr import generate
from app.ocr.model import HayaiModel
from app.ocr.preprocess import PixelBatch, preprocess
from app.ocr.teacher import IGNORE, forward_logits, text_batch
from app.ocr.text import score

__all__ = ["IGNORE", "forward_logits", "text_batch", "encode_prefix_train", "loss_on_batch"]


def encode_prefix_train(model: HayaiModel, batch: PixelBatch) -> generate.Prefix:
    """generate.encode_prefix with gradients: the same code, without its no_grad wrapper."""
    return generate.encode_prefix.__wrapped__(model, batch)


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
