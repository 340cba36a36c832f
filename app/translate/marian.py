"""The offline backend: a MarianMT model (Helsinki-NLP opus-mt-ja-en, -ko-en, -zh-en) run by
transformers on the CPU or a GPU.

The model comes from the model store (app.models: manifest kind "translation", downloaded and
verified like the OCR models) or from a folder the user picked; it loads from safetensors only
(`use_safetensors=True`, no network, never remote code: MarianMTModel is transformers' own
class). Segments are translated in batches of `batch_size`, longest first (less padding), and
returned by id; `cancel()` is checked between batches and between decoding steps. MarianMT
translates sentence by sentence: it sees neither the context pages nor the glossary.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

from app.errors import Cancelled, ModelError
from app.textfile import read_json_file
from app.translate.base import (
    CancelFn,
    ContextPage,
    GlossaryEntry,
    PageResult,
    Segment,
    TranslationError,
    TranslatorSettings,
)
from app.translate.languages import marian_model_for

log = logging.getLogger(__name__)
WEIGHTS = "model.safetensors"
NEEDED = ("config.json", "source.spm", "target.spm", "vocab.json", WEIGHTS)


def model_spec(settings: TranslatorSettings) -> str:
    """The model to load: settings.model, else the store's model for the language pair."""
    if settings.model:
        return settings.model
    name = marian_model_for(settings.source_lang or "ja", settings.target_lang)
    if name is None:
        raise TranslationError(f"No offline model for {settings.source_lang or '?'} -> {settings.target_lang}: the "
                               "offline backend has Japanese, Korean and Chinese to English. Choose --from ja|ko|zh "
                               "--to en, or another backend.", fatal=True)
    return name


def check_folder(folder: Path) -> None:
    """A MarianMT folder in the Hub layout with safetensors weights, or ModelError saying what is wrong."""
    missing = [n for n in NEEDED if not (folder / n).is_file()]
    if missing:
        pickle = " (it has pytorch_model.bin, a pickle this app does not load)" if (
            folder / "pytorch_model.bin").is_file() else ""
        raise ModelError(f"{folder}: not a MarianMT model folder this app can load: missing {', '.join(missing)}"
                         f"{pickle}.")
    config = read_json_file(folder / "config.json", "MarianMT model configuration", "Download the model again.",
                            ModelError)
    if not isinstance(config, dict):
        raise ModelError(f"{folder / 'config.json'}: not a model configuration (a JSON object). "
                         "Download the model again.")
    if config.get("model_type") != "marian":
        raise ModelError(f"{folder}: config.json says model_type {config.get('model_type')!r}, not 'marian'.")


class MarianTranslator:
    def __init__(self, folder: str | os.PathLike, settings: TranslatorSettings, name: str | None = None):
        import torch
        from transformers import MarianMTModel, MarianTokenizer

        from app.models.device import resolve_device

        folder = Path(folder)
        check_folder(folder)
        self.settings = settings
        self.device = resolve_device(settings.device)
        self.name = name or folder.name
        try:
            self.tokenizer = MarianTokenizer.from_pretrained(str(folder), local_files_only=True)
            self.model = MarianMTModel.from_pretrained(str(folder), use_safetensors=True, local_files_only=True)
        except (OSError, ValueError, RuntimeError) as exc:
            raise ModelError(f"{folder}: the MarianMT model could not be loaded ({exc}).") from exc
        self.model.eval().to(self.device)
        self._torch = torch
        self.batches = 0  # forward passes run (for the benchmark)

    def translate_page(self, segments: Sequence[Segment], context: Sequence[ContextPage] = (),
                       glossary: Sequence[GlossaryEntry] = (), cancel: CancelFn | None = None,
                       page_name: str = "", on_tokens=None, memory=None, examples=(),
                       page_image=None) -> PageResult:
        texts = self.translate_texts([s.text for s in segments], cancel)
        out = {seg.id: t for seg, t in zip(segments, texts, strict=True) if t}
        return PageResult(out, tuple(s.id for s in segments if s.id not in out),
                          requests=-(-len(segments) // max(1, self.settings.batch_size)))

    def translate_texts(self, texts: Sequence[str], cancel: CancelFn | None = None) -> list[str]:
        """Translations of `texts` in input order (batched longest first)."""
        from transformers import StoppingCriteria, StoppingCriteriaList

        class _Stop(StoppingCriteria):
            def __call__(self, input_ids, scores, **kwargs):
                return cancel is not None and cancel()

        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out: list[str] = [""] * len(texts)
        step = max(1, self.settings.batch_size)
        for start in range(0, len(order), step):
            if cancel is not None and cancel():
                raise Cancelled("cancelled")
            chunk = order[start:start + step]
            batch = self.tokenizer([texts[i] for i in chunk], return_tensors="pt", padding=True, truncation=True,
                                   max_length=256).to(self.device)
            pad = self.tokenizer.pad_token_id
            with self._torch.inference_mode():
                longest = int(batch["input_ids"].shape[1])  # translations rarely run past 3x the source
                generated = self.model.generate(**batch, num_beams=1, do_sample=False,
                                                max_new_tokens=min(256, 3 * longest + 8),
                                                bad_words_ids=[[pad]], stopping_criteria=StoppingCriteriaList([_Stop()]))
            self.batches += 1
            if cancel is not None and cancel():
                raise Cancelled("cancelled")
            for i, text in zip(chunk, self.tokenizer.batch_decode(generated, skip_special_tokens=True), strict=True):
                out[i] = text.strip()
        return out

    def close(self) -> None:
        self.model = None


def load_marian(settings: TranslatorSettings, *, trust_unpinned: bool = False) -> MarianTranslator:
    """The offline translator of `settings` (model-store name or folder; see model_spec)."""
    from app.models.store import resolve_model

    spec = model_spec(settings)
    folder = resolve_model(spec, trust_unpinned=trust_unpinned)
    return MarianTranslator(folder, settings, name=Path(spec).name if os.sep in spec else spec)
