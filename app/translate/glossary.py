"""Glossaries: names and terms translated the same way on every page.

Three file formats, told apart by their content (in UTF-8, UTF-8 with a BOM, UTF-16 with a BOM,
or Shift-JIS):
  - JSON: a list of {"source": ..., "target": ..., "note": ...} (note optional);
  - TSV: `source<TAB>target[<TAB>note]` per line;
  - arrows: `source -> target  # note` per line.
In the text formats, blank lines and lines starting with `#` are comments. Only the entries whose
source term occurs in the given texts are sent with a page (`relevant`); a term in Latin script
matches case-insensitively, others exactly.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from app.errors import UserError
from app.translate.base import GlossaryEntry

FORMATS = ("tsv", "arrows", "json")
_ARROW = re.compile(r"^(?P<source>.+?)\s*(?:->|→|=>)\s*(?P<target>.*?)\s*(?:#\s*(?P<note>.*))?$")


def parse_glossary(text: str, name: str = "<glossary>") -> list[GlossaryEntry]:
    """Entries of a glossary file's text; UserError naming `name` and the line for a bad line."""
    text = text.lstrip("\ufeff")
    if text.lstrip().startswith("["):
        return _parse_json(text, name)
    entries = []
    for number, raw in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "\t" in raw:
            parts = [p.strip() for p in raw.rstrip("\n").split("\t")]
            if len(parts) < 2 or not parts[0] or not parts[1]:
                raise UserError(f"{name} line {number}: expected 'source<TAB>target[<TAB>note]'.")
            entries.append(GlossaryEntry(parts[0], parts[1], "\t".join(parts[2:]).strip()))
            continue
        match = _ARROW.match(line)
        if not match or not match.group("target"):
            raise UserError(f"{name} line {number}: expected 'source -> target  # note' or "
                            f"'source<TAB>target', not {line[:40]!r}.")
        entries.append(GlossaryEntry(match.group("source").strip(), match.group("target").strip(),
                                     (match.group("note") or "").strip()))
    return entries


def _parse_json(text: str, name: str) -> list[GlossaryEntry]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{name}: invalid JSON at line {exc.lineno}, column {exc.colno}.") from exc
    if not isinstance(data, list):
        raise UserError(f"{name}: a JSON glossary is a list of {{\"source\", \"target\", \"note\"}}.")
    entries = []
    for i, item in enumerate(data):
        if not (isinstance(item, dict) and isinstance(item.get("source"), str)
                and isinstance(item.get("target"), str) and item["source"].strip()):
            raise UserError(f"{name}: entry {i + 1} needs a text \"source\" and \"target\".")
        note = item.get("note") or ""
        entries.append(GlossaryEntry(item["source"].strip(), item["target"].strip(), str(note).strip()))
    return entries


def load_glossary(path: str | os.PathLike) -> list[GlossaryEntry]:
    """The entries of a glossary file: UTF-8 (a BOM or not), UTF-16 with a BOM, or Shift-JIS
    (app.textfile); UserError naming the file."""
    from app.textfile import read_text_file

    return parse_glossary(read_text_file(path, "glossary file"), str(Path(path)))


def format_glossary(entries: Iterable[GlossaryEntry], fmt: str = "tsv") -> str:
    """The text of a glossary file in `fmt` (one of FORMATS); parse_glossary reads it back."""
    entries = list(entries)
    if fmt == "json":
        data = [{"source": e.source, "target": e.target, **({"note": e.note} if e.note else {})} for e in entries]
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    if fmt == "tsv":
        return "".join(f"{_one_line(e.source)}\t{_one_line(e.target)}" + (f"\t{_one_line(e.note)}" if e.note else "")
                       + "\n" for e in entries)
    if fmt == "arrows":
        return "".join(f"{_one_line(e.source)} -> {_one_line(e.target)}" + (f"  # {_one_line(e.note)}" if e.note else "")
                       + "\n" for e in entries)
    raise ValueError(f"glossary format must be one of {FORMATS}, not {fmt!r}")


def _one_line(text: str) -> str:
    return " ".join(text.replace("\t", " ").split())


def merge(*glossaries: Sequence[GlossaryEntry]) -> list[GlossaryEntry]:
    """One glossary from several; for a source term given twice, the first glossary wins."""
    seen: dict[str, GlossaryEntry] = {}
    for glossary in glossaries:
        for entry in glossary:
            seen.setdefault(_key(entry.source), entry)
    return list(seen.values())


def _key(term: str) -> str:
    return term.casefold() if term.isascii() else term


def occurs(term: str, text: str) -> bool:
    """True when `term` is in `text` (case-insensitive for ASCII terms, whole words for those)."""
    if not term:
        return False
    if term.isascii():
        return re.search(r"(?<!\w)" + re.escape(term) + r"(?!\w)", text, flags=re.IGNORECASE) is not None
    return term in text


def relevant(entries: Sequence[GlossaryEntry], texts: Iterable[str]) -> list[GlossaryEntry]:
    """The entries whose source term occurs in any of `texts`, in glossary order."""
    joined = "\n".join(texts)
    return [e for e in entries if occurs(e.source, joined)]
