"""Reading a JSON export back into a Project (the input of the `translate` and `render` commands).

The export holds what a project holds except the page list of the whole source (an export may
hold a selection) and the project's glossary; blocks come back with their edited text (where
`edited` is true), OCR text, translations (the machine's too), model fields, lettering style and
mask edits, and the project with its lettering style. The page images are read from the export's
`source`. A file that is not a Hayai Desktop JSON export, or is damaged, raises UserError naming
the file and the field.
"""
from __future__ import annotations

import os
from pathlib import Path

from app.core.document.types import Block, Page, Project, outside_from
from app.core.exports.json_txt import EXPORT_FORMAT, EXPORT_MINOR, EXPORT_VERSION
from app.core.project.versioning import FileSchema, unknown_keys, upgrade
from app.errors import UserError
from app.render.strokes import stroke_from_dict
from app.render.style import TextStyle, override_from_dict, style_from_dict
from app.textfile import read_json_file

EXPORT_SCHEMA = FileSchema("JSON export", (EXPORT_VERSION, EXPORT_MINOR))  # 1.0 -> 1.1 -> 1.2: nothing to move
_TOP_KEYS = ("format", "version", "minor", "app_version", "exported_at", "source", "order", "style", "outside",
             "series_uuid", "volume_uuid", "pages")
_PAGE_KEYS = ("number", "name", "width", "height", "processed", "error", "blocks")
_BLOCK_KEYS = ("id", "order", "kind", "box", "polygon", "vertical", "score", "text", "edited", "ocr_text",
               "translation", "model", "patches", "machine_translation", "translation_edited", "translator",
               "style", "mask_edits", "machine_flag")


def read_json(path: str | os.PathLike) -> dict:
    """The JSON object in `path` (an export or a project file); UserError naming the file."""
    path = Path(path)
    data = read_json_file(path, "JSON export", "Export the volume again (File > Export > JSON).")
    if not isinstance(data, dict):
        raise UserError(f"{path}: not a Hayai Desktop JSON export or project file.")
    return data


def read_json_export(path: str | os.PathLike) -> Project:
    """The Project of the JSON export in `path`."""
    return project_from_export(read_json(path), path)


def project_from_export(data: dict, path: str | os.PathLike = "<export>") -> Project:
    """A Project from JSON export data (version 1.x; a newer major version comes back read-only,
    keys this build does not know are kept in `extra`)."""
    path = Path(path)
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise UserError(f"{path}: not a Hayai Desktop JSON export (\"format\" is not {EXPORT_FORMAT!r}).")
    opened = upgrade(data, EXPORT_SCHEMA, path)
    data = opened.data
    try:
        style = style_from_dict(data["style"]) if data.get("style") is not None else TextStyle()
        if not isinstance(data["pages"], list):
            raise TypeError("pages: expected a list")
        pages = [_page(p, f"pages[{i}]") for i, p in enumerate(data["pages"])]
        order = str(data.get("order", "rtl"))
        extra = unknown_keys(data, _TOP_KEYS)
        return Project(source=str(data["source"]), pages=pages, order=order if order in ("rtl", "ltr") else "rtl",
                       style=style, extra={EXPORT_FORMAT: extra} if extra else {}, read_only=opened.read_only,
                       series_uuid=str(data.get("series_uuid") or ""), volume_uuid=str(data.get("volume_uuid") or ""),
                       outside=outside_from(data.get("outside")))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        if opened.read_only:
            raise UserError(f"{opened.read_only} (This one cannot read it: {type(exc).__name__}: {exc})") from exc
        raise UserError(f"{path}: damaged JSON export ({type(exc).__name__}: {exc}). Export the project "
                        "again from the app.") from exc


def _page(data: dict, where: str) -> Page:
    if not isinstance(data, dict):
        raise TypeError(f"{where}: expected an object")
    blocks = tuple(_block(b, f"{where}.blocks[{i}]") for i, b in enumerate(data.get("blocks", [])))
    error = data.get("error")
    return Page(name=str(data["name"]), width=int(data.get("width", 0)), height=int(data.get("height", 0)),
                blocks=tuple(sorted(blocks, key=lambda b: b.order)),
                processed=bool(data.get("processed", bool(blocks))), error=None if error is None else str(error),
                extra=unknown_keys(data, _PAGE_KEYS) or None)


def _block(data: dict, where: str) -> Block:
    if not isinstance(data, dict):
        raise TypeError(f"{where}: expected an object")
    polygon = data.get("polygon")
    ocr_text = str(data.get("ocr_text", ""))
    text = str(data.get("text", ocr_text))
    try:
        style = override_from_dict(data.get("style"))
        strokes = tuple(stroke_from_dict(s) for s in (data.get("mask_edits") or []))
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from exc
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
        machine_flag=str(data.get("machine_flag", "")),
        style=style, mask_edits=strokes, extra=unknown_keys(data, _BLOCK_KEYS) or None,
    )
