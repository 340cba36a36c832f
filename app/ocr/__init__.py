"""Hayai OCR: a native PyTorch implementation of the Hayai model family (no remote code).

    from app.ocr import load_recognizer
    rec = load_recognizer("path/to/hayai-ocr-v2.5-nova", device="auto", precision="auto")
    rec.recognize([crop], max_num_patches=384)  # -> [Recognition(text, tokens, patches)]

Importing this package is cheap: torch and transformers load on first use.
"""
from __future__ import annotations

PRECISIONS = ("auto", "fp32", "bf16", "fp16", "int8")  # app.ocr.precision explains each


def load_recognizer(path_or_name="nova", device: str = "auto", precision: str = "auto", adapter=None):
    """adapter: an app.ocr.adapter.Adapter or its file (None: the model as published)."""
    from app.ocr.recognizer import load_recognizer as _load

    return _load(path_or_name, device, precision, adapter)


def __getattr__(name):
    if name in ("Recognizer", "Recognition"):
        from app.ocr import recognizer

        return getattr(recognizer, name)
    raise AttributeError(name)


__all__ = ["load_recognizer", "Recognizer", "Recognition", "PRECISIONS"]
