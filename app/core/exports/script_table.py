"""The script as a table (CSV / TSV) for spreadsheets and other tools, and its import back.

One row per block, pages in project order and blocks in reading order, with a header row:

    page, page_name, block, block_id, kind, source, translation, notes

`page` is the page's 1-based number in the project, `block` its reading-order number, `source`
the block's text (the edited text where there is one), `notes` what the app knows of the block
(machine translation, edited by hand, looks untranslated); it is written for the reader and
ignored on import. Import matches each row by page (its name when `page_name` names a page of
the project, else its number) and block id, takes `source` and `translation` from it (only the
columns the file has), reports every row it could not place and changes nothing else. Written
UTF-8 with a BOM (what spreadsheets need to read Japanese right), newlines "\\n"; multi-line
cells are quoted as CSV does.
"""
from __future__ import annotations

import csv
import io
import os
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from app.atomic import atomic_write_text
from app.core.document.types import Block, Project
from app.errors import UserError

COLUMNS = ("page", "page_name", "block", "block_id", "kind", "source", "translation", "notes")
FORMATS = ("csv", "tsv")


def block_status(block: Block) -> str:
    """One word for the block's translation state: "" (no text), "not translated", "looks
    untranslated", "machine" or "edited" (the translation is the user's own)."""
    if block.looks_untranslated:
        return "looks untranslated"
    if not block.display_text.strip() and not block.translation.strip():
        return ""
    if not block.translation.strip():
        return "not translated"
    return "edited" if block.translation_edited else "machine"


def _notes(block: Block) -> str:
    notes = []
    status = block_status(block)
    if status == "machine":
        notes.append(f"machine translation ({block.translator})" if block.translator else "machine translation")
    elif status == "edited":
        notes.append("translation edited by hand")
    elif status == "looks untranslated":
        notes.append(f"the machine's answer looks untranslated: {block.machine_translation}")
    if block.edited:
        notes.append("source corrected by hand")
    return "; ".join(notes)


def _dialect(fmt: str) -> dict:
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, not {fmt!r}")
    return {"delimiter": "\t" if fmt == "tsv" else ",", "lineterminator": "\n"}


def export_script_text(project: Project, fmt: str = "csv") -> str:
    """The table as a string (no BOM)."""
    out = io.StringIO()
    writer = csv.writer(out, **_dialect(fmt))
    writer.writerow(COLUMNS)
    for number, page in enumerate(project.pages, start=1):
        for block in sorted(page.blocks, key=lambda b: b.order):
            writer.writerow([number, page.name, block.order, block.id, block.kind, block.display_text,
                             block.translation, _notes(block)])
    return out.getvalue()


def format_for(path: str | os.PathLike) -> str:
    return "tsv" if Path(path).suffix.lower() in (".tsv", ".tab") else "csv"


def export_script(project: Project, path: str | os.PathLike, fmt: str | None = None) -> Path:
    """Write the table atomically to `path` (fmt: csv / tsv, default from the suffix)."""
    path = Path(path)
    text = "\ufeff" + export_script_text(project, fmt or format_for(path))
    try:
        return atomic_write_text(path, text)
    except OSError as exc:
        raise UserError(f"{path}: cannot write the script ({exc.strerror or exc}). Choose another "
                        "folder or free some disk space.") from exc


class ScriptImport(NamedTuple):
    """What `import_script` did: the updated project (a new object), the rows it could not place
    or use ("FILE row N: why"), and how many blocks changed."""

    project: Project
    warnings: list[str]
    updated: int


def import_script(project: Project, path: str | os.PathLike, fmt: str | None = None) -> ScriptImport:
    """Fill blocks' source text and translation from a CSV / TSV file (see the module docstring).
    The given project is not modified."""
    from app.textfile import read_text_file

    path = Path(path)
    return import_script_text(project, read_text_file(path, "CSV/TSV file"), fmt or format_for(path), str(path))


def import_script_text(project: Project, text: str, fmt: str = "csv", name: str = "<script>") -> ScriptImport:
    text = text.lstrip("\ufeff")
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=_dialect(fmt)["delimiter"]))
    if not rows:
        raise UserError(f"{name}: the file is empty. Export the script (File > Export > Script as CSV) and "
                        "fill its translation column.")
    header = [h.strip().lower().replace(" ", "_") for h in rows[0]]
    if "block_id" not in header or not ({"page", "page_name"} & set(header)):
        raise UserError(f"{name}: the first row must name the columns, with block_id and page (or page_name); "
                        f"it is {rows[0][:8]!r}. Export the script once to see the layout.")
    col = {h: i for i, h in enumerate(header)}
    by_name = {p.name: i for i, p in enumerate(project.pages)}
    pages = list(project.pages)
    changed: dict[int, dict[str, Block]] = {}
    warnings: list[str] = []
    seen: set[tuple[int, str]] = set()

    def cell(row: list[str], key: str) -> str | None:
        i = col.get(key)
        return row[i] if i is not None and i < len(row) else None

    for row_no, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        where = f"{name} row {row_no}"
        index = _page_of(cell(row, "page"), cell(row, "page_name"), by_name, len(pages))
        if index is None:
            warnings.append(f"{where}: page {cell(row, 'page') or ''} {cell(row, 'page_name') or ''} is not in "
                            f"this project ({len(pages)} pages); not imported.".replace("  ", " "))
            continue
        block_id = (cell(row, "block_id") or "").strip()
        block = changed.get(index, {}).get(block_id) or pages[index].block(block_id)
        if block is None:
            warnings.append(f"{where}: page {index + 1} ({pages[index].name}) has no block {block_id!r}; not imported.")
            continue
        if (index, block_id) in seen:
            warnings.append(f"{where}: block {block_id!r} of page {index + 1} appears twice; the later row was used.")
        seen.add((index, block_id))
        new = block
        source = cell(row, "source")
        if source is not None and source != new.display_text:
            new = replace(new, text=None if source == new.ocr_text else source)
        translation = cell(row, "translation")
        if translation is not None and translation != new.translation:
            new = replace(new, translation=translation)
        if new != block:
            changed.setdefault(index, {})[block_id] = new
    updated = 0
    for index, blocks in changed.items():
        original = project.pages[index]
        real = {bid: b for bid, b in blocks.items() if b != original.block(bid)}
        updated += len(real)
        if real:
            pages[index] = replace(original, blocks=tuple(real.get(b.id, b) for b in original.blocks))
    result = replace(project, pages=pages, glossary=list(project.glossary))
    return ScriptImport(result, warnings, updated)


def _page_of(number: str | None, page_name: str | None, by_name: dict[str, int], count: int) -> int | None:
    if page_name is not None and page_name in by_name:
        return by_name[page_name]
    if page_name:  # a name this project does not have: the number alone would place it on the wrong page
        return None
    try:
        n = int((number or "").strip())
    except ValueError:
        return None
    return n - 1 if 1 <= n <= count else None
