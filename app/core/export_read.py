"""Read a JSON export back into a Project (what `hayai-desktop render` takes as INPUT).

The export (app.core.export, schema export_schema.json) carries every block field the
renderer needs: box, polygon, kind, text (and whether it was edited), translation, style and
mask edits. Pages keep their names; the page images are read from the export's `source`.
UserError names the file and the bad field.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from app.core.document import Block, Page, Project
from app.core.export import EXPORT_FORMAT, EXPORT_VERSION
from app.errors import UserError
from app.render.strokes import stroke_from_dict
from app.render.style import TextStyle, override_from_dict, style_from_dict


def read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError as exc:
        raise UserError(f"{path}: no such file") from exc
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 text") from exc
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno})") from exc
    except OSError as exc:
        raise UserError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    if not isinstance(data, dict):
        raise UserError(f"{path}: not a Hayai Desktop export or project file")
    return data


def project_from_export(data: dict, path: str | os.PathLike = "<export>") -> Project:
    """A Project from JSON export data (version 1)."""
    path = Path(path)

    def bad(where: str, why: str) -> UserError:
        return UserError(f"{path}: {where}: {why}. Export the project again from the app.")

    if data.get("format") != EXPORT_FORMAT:
        raise UserError(f"{path}: not a Hayai Desktop JSON export")
    if data.get("version") != EXPORT_VERSION:
        raise UserError(f"{path}: export version {data.get('version')!r}; this app reads version {EXPORT_VERSION}")
    source = data.get("source")
    if not isinstance(source, str) or not source:
        raise bad("source", "missing")
    order = data.get("order", "rtl")
    try:
        style = style_from_dict(data["style"]) if data.get("style") is not None else TextStyle()
    except (ValueError, TypeError) as exc:
        raise bad("style", str(exc)) from exc
    pages = []
    for pi, p in enumerate(data.get("pages") or []):
        where = f"pages[{pi}]"
        if not isinstance(p, dict) or not isinstance(p.get("name"), str):
            raise bad(where, "expected a page with a name")
        blocks = []
        for bi, b in enumerate(p.get("blocks") or []):
            blocks.append(_block(b, f"{where}.blocks[{bi}]", bad))
        pages.append(Page(name=p["name"], width=int(p.get("width") or 0), height=int(p.get("height") or 0),
                          blocks=tuple(sorted(blocks, key=lambda b: b.order)),
                          processed=bool(p.get("processed", True)), error=p.get("error")))
    return Project(source=source, pages=pages, order=order if order in ("rtl", "ltr") else "rtl", style=style)


def _block(b, where: str, bad) -> Block:
    if not isinstance(b, dict):
        raise bad(where, "expected an object")
    box = b.get("box")
    if not isinstance(box, list) or len(box) != 4 or not all(isinstance(v, (int, float)) for v in box):
        raise bad(f"{where}.box", "expected 4 numbers")
    polygon = b.get("polygon")
    if polygon is not None:
        if not isinstance(polygon, list) or not all(isinstance(q, list) and len(q) == 2 for q in polygon):
            raise bad(f"{where}.polygon", "expected [[x, y], ...] or null")
        polygon = tuple((float(x), float(y)) for x, y in polygon)
    try:
        style = override_from_dict(b.get("style"))
        strokes = tuple(stroke_from_dict(s) for s in (b.get("mask_edits") or []))
    except (ValueError, TypeError) as exc:
        raise bad(where, str(exc)) from exc
    ocr_text = b.get("ocr_text") or ""
    text = b.get("text")
    edited = bool(b.get("edited")) and isinstance(text, str) and text != ocr_text
    order = b.get("order")
    if not isinstance(order, int) or isinstance(order, bool):
        raise bad(f"{where}.order", "expected an integer")
    return Block(id=str(b.get("id") or f"b{order}"), order=order, kind=str(b.get("kind") or "text"),
                 box=tuple(float(v) for v in box), polygon=polygon, vertical=bool(b.get("vertical")),
                 score=b.get("score"), ocr_text=ocr_text, text=text if edited else None,
                 translation=b.get("translation") or "", model=b.get("model") or "", patches=b.get("patches"),
                 style=style, mask_edits=strokes)
