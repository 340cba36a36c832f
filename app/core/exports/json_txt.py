"""Exports of a project (JSON, TXT) and TXT re-import of edited transcriptions or translations.

Formats are documented in docs/export-format.md; the JSON export follows the JSON Schema in
app/core/exports/export_schema.json (EXPORT_SCHEMA_PATH). Pages are numbered 1..n by their position in
the whole project (also when only a selection is exported), blocks by their reading order, so a
TXT file comes back to the right blocks:

    # comments before the first page (and right after a page header) are ignored
    === page 3: 003.png ===
    [1] first block, edited text where there is one
    second line of the same block
    > its translation (translations=True only; a lone ">" when there is none)

    [2] next block

`pages` selects pages by name (None = all). Files are written atomically.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

from app import __version__
from app.atomic import atomic_write_text
from app.core.document.types import Block, Page, Project
from app.core.project.versioning import with_unknown
from app.errors import UserError
from app.render.strokes import stroke_to_dict
from app.render.style import override_to_dict, style_to_dict

EXPORT_FORMAT = "hayai-desktop-export"
EXPORT_VERSION = 1
EXPORT_MINOR = 2  # 1.1: "minor"; unknown keys kept (app.core.project.versioning); 1.2: "outside"
EXPORT_SCHEMA_PATH = Path(__file__).with_name("export_schema.json")

_HEADER = re.compile(r"^\s*={3,}\s*(?:[^\W\d]+\s*)?(\d+)\s*(?::\s*(.*?))?\s*={3,}\s*$")
_BLOCK = re.compile(r"^\s*[\[［]\s*(\d+)\s*[\]］]\s*(.*)$")
_TRANSLATION = re.compile(r"^\s*>\s?(.*)$")


# ----------------------------------------------------------------------------- selection

def _selected(project: Project, pages: list[str] | None) -> list[tuple[int, Page]]:
    """(1-based number, page) for the chosen page names, in project order."""
    numbered = list(enumerate(project.pages, start=1))
    if pages is None:
        return numbered
    wanted = set(pages)
    unknown = wanted - {p.name for p in project.pages}
    if unknown:
        raise UserError(f"{project.source}: no page named {', '.join(sorted(unknown))} in this "
                        "project. Choose pages from the page list.")
    return [(n, p) for n, p in numbered if p.name in wanted]


def _blocks_in_order(page: Page) -> list[Block]:
    return sorted(page.blocks, key=lambda b: b.order)


# ----------------------------------------------------------------------------- JSON

def export_json_data(project: Project, pages: list[str] | None = None) -> dict:
    """The JSON export as plain data (schema: EXPORT_SCHEMA_PATH, version EXPORT_VERSION)."""
    return with_unknown({
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "minor": EXPORT_MINOR,
        "app_version": __version__,
        "exported_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "source": str(project.source),
        "order": project.order,
        "style": style_to_dict(project.style),
        "outside": dict(project.outside),
        **({"series_uuid": project.series_uuid} if project.series_uuid else {}),
        **({"volume_uuid": project.volume_uuid} if project.volume_uuid else {}),
        "pages": [_page_json(number, page) for number, page in _selected(project, pages)],
    }, project.extra.get(EXPORT_FORMAT))


def _page_json(number: int, page: Page) -> dict:
    return with_unknown({
        "number": number, "name": page.name, "width": page.width, "height": page.height,
        "processed": page.processed, "error": page.error,
        "blocks": [_block_json(b) for b in _blocks_in_order(page)],
    }, page.extra)


def _block_json(block: Block) -> dict:
    data = {
        "id": block.id,
        "order": block.order,
        "kind": block.kind,
        "box": [float(v) for v in block.box],
        "polygon": None if block.polygon is None else [[float(x), float(y)] for x, y in block.polygon],
        "vertical": block.vertical,
        "score": block.score,
        "text": block.display_text,
        "edited": block.edited,
        "ocr_text": block.ocr_text,
        "translation": block.translation,
        "model": block.model,
        "patches": block.patches,
        "machine_translation": block.machine_translation,
        "translation_edited": block.translation_edited,
        "translator": block.translator,
    }
    if block.machine_flag:
        data["machine_flag"] = block.machine_flag
    style = override_to_dict(block.style)
    if style is not None:
        data["style"] = style
    if block.mask_edits:
        data["mask_edits"] = [stroke_to_dict(s) for s in block.mask_edits]
    return with_unknown(data, block.extra)


def export_json(project: Project, path: str | os.PathLike, pages: list[str] | None = None) -> Path:
    """Write the JSON export (UTF-8, indented) atomically to `path`; returns the path."""
    data = export_json_data(project, pages)
    text = json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    return _write(path, text)


def _write(path: str | os.PathLike, text: str) -> Path:
    path = Path(path)
    try:
        return atomic_write_text(path, text)
    except OSError as exc:
        raise UserError(f"{path}: cannot write the export ({exc.strerror or exc}). Choose another "
                        "folder or free some disk space.") from exc


# ----------------------------------------------------------------------------- TXT export

def export_txt_text(project: Project, pages: list[str] | None = None,
                    translations: bool = False) -> str:
    """The TXT export as a string (see the module docstring for the layout)."""
    lines = [f"# Hayai Desktop transcription of {project.source}",
             "# Pages start with '=== page N: NAME ===', blocks with '[K]' in reading order."]
    if translations:
        lines.append("# Lines starting with '>' are the translation of the block above them.")
    for number, page in _selected(project, pages):
        lines += ["", f"=== page {number}: {page.name} ==="]
        if page.error:
            lines.append("# error: " + " ".join(page.error.split()))
        elif not page.blocks:
            lines.append("# no text found" if page.processed else "# not processed yet")
        for i, block in enumerate(_blocks_in_order(page)):
            if i:
                lines.append("")
            text_lines = block.display_text.split("\n")
            lines.append(f"[{block.order}] {text_lines[0]}".rstrip())
            lines += text_lines[1:]
            if translations:
                lines += [f"> {t}".rstrip() for t in block.translation.split("\n")]
    return "\n".join(lines) + "\n"


def export_txt(project: Project, path: str | os.PathLike, pages: list[str] | None = None,
               translations: bool = False) -> Path:
    """Write the TXT export (UTF-8) atomically to `path`; returns the path."""
    return _write(path, export_txt_text(project, pages, translations))


# ----------------------------------------------------------------------------- TXT import

class TxtImport(NamedTuple):
    """What `import_txt` did: the updated project (a new object), warnings, blocks changed."""

    project: Project
    warnings: list[str]
    updated: int


class _Section:
    def __init__(self, line_no: int, number: int, name: str | None):
        self.line_no, self.number, self.name = line_no, number, name
        self.blocks: dict[int, tuple[int, list[str]]] = {}  # block number -> (line, lines)


def _read_text(path: Path) -> str:
    """UTF-8 (a BOM or not), UTF-16 with a BOM, or Shift-JIS (app.textfile)."""
    from app.textfile import read_text_file

    return read_text_file(path, "TXT file")


def import_txt(project: Project, path: str | os.PathLike, into: str = "text") -> TxtImport:
    """Fill block texts (`into="text"`) or translations (`into="translation"`) from a TXT file.

    Sections are matched to pages by name when the header names a page of the project, else by
    page number; blocks by their reading-order number. Blank lines around blocks, multi-line
    blocks, CRLF and a BOM are accepted. Nothing is dropped silently: unknown pages or blocks,
    duplicates and stray lines come back as warnings ("FILE line N: ..."). Blocks absent from
    the file are left as they are. The given project is not modified.
    """
    path = Path(path)
    return import_txt_text(project, _read_text(path), into=into, name=str(path))


def import_txt_text(project: Project, text: str, into: str = "text",
                    name: str = "<text>") -> TxtImport:
    """`import_txt` on a string; `name` prefixes the warnings."""
    if into not in ("text", "translation"):
        raise ValueError(f"into must be 'text' or 'translation', not {into!r}")
    warnings: list[str] = []
    sections = _parse(text, name, warnings)
    by_name = {p.name: i for i, p in enumerate(project.pages)}
    pages = list(project.pages)
    updated = 0
    for section in sections:
        index = _resolve_page(section, project, by_name, name, warnings)
        if index is None:
            continue
        page = pages[index]
        by_order = {b.order: b for b in page.blocks}
        new_blocks = {}
        for number, (line_no, lines) in section.blocks.items():
            block = by_order.get(number)
            if block is None:
                warnings.append(f"{name} line {line_no}: page {index + 1} ({page.name}) has no "
                                f"block [{number}] (it has {len(page.blocks)}); this text was "
                                "not imported.")
                continue
            changed = _apply(block, lines, into)
            if changed != block:
                new_blocks[block.id] = changed
        if new_blocks:
            updated += len(new_blocks)
            pages[index] = replace(page, blocks=tuple(new_blocks.get(b.id, b) for b in page.blocks))
    result = replace(project, pages=pages, glossary=list(project.glossary))  # a new Project; style etc. kept
    return TxtImport(result, warnings, updated)


def _parse(text: str, name: str, warnings: list[str]) -> list[_Section]:
    sections: list[_Section] = []
    current: list[str] | None = None  # lines of the block being read
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for line_no, line in enumerate(lines, start=1):
        header = _HEADER.match(line)
        if header:
            sections.append(_Section(line_no, int(header.group(1)), header.group(2) or None))
            current = None
            continue
        block = _BLOCK.match(line)
        if block and sections:
            number = int(block.group(1))
            section = sections[-1]
            if number in section.blocks:
                warnings.append(f"{name} line {line_no}: block [{number}] appears twice in page "
                                f"{section.number}; the later one was used.")
            current = [block.group(2)]
            section.blocks[number] = (line_no, current)
            continue
        if current is not None:
            current.append(line)
        elif line.strip() and not line.lstrip().startswith("#"):
            where = (f"before the first block of page {sections[-1].number}" if sections
                     else "before the first page header")
            warnings.append(f"{name} line {line_no}: text {where} is not in any [N] block and "
                            f"was ignored: {line.strip()[:40]!r}")
    return sections


def _resolve_page(section: _Section, project: Project, by_name: dict[str, int], name: str,
                  warnings: list[str]) -> int | None:
    if section.name is not None and section.name in by_name:
        return by_name[section.name]
    count = len(project.pages)
    if 1 <= section.number <= count:
        actual = project.pages[section.number - 1].name
        if section.name is not None and section.name != actual:
            warnings.append(f"{name} line {section.line_no}: no page named {section.name!r}; "
                            f"used page {section.number} ({actual}) by its number.")
        return section.number - 1
    label = f" ({section.name})" if section.name else ""
    skipped = len(section.blocks)
    warnings.append(f"{name} line {section.line_no}: page {section.number}{label} is not in this "
                    f"project (it has {count} pages); its {skipped} block(s) were not imported.")
    return None


def _clean(lines: list[str]) -> str:
    lines = [line.rstrip() for line in lines]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _apply(block: Block, lines: list[str], into: str) -> Block:
    """The block with its text or translation taken from its lines in the file."""
    translated = [m.group(1) for m in map(_TRANSLATION.match, lines) if m]
    plain = [line for line in lines if not _TRANSLATION.match(line)]
    if into == "translation":
        value = _clean(translated if translated else plain)
        return replace(block, translation=value) if value != block.translation else block
    value = _clean(plain)
    text = None if value == block.ocr_text else value
    return replace(block, text=text) if text != block.text else block
