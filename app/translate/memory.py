"""The story memory: who the characters are (their names in the target language and how they
speak), the terms of the story, and a short summary of the story so far.

Per project (and per series, app.core.translation.series); sent with each page's request within a token
budget and updated from the model's answers: with each page the model may return proposed
additions (an optional `memory` object in the same JSON), which are merged here, never over
what the user set (`by_user`). Plain data, no Qt, no app.core.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from app.translate.base import GlossaryEntry

MAX_SUMMARY_CHARS = 1200
MAX_ITEMS = 200


@dataclass(frozen=True)
class Character:
    """source: the name as written in the source; target: in the target language; notes:
    gender, speech register, relations ("she, polite; calls Tanaka 'sensei'")."""

    source: str
    target: str = ""
    notes: str = ""
    by_user: bool = False  # set or edited by the user: the model's proposals never change it


@dataclass(frozen=True)
class Term:
    source: str
    target: str = ""
    notes: str = ""
    by_user: bool = False


@dataclass(frozen=True)
class StoryMemory:
    characters: tuple[Character, ...] = ()
    terms: tuple[Term, ...] = ()
    summary: str = ""
    summary_by_user: bool = False

    @property
    def empty(self) -> bool:
        return not (self.characters or self.terms or self.summary.strip())

    # -- merging -----------------------------------------------------------------------------
    def merged(self, proposed: StoryMemory | None) -> StoryMemory:
        """This memory with the model's `proposed` additions: new names and terms added, the
        model's own earlier entries updated, the user's never touched; the summary replaced by
        the new one unless the user wrote it."""
        if proposed is None or proposed.empty:
            return self
        chars = _merge(self.characters, proposed.characters)
        terms = _merge(self.terms, proposed.terms)
        summary = self.summary
        if proposed.summary.strip() and not self.summary_by_user:
            summary = proposed.summary.strip()[:MAX_SUMMARY_CHARS]
        return replace(self, characters=chars, terms=terms, summary=summary)

    def with_user_entries(self, base: StoryMemory) -> StoryMemory:
        """`base`'s entries first (a series' memory for a new volume), then this one's."""
        return StoryMemory(_merge(base.characters, self.characters, user_wins=True),
                           _merge(base.terms, self.terms, user_wins=True),
                           self.summary or base.summary, self.summary_by_user or base.summary_by_user)

    # -- the request -------------------------------------------------------------------------
    def for_prompt(self, texts: Iterable[str] = (), budget_chars: int = 2400) -> dict:
        """What goes with a request: characters and terms that occur in `texts` first, then the
        others while they fit in `budget_chars`, and the summary."""
        joined = "\n".join(texts)
        out: dict = {}

        def pick(items):
            near = [i for i in items if i.source and i.source in joined]
            rest = [i for i in items if i not in near]
            chosen, used = [], 0
            for i in near + rest:
                cost = len(i.source) + len(i.target) + len(i.notes) + 24
                if used + cost > budget_chars // 2:
                    continue
                chosen.append(i)
                used += cost
            return [{"source": i.source, "target": i.target, **({"notes": i.notes} if i.notes else {})}
                    for i in chosen]
        if self.characters:
            out["characters"] = pick(self.characters)
        if self.terms:
            out["terms"] = pick(self.terms)
        if self.summary.strip():
            out["summary"] = self.summary.strip()[:MAX_SUMMARY_CHARS]
        return out

    def glossary(self) -> list[GlossaryEntry]:
        """Names and terms as glossary entries (for proposals to the user's glossary)."""
        return [GlossaryEntry(i.source, i.target, i.notes) for i in (*self.characters, *self.terms)
                if i.source and i.target]


def _merge(mine, theirs, user_wins: bool = False):
    by_source = {i.source: i for i in mine}
    order = [i.source for i in mine]
    for new in theirs:
        if not new.source.strip():
            continue
        old = by_source.get(new.source)
        if old is None:
            if len(order) >= MAX_ITEMS:
                continue
            by_source[new.source] = new
            order.append(new.source)
        elif old.by_user and not (user_wins and new.by_user):
            continue
        else:
            by_source[new.source] = replace(new, target=new.target or old.target, notes=new.notes or old.notes,
                                            by_user=new.by_user or (old.by_user and user_wins))
    return tuple(by_source[s] for s in order)


# ----------------------------------------------------------------------------- JSON
def memory_to_dict(memory: StoryMemory) -> dict:
    def items(xs):
        return [{"source": i.source, "target": i.target, "notes": i.notes, **({"by_user": True} if i.by_user else {})}
                for i in xs]
    return {"characters": items(memory.characters), "terms": items(memory.terms), "summary": memory.summary,
            **({"summary_by_user": True} if memory.summary_by_user else {})}


def memory_from_dict(data, by_user: bool | None = None) -> StoryMemory:
    """A StoryMemory from JSON data (a saved file, or a model's answer: `by_user`=False marks
    every entry as the model's). Anything that is not the expected shape is skipped."""
    if not isinstance(data, dict):
        return StoryMemory()

    def items(key, cls):
        out = []
        for raw in data.get(key) or []:
            if isinstance(raw, dict) and isinstance(raw.get("source"), str) and raw["source"].strip():
                out.append(cls(raw["source"].strip(), str(raw.get("target") or "").strip(),
                               str(raw.get("notes") or raw.get("note") or "").strip(),
                               bool(raw.get("by_user")) if by_user is None else by_user))
        return tuple(out[:MAX_ITEMS])
    summary = data.get("summary")
    return StoryMemory(items("characters", Character), items("terms", Term),
                       summary.strip()[:MAX_SUMMARY_CHARS] if isinstance(summary, str) else "",
                       bool(data.get("summary_by_user")) if by_user is None else by_user)


def proposed_memory(raw: dict, texts: Sequence[str]) -> StoryMemory | None:
    """The model's memory proposals, keeping only the names and terms written on the page (a
    small model invents entries, or names them after the request's ids)."""
    memory = memory_from_dict(raw, by_user=False)
    joined = "\n".join(texts)
    memory = replace(memory, characters=tuple(c for c in memory.characters if c.source in joined),
                     terms=tuple(t for t in memory.terms if t.source in joined))
    return None if memory.empty else memory
