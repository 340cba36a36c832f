"""What a teaching run looks at, and looking at it (no Qt): the crops, in the order the vision
tower sees them, and their features, taken from the feature cache where an earlier run or a look
ahead left them.

`crops_of` makes the crops of a run of app.ocr.adapt.adapt: the corrections and confirmations,
the held-out split by page, the clean crops of other texts drawn to rehearse plain print
(app.render.specimen), the varied copies (app.ocr.training_data.varied) and the crops joined from
two training corrections (app.ocr.training_data.joins), the held-out
corrections' copies too when the run trains again on every correction (`refit`); for the same samples,
texts and seed they are the same pixels. `looked_at` runs the frozen tower on them, 16 at a time,
through app.ocr.feature_cache. `look_ahead` does that before a teaching (the window, after a
save), so the teaching itself finds every crop looked at.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import torch
from PIL import Image

from app.errors import Cancelled
from app.ocr.adapt_steps import features as _features
from app.ocr.adapter import model_sha256
from app.ocr.feature_cache import FeatureCache, identity
from app.ocr.precision import mixed_precision
from app.ocr.text import normalize
from app.ocr.training_data import Sample, joins, shapes, split_by_page, varied

Progress = Callable[[str, int, int], None]  # (stage, done, total)
# (texts, vertical, seed, per_line) -> [(crop, text)]: the texts drawn as clean crops
# (app.render.specimen): text i in a column when vertical[i], per_line[i] characters a column
Specimens = Callable[[list[str], list[bool], int, list[int] | None], list[tuple[Image.Image, str]]]

WHOLE_BELOW_WIDTH = 512  # "auto" trains the decoder's own weights for models narrower than this
AUGMENT_SMALL = 2  # varied copies of each training correction that "auto" gives a model narrower than 512
JOIN_SMALL = 1  # crops joined from two training corrections, per training correction, that "auto" gives a
# model narrower than 512 (a real-size model none: each costs as much as a correction)
REFITS = ("auto", "on", "off")  # AdaptSettings.refit: "auto" trains again on every correction below WHOLE_BELOW_WIDTH


class CropSettings(Protocol):
    """What of app.ocr.adapt.AdaptSettings decides the crops and how they are looked at."""

    patches: int
    holdout: float
    seed: int
    rehearse: float
    shaped: bool
    augment: int | str
    join: float | str
    mixed: str
    refit: str


@dataclass
class Crops:
    """What a run looks at, in the order the tower sees it: the corrections, the confirmations,
    the drawn crops, the varied copies (`images`), with the split and the model's width."""

    corrections: list[Sample]
    confirmations: list[Sample]
    train_idx: list[int]
    held_idx: list[int]
    drawn: list[tuple[Image.Image, str]]
    variants: list[tuple[Image.Image, str]]
    width: int
    copies: int
    joined: int = 0  # of the variants, the last ones: crops joined from two training corrections
    refit: bool = False  # trained again on every correction once the held-out ones chose the epochs
    held_variants: list[tuple[Image.Image, str]] = field(default_factory=list)  # their copies, for that

    @property
    def images(self) -> list[Image.Image]:
        return ([x.image for x in self.corrections] + [x.image for x in self.confirmations]
                + [im for im, _ in self.drawn] + [im for im, _ in self.variants]
                + [im for im, _ in self.held_variants])


def crops_of(cfg, samples: list[Sample], s: CropSettings, specimens: Specimens | None,
             plain_texts: list[str] | None) -> Crops:
    """The crops a run with settings `s` looks at (the same pixels for the same samples, texts
    and seed: `look_ahead` relies on it)."""
    corrections = [x for x in samples if not x.confirmation and normalize(x.text)]
    confirmations = [x for x in samples if x.confirmation and normalize(x.text)]
    train_idx, held_idx = split_by_page(corrections, s.holdout, s.seed)
    width = max(cfg.d_model, getattr(cfg, "d_vision", 0))
    copies = s.augment if s.augment != "auto" else (AUGMENT_SMALL if width < WHOLE_BELOW_WIDTH else 0)

    drawn: list[tuple[Image.Image, str]] = []
    held_texts = {normalize(corrections[i].text) for i in held_idx}
    pool = [t for t in dict.fromkeys(plain_texts or []) if normalize(t) and normalize(t) not in held_texts]
    if specimens is not None and s.rehearse > 0 and train_idx and pool:
        rng = random.Random(s.seed)
        rng.shuffle(pool)
        texts = pool[:max(1, round(s.rehearse * len(train_idx)))]  # each text drawn once: none learned by heart
        if s.shaped:
            vertical, per_line = shapes([corrections[i] for i in train_idx], texts, random.Random(s.seed + 2))
        else:
            tall_share = sum(corrections[i].image.height > corrections[i].image.width for i in train_idx) / len(train_idx)
            vertical, per_line = [rng.random() < tall_share for _ in texts], None
        drawn = specimens(texts, vertical, s.seed, per_line)
    vrng = random.Random(s.seed + 1)
    variants = [(varied(corrections[i].image, vrng), corrections[i].text) for i in train_idx for _ in range(copies)]
    # the drawn crops trained on get as many copies: plain print keeps its share of the training (without
    # them two copies read the synthetic training faces 1.8 points worse on one seed of three)
    variants += [(varied(im, vrng), text) for k, (im, text) in enumerate(drawn) if k % 4 != 3 for _ in range(copies)]
    join = s.join if s.join != "auto" else (JOIN_SMALL if width < WHOLE_BELOW_WIDTH else 0)
    # two training corrections in one box (app.ocr.training_data.joins), after the copies: their own seed, so
    # the copies stay the pixels they were without them
    joined = joins([corrections[i] for i in train_idx], round(join * len(train_idx)), random.Random(s.seed + 4)) \
        if join else []
    variants += joined
    refit = s.refit == "on" or (s.refit == "auto" and width < WHOLE_BELOW_WIDTH)
    hrng = random.Random(s.seed + 3)  # its own: the copies above stay the pixels they were without it
    held_variants = [(varied(corrections[i].image, hrng), corrections[i].text) for i in held_idx
                     for _ in range(copies)] if refit else []
    return Crops(corrections, confirmations, train_idx, held_idx, drawn, variants, width, copies, len(joined), refit,
                 held_variants)


def looked_at(model, recognizer, images: list[Image.Image], patches: int, amp, cache, check,
              report, own: int) -> tuple[list[tuple[torch.Tensor, tuple]], int]:
    """The tower's features of `images`, in batches of 16, taken from and left in `cache` when
    there is one and the model has a weights file to be known by. Every crop is remembered: the
    corrections and confirmations, and the drawn crops and varied copies too, which come out the
    same pixels for the same corrections and seed (the key is the pixels, so a crop drawn
    differently is simply another crop). -> (the features, how many of the first `own` crops, the
    user's corrections and confirmations, were found there)."""
    ident = None
    if cache is not None and cache.enabled and recognizer.folder \
            and (Path(recognizer.folder) / "model.safetensors").is_file():
        ident = identity(model_sha256(recognizer.folder), patches, amp, model.device, next(model.parameters()).dtype)
    found: list = [None] * len(images)
    keys: list[str] = []
    if ident is not None:
        keys = [cache.key(ident, im) for im in images]
        for i, key in enumerate(keys):
            hit = cache.get(key)
            found[i] = (hit[0].to(model.device), hit[1]) if hit is not None else None  # kept on the CPU
    missing = [i for i, f in enumerate(found) if f is None]
    stored_dtype = amp or next(model.parameters()).dtype
    for j in range(0, len(missing), 16):
        check()
        idx = missing[j:j + 16]
        for i, (f, shape) in zip(idx, _features(model, [images[i] for i in idx], patches, amp=amp)):
            found[i] = (f, shape)
            if keys:
                cache.put(keys[i], f, shape, stored_dtype)
        report("features", len(images) - len(missing) + j + len(idx), len(images))
    if not missing:
        report("features", len(images), len(images))
    looked = set(missing)
    return found, sum(1 for i in range(min(own, len(images))) if keys and i not in looked)


def look_ahead(recognizer, samples: list[Sample], settings: CropSettings,
               specimens: Specimens | None = None, plain_texts: list[str] | None = None,
               feature_cache: FeatureCache | None = None, cancel: Callable[[], bool] | None = None,
               progress: Progress | None = None) -> int:
    """Look at the crops a run of app.ocr.adapt.adapt with these arguments would look at, now, and leave their
    features in `feature_cache`, so that the teaching itself finds them there (the window does it
    in the background after a save). -> how many crops were looked at now (0: all were there)."""
    s = settings
    if feature_cache is None or not feature_cache.enabled or getattr(recognizer, "adapter", None) is not None:
        return 0
    looked = crops_of(recognizer.model.cfg, samples, s, specimens, plain_texts)
    model = recognizer.model
    amp = mixed_precision(s.mixed, model.device, looked.width) if next(model.parameters()).dtype == torch.float32 \
        else None
    before = feature_cache.stored

    def check():
        if cancel is not None and cancel():
            raise Cancelled("looking ahead cancelled")

    with torch.no_grad():
        looked_at(model, recognizer, looked.images, s.patches, amp, feature_cache, check,
                   progress or (lambda *_: None), 0)
    return feature_cache.stored - before
