"""Glossary proposals: names and terms worth a glossary entry, offered to the user, never added
on their own.

From two places: the story memory's characters and terms that have a target (what the model
reported), and runs that recur in the source: a katakana run of three or more characters, or a
kanji run of two to four followed by an honorific (さん, くん, 様, 先生...), found on at least
MIN_PAGES pages. A proposal whose source the glossary has, or that the user dismissed
(`Project.dismissed_proposals`), is not offered again. No Qt.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from app.core.document.types import Project

MIN_PAGES = 2
_KATAKANA = re.compile(r"[\u30a1-\u30fa\u30fc]{3,}")
_KANJI_NAME = re.compile(r"([\u4e00-\u9fff]{2,4})(?=さん|くん|君|ちゃん|様|さま|先生|先輩|殿)")
_NOT_NAMES = {"ー" * n for n in range(3, 10)}


@dataclass(frozen=True)
class Proposal:
    source: str
    target: str  # "" when only the source is known (the user types the translation)
    why: str  # "story memory" | "on N pages"


def recurring(project: Project, min_pages: int = MIN_PAGES) -> dict[str, int]:
    """Source runs (see the module doc) -> on how many pages they occur, those on >= min_pages."""
    pages: dict[str, set[str]] = defaultdict(set)
    for page in project.pages:
        for b in page.blocks:
            text = "".join(b.display_text.split())
            for run in _KATAKANA.findall(text):
                if run not in _NOT_NAMES:
                    pages[run].add(page.name)
            for run in _KANJI_NAME.findall(text):
                pages[run].add(page.name)
    return {run: len(names) for run, names in pages.items() if len(names) >= min_pages}


def proposals(project: Project, min_pages: int = MIN_PAGES) -> list[Proposal]:
    """What to offer now, the memory's first, then the recurring runs, most pages first."""
    known = {g.source for g in project.glossary} | set(project.dismissed_proposals)
    out: list[Proposal] = []
    for item in (*project.memory.characters, *project.memory.terms):
        if item.source and item.target and item.source not in known:
            known.add(item.source)
            out.append(Proposal(item.source, item.target, "story memory"))
    for run, count in sorted(recurring(project, min_pages).items(), key=lambda kv: (-kv[1], kv[0])):
        if run not in known and not any(run in k or k in run for k in known if len(k) >= 3):
            known.add(run)
            out.append(Proposal(run, "", f"on {count} pages"))
    return out
