"""Answers that are not translations although they are in the target language: "looks
degenerate" (docs/translation.md). A small or overloaded model answers "The" for every block,
or one sentence for many different lines; each answer alone looks like English, so only the
answers taken together, and against their sources, tell. Three signs:

- one word for a sentence: the source weighs SENTENCE or more and the answer is one word with
  fewer letters than the source has characters (a long word, an interjection drawn out or a
  romanized line, is not this sign);
- far shorter than its source: the source weighs SHORTER or more and the answer less than
  SHORT_RATIO of it;
- one text for many different sources: REPEATS or more different sources, each weighing
  REPEAT_SOURCE or more, got the same answer in one run (this page's answers and those
  accepted on earlier pages of the run); or, whatever their weight, MANY or more different
  sources got the same answer and it is MANY_SHARE or more of the run's answers so far (a
  page of short bubbles all answered "The"; "Yes" for はい, うん and ええ stays a few of many).

A text's weight counts a CJK or Hangul character as one and any other letter as a third (a
Japanese line of 12 characters reads as some 30-40 English letters); punctuation, digits and
spaces weigh nothing. Short lines ("はい" -> "Yes" three times) never count.

`RunJudge` holds one run's accepted answers; the translation stage (app.core.translation.run)
asks it about each page's answers, for every backend. No Qt, no app.core."""
from __future__ import annotations

import re
from collections.abc import Mapping

SENTENCE = 16.0
SHORTER = 12.0
SHORT_RATIO = 0.12
REPEAT_SOURCE = 8.0
REPEATS = 3
MANY = 5
MANY_SHARE = 0.5
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")


def _wide(ch: str) -> bool:
    o = ord(ch)
    return 0x2E80 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x2FFFF \
        or 0xFF66 <= o <= 0xFF9F


def weight(text: str) -> float:
    """The text's length in reading weight (see the module doc)."""
    return sum(1.0 if _wide(c) else 1 / 3 for c in text if c.isalpha())


def _key(text: str) -> str:
    """An answer or source compared as letters and digits only, case ignored."""
    return "".join(c for c in text.casefold() if c.isalnum())


def one_answer(source: str, answer: str) -> str | None:
    """Why `answer` alone cannot translate `source` (one word for a sentence, far shorter),
    None when it can."""
    ws, wa = weight(source), weight(answer)
    if ws >= SENTENCE and not any(_wide(c) for c in answer) and len(_WORD.findall(answer)) <= 1 and wa < ws / 3:
        return f"one word for a sentence of {len(''.join(source.split()))} characters"
    if ws >= SHORTER and wa < SHORT_RATIO * ws:
        return "far shorter than its source"
    return None


def repeated(pairs: Mapping[str, tuple[str, str]], history: Mapping[str, set[str]] | None = None,
             times: int = REPEATS) -> dict[str, str]:
    """id -> why, for the answers given to `times` or more different sources (see the module
    doc). `pairs`: id -> (source, answer); `history`: answer key -> source keys accepted before.
    The consistency check asks with times=2: for a person reviewing, two are worth a look."""
    groups: dict[str, set[str]] = {k: set(v) for k, v in (history or {}).items()}
    members: dict[str, list[str]] = {}
    for rid, (source, answer) in pairs.items():
        if weight(source) < REPEAT_SOURCE or not _key(answer):
            continue
        key = _key(answer)
        groups.setdefault(key, set()).add(_key(source))
        members.setdefault(key, []).append(rid)
    out = {}
    for key, rids in members.items():
        if len(groups[key]) >= times:
            for rid in rids:
                out[rid] = f"the same answer “{_shown(pairs[rids[0]][1])}” for {len(groups[key])} different lines"
    return out


def _shown(answer: str) -> str:
    return answer if len(answer) <= 40 else answer[:39] + "…"


class RunJudge:
    """One translation run's judge: the answers it accepted so far, by answer."""

    def __init__(self) -> None:
        self._sources: dict[str, dict[str, float]] = {}  # answer key -> source key -> its weight
        self._count: dict[str, int] = {}  # answer key -> accepted answers with it
        self._answers = 0  # accepted answers with letters

    def _most(self, pairs: Mapping[str, tuple[str, str]]) -> dict[str, str]:
        """The answers given to MANY different sources that make MANY_SHARE of the run's answers."""
        page: dict[str, list[str]] = {}
        sources: dict[str, set[str]] = {}
        for rid, (source, answer) in pairs.items():
            key = _key(answer)
            if key and _key(source):
                page.setdefault(key, []).append(rid)
                sources.setdefault(key, set(self._sources.get(key, ()))).add(_key(source))
        total = self._answers + sum(len(r) for r in page.values())
        out = {}
        for key, rids in page.items():
            share = (self._count.get(key, 0) + len(rids)) / total
            if len(sources[key]) >= MANY and share >= MANY_SHARE:
                why = f"the same answer “{_shown(pairs[rids[0]][1])}” for {len(sources[key])} different lines"
                out.update(dict.fromkeys(rids, why))
        return out

    def degenerate(self, pairs: Mapping[str, tuple[str, str]]) -> dict[str, str]:
        """id -> why the answer looks degenerate, for `pairs` (id -> (source, answer)), judged
        with the run's accepted answers."""
        out = {rid: why for rid, (source, answer) in pairs.items() if (why := one_answer(source, answer))}
        weighty = {key: {s for s, w in sources.items() if w >= REPEAT_SOURCE} for key, sources in self._sources.items()}
        for found in (repeated(pairs, weighty), self._most(pairs)):
            for rid, why in found.items():
                out.setdefault(rid, why)
        return out

    def accept(self, pairs: Mapping[str, tuple[str, str]]) -> None:
        """Answers taken as translations: later pages are judged with them."""
        for source, answer in pairs.values():
            key, source_key = _key(answer), _key(source)
            if key and source_key:
                sources = self._sources.setdefault(key, {})
                sources[source_key] = max(sources.get(source_key, 0.0), weight(source))
                self._count[key] = self._count.get(key, 0) + 1
                self._answers += 1
