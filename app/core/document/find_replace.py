"""Find and replace across the volume's blocks: in the source text, the translation or both,
plain text or a regular expression, with or without matching case. Plain data, no Qt."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import NamedTuple

from app.core.document.types import Page, Project
from app.errors import UserError

FIELDS = ("source", "translation", "both")


class Hit(NamedTuple):
    page: str  # page name
    block_id: str
    field: str  # "source" | "translation"


def compile_pattern(text: str, regex: bool = False, case: bool = False) -> re.Pattern:
    """The search as a compiled pattern; UserError for a regular expression that does not compile."""
    flags = 0 if case else re.IGNORECASE
    try:
        return re.compile(text if regex else re.escape(text), flags)
    except re.error as exc:
        raise UserError(f"the regular expression {text!r} is not valid ({exc}). Fix it, or untick "
                        "Regular expression to search for the text as it is.") from exc


def _fields(where: str) -> tuple[str, ...]:
    if where not in FIELDS:
        raise ValueError(f"where must be one of {FIELDS}, not {where!r}")
    return ("source", "translation") if where == "both" else (where,)


def _value(block, field: str) -> str:
    return block.display_text if field == "source" else block.translation


def find_all(project: Project, pattern: re.Pattern, where: str = "both") -> list[Hit]:
    """Every block field holding a match, pages in order, blocks in reading order."""
    fields = _fields(where)
    hits = []
    for page in project.pages:
        for block in sorted(page.blocks, key=lambda b: b.order):
            hits += [Hit(page.name, block.id, f) for f in fields if pattern.search(_value(block, f))]
    return hits


def replace_in_page(page: Page, pattern: re.Pattern, replacement: str, where: str = "both",
                    block_id: str | None = None, regex: bool = False) -> tuple[Page, int]:
    """The page with every match replaced (in one block when `block_id` is given); returns the
    new page and the number of replacements. In regex mode the replacement may use \\1 / \\g<name>."""
    fields = _fields(where)
    repl = replacement if regex else (lambda _m: replacement)
    count = 0
    blocks = []
    for block in page.blocks:
        if block_id is not None and block.id != block_id:
            blocks.append(block)
            continue
        changes = {}
        for f in fields:
            try:
                new, n = pattern.subn(repl, _value(block, f))
            except (re.error, IndexError) as exc:
                raise UserError(f"the replacement {replacement!r} does not fit the expression ({exc}).") from exc
            if n:
                count += n
                if f == "source":
                    changes["text"] = None if new == block.ocr_text else new
                else:
                    changes["translation"] = new
        blocks.append(replace(block, **changes) if changes else block)
    return (replace(page, blocks=tuple(blocks)) if count else page), count
