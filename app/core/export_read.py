"""Reading a JSON export back into a Project (the `translate` command's input).

The export holds what a project holds except the page list of the whole source (an export may
hold a selection) and the project's glossary; blocks come back with their edited text (where
`edited` is true), OCR text, translations and model fields. A file that is not a Hayai Desktop
JSON export, or is damaged, raises UserError naming the file and the field.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from app.core.document import Block, Page, Project
from app.core.export import EXPORT_FORMAT, EXPORT_VERSION
from app.errors import UserError


def read_json_export(path: str | os.PathLike) -> Project:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError as exc:
        raise UserError(f"{path}: no such file.") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not a JSON export ({exc}).") from exc
    except OSError as exc:
        raise UserError(f"{path}: cannot read it ({exc.strerror or exc}).") from exc
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise UserError(f"{path}: not a Hayai Desktop JSON export (\"format\" is not {EXPORT_FORMAT!r}).")
    if not isinstance(data.get("version"), int) or data["version"] > EXPORT_VERSION:
        raise UserError(f"{path}: export version {data.get('version')!r} is newer than this app reads "
                        f"({EXPORT_VERSION}); update Hayai Desktop.")
    try:
        pages = [_page(p) for p in data["pages"]]
        return Project(source=str(data["source"]), pages=pages, order=str(data.get("order", "rtl")))
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"{path}: damaged JSON export ({type(exc).__name__}: {exc}).") from exc


def _page(data: dict) -> Page:
    blocks = tuple(_block(b) for b in data.get("blocks", []))
    return Page(name=str(data["name"]), width=int(data.get("width", 0)), height=int(data.get("height", 0)),
                blocks=blocks, processed=bool(data.get("processed", bool(blocks))), error=data.get("error"))


def _block(data: dict) -> Block:
    polygon = data.get("polygon")
    ocr_text = str(data.get("ocr_text", ""))
    text = str(data.get("text", ocr_text))
    return Block(
        id=str(data["id"]), order=int(data["order"]), kind=str(data.get("kind", "other")),
        box=tuple(float(v) for v in data["box"]),
        polygon=None if polygon is None else tuple((float(x), float(y)) for x, y in polygon),
        vertical=bool(data.get("vertical", False)),
        score=None if data.get("score") is None else float(data["score"]),
        ocr_text=ocr_text, text=text if text != ocr_text else None,
        translation=str(data.get("translation", "")), model=str(data.get("model", "")),
        patches=None if data.get("patches") is None else int(data["patches"]),
        machine_translation=str(data.get("machine_translation", "")),
        translator=str(data.get("translator", "")),
    )
