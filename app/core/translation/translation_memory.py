"""The translation memory: translations the user approved, with their source, reused.

A translation is approved when the user wrote it (`Block.translation_edited`: typed, imported,
or a machine one changed by hand) or accepted a machine one as it is (`Block.approved`: one key
in the GUI). The series file (app.core.translation.series) keeps them for every volume of a series.

- `exact(source)`: the approved translation of the same line (whitespace and line breaks
  ignored), or None. The translation stage fills such blocks without a request.
- `similar(source, limit)`: the closest other approved lines (rapidfuzz), best first, as
  (source, target, score 0..100): suggestions in the block panel, examples for the model.

Plain data, no Qt.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator

from rapidfuzz import fuzz, process

from app.core.document.types import Block, Page, Project

LABEL = "translation memory"  # the translator label of blocks filled from the memory
MIN_SCORE = 60.0  # below this a line is not offered as similar
MAX_PAIRS = 20000


def normalise(text: str) -> str:
    """The key of a source line: runs of whitespace as one space; none at all in text without
    Latin letters (a Japanese line broken differently by the OCR is the same line)."""
    words = text.split()
    if any("a" <= c.lower() <= "z" for c in text):
        return " ".join(words)
    return "".join(words)


class TranslationMemory:
    """Approved (source, target) pairs; the latest translation of a source wins."""

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()):
        self._by_key: dict[str, tuple[str, str]] = {}
        self.add_all(pairs)

    def __len__(self) -> int:
        return len(self._by_key)

    def add(self, source: str, target: str) -> bool:
        """Remember `target` as the translation of `source`; True when that changed anything."""
        key = normalise(source)
        target = target.strip()
        if not key or not target:
            return False
        old = self._by_key.pop(key, None)
        self._by_key[key] = (source.strip(), target)  # newest last
        while len(self._by_key) > MAX_PAIRS:
            self._by_key.pop(next(iter(self._by_key)))
        return old is None or old[1] != target

    def add_all(self, pairs: Iterable[tuple[str, str]]) -> int:
        return sum(self.add(s, t) for s, t in pairs)

    def pairs(self) -> list[tuple[str, str]]:
        return list(self._by_key.values())

    def exact(self, source: str) -> str | None:
        hit = self._by_key.get(normalise(source))
        return hit[1] if hit else None

    def similar(self, source: str, limit: int = 3, min_score: float = MIN_SCORE) -> list[tuple[str, str, float]]:
        """The closest approved lines other than `source` itself, best first."""
        key = normalise(source)
        if not key or not self._by_key:
            return []
        choices = {k: k for k in self._by_key if k != key}
        found = process.extract(key, choices, scorer=fuzz.ratio, limit=limit, score_cutoff=min_score)
        return [(*self._by_key[k], round(float(score), 1)) for _match, score, k in found]


def is_approved(block: Block) -> bool:
    """The block's translation is one the user approved (see the module doc)."""
    if not block.translation.strip() or not block.display_text.strip():
        return False
    return block.translation_edited or (block.approved and block.translation == block.machine_translation)


def approved_pairs(pages: Iterable[Page]) -> Iterator[tuple[str, str]]:
    for page in pages:
        for b in sorted(page.blocks, key=lambda b: b.order):
            if is_approved(b):
                yield b.display_text, b.translation


def memory_of(project: Project, base: Iterable[tuple[str, str]] = ()) -> TranslationMemory:
    """`base` (a series' pairs) and the project's own approved translations, the project's last."""
    tm = TranslationMemory(base)
    tm.add_all(approved_pairs(project.pages))
    return tm


def fill_page(page: Page, tm: TranslationMemory, block_ids: Iterable[str]) -> dict[str, str]:
    """Block id -> the memory's translation, for the blocks of `block_ids` whose source the
    memory has exactly."""
    wanted = set(block_ids)
    out = {}
    for b in page.blocks:
        if b.id in wanted:
            hit = tm.exact(b.display_text)
            if hit is not None:
                out[b.id] = hit
    return out


def examples_for(tm: TranslationMemory, texts: Iterable[str], limit: int = 6) -> list[tuple[str, str]]:
    """Close approved (source, target) pairs for a page's lines, for the model: the best one or
    two per line, `limit` in all."""
    out: list[tuple[str, str]] = []
    seen = set()
    for text in texts:
        for s, t, _score in tm.similar(text, limit=2):
            if (s, t) not in seen and len(out) < limit:
                seen.add((s, t))
                out.append((s, t))
    return out
