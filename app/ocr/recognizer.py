"""The facade the rest of the app uses: load_recognizer(...).recognize(images) -> [Recognition].

Crops are grouped by size (similar vision-prefix lengths decode together), decoded in batches
with padding masked, and returned in input order. The precision (app.ocr.precision) is chosen
at load time. Device failures (app.models.device policy): out of memory halves the batch; out of
memory on a single crop on a GPU moves the model to the CPU for the rest of the session, tells
`on_fallback` why and keeps reading; any other error surfaces as an error.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
from PIL import Image

from app.errors import Cancelled, ModelError, OutOfMemory
from app.models.device import (
    MoveFailed,
    describe_device,
    is_out_of_memory,
    move_module,
    release_memory,
    resolve_device,
)
from app.ocr import generate
from app.ocr.loading import load_model
from app.ocr.precision import (
    LABELS,
    apply_precision,
    autocast,
    convert_precision,
    cpu_precision_after_fallback,
    resolve_precision,
)
from app.ocr.preprocess import preprocess, target_size
from app.ocr.tokenizer import load_tokenizer

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]  # (crops done, crops total)
DEFAULT_BATCH = {"cpu": 16, "cuda": 32, "mps": 16}  # crops decoded together (bench/ocr_throughput.py)


@dataclass(frozen=True)
class Recognition:
    text: str
    tokens: list[int] = field(default_factory=list)  # generated ids, specials removed
    patches: int = 0  # patch budget used


class Recognizer:
    """model: a HayaiModel set up for `precision` on `device`; requested_precision: what the
    user asked for (auto included), used again when the model has to move to the CPU.
    fallback_reason: why it runs on the CPU although another device was asked for ("" if not);
    on_fallback(reason) is called when that happens during recognition."""

    def __init__(self, model, tokenizer, device: torch.device, name: str, folder: Path | None = None,
                 precision: str = "fp32", requested_precision: str | None = None):
        self.model = model
        self._base_tokenizer = tokenizer
        self._adapted_tokenizer = None
        self._device = device
        self.base_name = name
        self.adapter = None  # app.ocr.adapter.Adapter on the model, or None
        self.adapted = False  # the adapter is switched on
        self.folder = folder
        self.variant = model.cfg.variant
        self.precision = precision
        self.requested_precision = requested_precision or precision
        self.fallback_reason = ""
        self.on_fallback: Callable[[str], None] | None = None

    @property
    def tokenizer(self):
        return self._adapted_tokenizer if self.adapted else self._base_tokenizer

    @property
    def name(self) -> str:
        """The model's name, and what it is adapted to while the adapter is on (blocks record it)."""
        if self.adapted and self.adapter is not None:
            return f"{self.base_name} + adapted to {self.adapter.name or 'corrections'}"
        return self.base_name

    def use_adapter(self, adapter) -> None:
        """Put an adapter (app.ocr.adapter.Adapter) on the model and switch it on. ModelError when it
        was made for another base model, or when one is on already."""
        from app.ocr import adapter as adapters

        if self.adapter is not None:
            raise ModelError(f"{self.base_name} already has an adapter on; load the model again to use another")
        if self.folder is None:
            raise ModelError("this model has no folder, so its identity cannot be checked against the adapter")
        adapter.check_base(adapters.model_sha256(self.folder), self.base_name)
        self._adapted_tokenizer = adapters.load_into(self.model, self._base_tokenizer, adapter)
        self.adapter = adapter
        self.adapted = True

    def set_adapted(self, on: bool) -> None:
        """Switch the adapter on or off (off: the base model exactly)."""
        from app.ocr.adapter import set_adapters_enabled

        if self.adapter is None:
            self.adapted = False
            return
        set_adapters_enabled(self.model, on)
        self.adapted = bool(on)

    @property
    def device(self) -> str:
        return self._device.type

    @property
    def device_label(self) -> str:
        return describe_device(self._device)

    @property
    def precision_label(self) -> str:
        return LABELS.get(self.precision, self.precision)

    @property
    def stop_ids(self) -> tuple[int, ...]:
        return tuple(sorted({self.tokenizer.eos_id, self.tokenizer.pad_id}))

    def default_batch_size(self) -> int:
        return DEFAULT_BATCH.get(self._device.type, 16)

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
            ids, oom = self._decode_or_oom([images[i] for i in chunk], max_num_patches, max_new_tokens,
                                           repetition_penalty, num_beams, length_penalty, cancel)
            if ids is None:
                size = self._after_oom(oom, size, max_num_patches)
                continue
            for i, tokens in zip(chunk, ids):
                results[i] = Recognition(self.tokenizer.decode(tokens), tokens, max_num_patches)
            start += len(chunk)
            done += len(chunk)
            if progress is not None:
                progress(done, total)
        return results  # type: ignore[return-value]

    def _decode_or_oom(self, *args) -> tuple[list[list[int]] | None, str]:
        """(ids, "") or, on out of memory, (None, the error's first line). Other errors raise. The
        exception object is not kept: its traceback pins the failed batch's tensors."""
        try:
            return self._decode(*args), ""
        except (RuntimeError, torch.OutOfMemoryError) as exc:
            if not is_out_of_memory(exc):
                raise
            return None, (str(exc).strip().splitlines() or [type(exc).__name__])[0]

    def _after_oom(self, message: str, size: int, patches: int) -> int:
        """After an out-of-memory batch (outside the except block): the next batch size."""
        release_memory(self._device)
        if size > 1:
            log.warning("%s out of memory with %d crops at once, retrying with %d (%s)",
                        self.device_label, size, size // 2, message)
            return size // 2
        if self._device.type == "cpu":
            raise OutOfMemory(f"Not enough memory to read even one crop at {patches} patches on the CPU "
                              f"({message}). Close other programs or choose a smaller patch budget.")
        self.fall_back_to_cpu(f"{self.device_label} ran out of memory on a single crop at {patches} patches "
                              f"({message})")
        return self.default_batch_size()

    def fall_back_to_cpu(self, reason: str) -> None:
        """Move the model to the CPU for the rest of the session (a GPU failed) and say why."""
        if self._device.type == "cpu":
            return
        old = self._device
        self.model.to("cpu")
        self._device = torch.device("cpu")
        release_memory(old)
        wanted = cpu_precision_after_fallback(self.requested_precision)
        self.model = convert_precision(self.model, self.precision, wanted)
        self.precision = wanted
        self.fallback_reason = reason
        log.warning("OCR model moved to the CPU (%s): %s", self.precision_label, reason)
        if self.on_fallback is not None:
            self.on_fallback(reason)

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
        with autocast(self.precision, self._device):
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


def load_recognizer(path_or_name="nova", device: str = "auto", precision: str = "auto",
                    adapter=None) -> Recognizer:
    """Load a Hayai checkpoint folder (or a model-store name) onto a device, in a precision
    (app.ocr.precision.PRECISIONS; "auto" picks per device), with an adapter (app.ocr.adapt: an
    Adapter or its file) when given. A model that does not fit on the
    device it was sent to is moved back whole and runs on the CPU (`fallback_reason` says why)."""
    folder = resolve_model_path(path_or_name)
    target = resolve_device(device)
    mode = resolve_precision(precision, target)  # checked before the load: a bad choice fails fast
    model, _ = load_model(folder, "cpu")
    tokenizer = load_tokenizer(folder, model.cfg.byte_tokenizer)
    if tokenizer.vocab_size > model.cfg.vocab_size:
        raise ModelError(f"{folder}: tokenizer.json has {tokenizer.vocab_size} ids but the model only "
                         f"{model.cfg.vocab_size}: the tokenizer does not belong to this checkpoint.")
    current = "fp32"
    if mode == "bf16":  # convert before a move: half the bytes cross to the device
        model, current = apply_precision(model, "bf16"), "bf16"
    reason = ""
    if target.type != "cpu":
        try:
            move_module(model, target)
        except MoveFailed as exc:
            reason = str(exc)
            log.warning("%s; using the CPU", reason)
            target = torch.device("cpu")
            mode = cpu_precision_after_fallback(precision)
    model = convert_precision(model, current, mode)
    rec = Recognizer(model, tokenizer, target, name=folder.name, folder=folder, precision=mode,
                     requested_precision=precision)
    rec.fallback_reason = reason
    if adapter:
        from app.ocr.adapter import Adapter

        rec.use_adapter(adapter if isinstance(adapter, Adapter) else Adapter.load(adapter))
    return rec
