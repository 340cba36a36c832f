"""The facade the rest of the app uses: load_recognizer(...).recognize(images) -> [Recognition].

Crops are grouped by size (similar vision-prefix lengths decode together), decoded in batches
with padding masked, and returned in input order. On CUDA: float16 autocast (norms and softmax
in float32), out-of-memory retried with smaller batches, then a fallback to the CPU.
"""
from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
from PIL import Image

from app.errors import Cancelled, ModelError
from app.models.device import describe_device, is_out_of_memory, resolve_device
from app.ocr import generate
from app.ocr.loading import load_model
from app.ocr.preprocess import preprocess, target_size
from app.ocr.tokenizer import load_tokenizer

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]  # (crops done, crops total)


@dataclass(frozen=True)
class Recognition:
    text: str
    tokens: list[int] = field(default_factory=list)  # generated ids, specials removed
    patches: int = 0  # patch budget used


class Recognizer:
    def __init__(self, model, tokenizer, device: torch.device, name: str, folder: Path | None = None):
        self.model = model
        self.tokenizer = tokenizer
        self._device = device
        self.name = name
        self.folder = folder
        self.variant = model.cfg.variant

    @property
    def device(self) -> str:
        return self._device.type

    @property
    def device_label(self) -> str:
        return describe_device(self._device)

    @property
    def stop_ids(self) -> tuple[int, ...]:
        return tuple(sorted({self.tokenizer.eos_id, self.tokenizer.pad_id}))

    def default_batch_size(self) -> int:
        return 32 if self._device.type == "cuda" else 8

    def recognize(self, images: list[Image.Image], max_num_patches: int = 384, max_new_tokens: int = 128,
                  batch_size: int | None = None, progress: Progress | None = None,
                  cancel: Callable[[], bool] | None = None, repetition_penalty: float = 1.0,
                  num_beams: int = 1, length_penalty: float = 1.0) -> list[Recognition]:
        """Read each crop. Results are in input order and do not depend on the batching."""
        total = len(images)
        results: list[Recognition | None] = [None] * total
        order = self._grouped_order(images, max_num_patches)
        size = max(1, batch_size or self.default_batch_size())
        done = 0
        start = 0
        while start < total:
            if cancel is not None and cancel():
                raise Cancelled("recognition cancelled")
            chunk = order[start:start + size]
            try:
                ids = self._decode([images[i] for i in chunk], max_num_patches, max_new_tokens,
                                   repetition_penalty, num_beams, length_penalty, cancel)
            except (RuntimeError, torch.OutOfMemoryError) as exc:
                size = self._recover(exc, size)
                continue
            for i, tokens in zip(chunk, ids):
                results[i] = Recognition(self.tokenizer.decode(tokens), tokens, max_num_patches)
            start += len(chunk)
            done += len(chunk)
            if progress is not None:
                progress(done, total)
        return results  # type: ignore[return-value]

    def _recover(self, exc: BaseException, size: int) -> int:
        """After a failed batch: smaller batches on CUDA, then the CPU. Re-raises otherwise."""
        if self._device.type != "cuda":
            raise exc
        if is_out_of_memory(exc) and size > 1:
            torch.cuda.empty_cache()
            log.warning("CUDA out of memory with batch %d, retrying with %d", size, size // 2)
            return size // 2
        log.warning("CUDA failed (%s); falling back to the CPU", exc)
        self.model = self.model.to("cpu")
        self._device = torch.device("cpu")
        return max(1, size)

    def _grouped_order(self, images, max_num_patches) -> list[int]:
        """Indices sorted by vision-prefix size, then aspect, so a batch pads little."""
        def key(i):
            w, h = images[i].size
            th, tw = target_size(h, w, max_num_patches)
            rows, cols = th // 16, tw // 16
            return (math.ceil(rows / 2) * math.ceil(cols / 2), rows * cols, round(w / max(h, 1), 2), i)

        return sorted(range(len(images)), key=key)

    def _decode(self, images, max_num_patches, max_new_tokens, repetition_penalty, num_beams,
                length_penalty, cancel) -> list[list[int]]:
        batch = preprocess(images, max_num_patches)
        autocast = (torch.autocast("cuda", dtype=torch.float16) if self._device.type == "cuda"
                    else contextlib.nullcontext())
        with autocast:
            if num_beams > 1:
                return generate.beam_search(self.model, batch, self.tokenizer.bos_id, self.stop_ids,
                                            max_new_tokens, num_beams, length_penalty, cancel)
            return generate.greedy(self.model, batch, self.tokenizer.bos_id, self.stop_ids, max_new_tokens,
                                   repetition_penalty, cancel)


def resolve_model_path(path_or_name) -> Path:
    """An existing folder, else a name in the model store (app.models.store: app dir, then HF cache)."""
    from app.models import store

    path = Path(store.resolve_model(path_or_name))
    if not path.is_dir():
        raise ModelError(f"{path}: an OCR model is a folder (config.json, model.safetensors, tokenizer.json), "
                         "not a file. Choose the folder, or download one: `hayai-desktop models download nova`.")
    return path


def load_recognizer(path_or_name="nova", device: str = "auto") -> Recognizer:
    """Load a Hayai checkpoint folder (or a model-store name) onto a device."""
    folder = resolve_model_path(path_or_name)
    target = resolve_device(device)
    model, _ = load_model(folder, "cpu")
    tokenizer = load_tokenizer(folder, model.cfg.byte_tokenizer)
    if tokenizer.vocab_size > model.cfg.vocab_size:
        raise ModelError(f"{folder}: tokenizer.json has {tokenizer.vocab_size} ids but the model only "
                         f"{model.cfg.vocab_size}: the tokenizer does not belong to this checkpoint.")
    if target.type != "cpu":
        try:
            model = model.to(target)
        except (RuntimeError, torch.OutOfMemoryError) as exc:
            log.warning("could not move the model to %s (%s); using the CPU", target, exc)
            target = torch.device("cpu")
    return Recognizer(model, tokenizer, target, name=folder.name, folder=folder)
