"""The model card's text normalization and metrics (docs/ocr-engine.md, measuring).

normalize: NFKC; runs of CR/LF/TAB -> one space; whitespace between two CJK characters removed;
whitespace runs -> one space; strip. CER = total edit distance / total reference characters;
exact match = share of normalized predictions equal to their normalized reference.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

_CJK = "\u4e00-\u9fff\u3040-\u30ff\u3400-\u4dbf\uac00-\ud7af"
_CONTROL_RUNS = re.compile(r"[\r\n\t]+")
_CJK_GAP = re.compile(rf"(?<=[{_CJK}])\s+(?=[{_CJK}])")
_SPACES = re.compile(r"\s+")


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = _CONTROL_RUNS.sub(" ", text)
    text = _CJK_GAP.sub("", text)
    text = _SPACES.sub(" ", text)
    return text.strip()


@dataclass(frozen=True)
class Score:
    cer: float  # total edits / total reference characters (0..)
    exact_match: float  # share of exact matches (0..1)
    count: int
    edits: int
    ref_chars: int


def score(predictions: list[str], references: list[str]) -> Score:
    """CER and exact match after normalization, as the model card reports them."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions for {len(references)} references")
    edits = chars = exact = 0
    for pred, ref in zip(predictions, references):
        p, r = normalize(pred), normalize(ref)
        edits += Levenshtein.distance(p, r)
        chars += len(r)
        exact += p == r
    n = len(references)
    return Score(cer=edits / chars if chars else 0.0, exact_match=exact / n if n else 0.0,
                 count=n, edits=edits, ref_chars=chars)
