"""The project file's content: a Project to and from its JSON data, for the project file, the
autosave and the edit journal (app.core.project.journal, which writes single pages and the
project's own fields). Reading is strict and names the file and field of a damage.

File format (JSON, UTF-8), schema version 1.5 (see docs/export-format.md; versions, migrations and
unknown keys: app.core.project.versioning):
    {"format": "hayai-desktop-project", "version": 1, "minor": 5, "app_version": str, "saved_at": ISO-8601,
     "source": absolute path, "order": "rtl"|"ltr",
     "pages": [{"name", "width", "height", "processed", "error",
                "blocks": [{"id", "order", "kind", "box": [x0, y0, x1, y1],
                            "polygon": [[x, y], ...] | null, "vertical", "score", "ocr_text",
                            "text": str | null, "translation", "model", "patches": int | null,
                            "machine_translation", "translator", "machine_flag", "approved",
                            "style": {changed style fields} | null,
                            "mask_edits": [{"erase", "radius", "points": [[x, y], ...]}, ...]}]}],
     "glossary": [{"source", "target", "note"}],
     "memory": {"characters": [{"source", "target", "notes", "by_user"?}], "terms": [...], "summary"} (optional),
     "style": {the project's lettering style: font, min_size, max_size, color, ...},
     "sizes": "each" | "one" | "few",
     "outside": {"caption": policy, "sfx": policy} (optional; policy: "translate" | "keep" | "beside"),
     "dismissed_proposals": [source term, ...] (optional: glossary proposals the user dismissed)}
A block's "kind" is "bubble", "caption" or "sfx" (text outside bubbles, 1.3), "text" (a text box
read without the page), "other" or "manual" (a box the user drew); a kind this build does not
know is kept and lettered in place. "outside" (1.3) says how captions and sound effects are
lettered (app.core.document.types.OUTSIDE_POLICIES); absent: both translated in place, as before.
A page may also hold "sizes" (its own size harmonisation; absent = the project's).
A page's "order_by_hand": true (written only when so) says the user renumbered its blocks; its
"order_check" (1.4; a string, written only when set) says why its reading order may be wrong
("check the order": the layout rules were not sure of it). Its "checked": true (1.5, written only
when so) says the user checked the page's text.
"machine_translation", "translator", "machine_flag", "glossary", "style" and "mask_edits" are optional (files
saved before machine translation and translated pages load with them empty / the defaults; the
migration from 1.0 fills them in). Keys this build does not know, at the top, in a page or in a
block, are kept (`extra`) and written back; a file of a newer major version loads read-only
(`Project.read_only`), and `save_project` refuses to write over it.
"series_uuid" and "volume_uuid" (the identity the .mokuro export gives readers, app.core.exports.mokuro)
are written once set (optional keys within 1.1).
"""
from __future__ import annotations

import os
from dataclasses import fields
from datetime import datetime, timezone
from pathlib import Path

from app import __version__
from app.core.document.types import Block, Page, Project, default_outside, outside_from
from app.core.project.versioning import FileSchema, unknown_keys, upgrade, with_unknown
from app.errors import UserError
from app.render.strokes import stroke_from_dict, stroke_to_dict
from app.render.style import TextStyle, override_from_dict, override_to_dict, style_from_dict, style_to_dict
from app.translate.base import GlossaryEntry
from app.translate.memory import StoryMemory, memory_from_dict, memory_to_dict

FORMAT = "hayai-desktop-project"
SCHEMA_VERSION = 1
SCHEMA_MINOR = 5  # 1.2: "sizes" (the project's and a page's size harmonisation); 1.3: "outside", kinds caption / sfx;
# 1.4: a page's "order_check"; 1.5: a page's "checked"


_TOP_KEYS = ("format", "version", "minor", "app_version", "saved_at", "source", "order", "style", "glossary",
             "series_uuid", "volume_uuid", "pages", "sizes", "memory",
             "dismissed_proposals", "outside")
_PAGE_KEYS = ("name", "width", "height", "processed", "error", "order_by_hand", "order_check", "checked", "blocks",
              "sizes")
_BLOCK_KEYS = tuple(f.name for f in fields(Block) if f.name != "extra")


def _from_1_0(data: dict) -> dict:
    """1.0 -> 1.1: the optional keys added within version 1 (machine translation, glossary,
    lettering style, mask edits) are written out with their defaults."""
    data = {**data, "minor": 1, "glossary": data.get("glossary") or []}
    data.setdefault("style", None)
    pages = []
    for page in data.get("pages") or []:
        if isinstance(page, dict) and isinstance(page.get("blocks"), list):
            page = {**page, "blocks": [
                {"machine_translation": "", "translator": "", "style": None, "mask_edits": [], **b}
                if isinstance(b, dict) else b for b in page["blocks"]]}
        pages.append(page)
    data["pages"] = pages
    return data


PROJECT_SCHEMA = FileSchema("project file", (SCHEMA_VERSION, SCHEMA_MINOR), {(1, 0): _from_1_0})


# ----------------------------------------------------------------------------- save / load

def project_to_dict(project: Project) -> dict:
    """The project as plain JSON data (schema version 1.1), with the unknown keys it was read with."""
    return with_unknown({
        "format": FORMAT,
        "version": SCHEMA_VERSION,
        "minor": SCHEMA_MINOR,
        "app_version": __version__,
        "saved_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "source": str(project.source),
        "order": project.order,
        "style": style_to_dict(project.style),
        "sizes": project.sizes,
        "glossary": [{"source": g.source, "target": g.target, "note": g.note} for g in project.glossary],
        **({"memory": memory_to_dict(project.memory)} if not project.memory.empty else {}),
        **({"dismissed_proposals": list(project.dismissed_proposals)} if project.dismissed_proposals else {}),
        **({"outside": dict(project.outside)} if project.outside != default_outside() else {}),
        **({"series_uuid": project.series_uuid} if project.series_uuid else {}),
        **({"volume_uuid": project.volume_uuid} if project.volume_uuid else {}),
        "pages": [page_to_dict(page) for page in project.pages],
    }, project.extra.get(FORMAT))


def page_to_dict(page: Page) -> dict:
    """One page as plain JSON data (the project file's page object)."""
    data = {
        "name": page.name, "width": page.width, "height": page.height,
        "processed": page.processed, "error": page.error,
        **({"order_by_hand": True} if page.order_by_hand else {}),
        **({"order_check": page.order_check} if page.order_check else {}),
        **({"checked": True} if page.checked else {}),
        "blocks": [block_to_dict(b) for b in page.blocks],
    }
    if page.sizes is not None:
        data["sizes"] = page.sizes
    return with_unknown(data, page.extra)


def block_to_dict(block: Block) -> dict:
    """Every Block field, tuples as lists (box: [x0, y0, x1, y1], polygon: [[x, y], ...])."""
    data = {}
    for field in fields(Block):
        if field.name == "extra":
            continue
        value = getattr(block, field.name)
        if field.name == "box":
            value = list(value)
        elif field.name == "polygon" and value is not None:
            value = [list(point) for point in value]
        elif field.name == "style":
            value = override_to_dict(value)
        elif field.name == "mask_edits":
            value = [stroke_to_dict(s) for s in value]
        data[field.name] = value
    return with_unknown(data, block.extra)


def project_from_dict(data, path: str | os.PathLike = "<project>") -> Project:
    """Build a Project from project-file data of any version this build reads (older ones are
    migrated, a newer major version comes back read-only); UserError naming `path` and the bad
    field."""
    path = Path(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise damaged(path, "not a Hayai Desktop project file")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise damaged(path, "the schema version is missing")
    if version < 1:
        raise damaged(path, f"unknown schema version {version}")
    opened = upgrade(data, PROJECT_SCHEMA, path)
    try:
        project = _project(opened.data, path)
    except UserError as exc:
        if opened.read_only:
            raise UserError(f"{opened.read_only} (This one cannot read it: {exc})") from exc
        raise
    project.read_only = opened.read_only
    return project


def _project(data: dict, path: Path) -> Project:
    reader = _Reader(path)
    source = reader.text(data, "source", "")
    order = reader.text(data, "order", "")
    if order not in ("rtl", "ltr"):
        reader.fail("order", f"must be 'rtl' or 'ltr', not {order!r}")
    pages_data = reader.items(data, "pages", "")
    pages = [reader.page(p, f"pages[{i}]") for i, p in enumerate(pages_data)]
    style = reader.style(data.get("style"), "style")
    glossary = [reader.glossary_entry(g, f"glossary[{i}]") for i, g in enumerate(data.get("glossary") or [])]
    sizes = reader.sizes(data, "")
    series_uuid = reader.text(data, "series_uuid", "", optional=True, default="")
    volume_uuid = reader.text(data, "volume_uuid", "", optional=True, default="")
    extra = unknown_keys(data, _TOP_KEYS)
    memory = memory_from_dict(data.get("memory")) if data.get("memory") is not None else StoryMemory()
    dismissed = [t for t in data.get("dismissed_proposals") or [] if isinstance(t, str)]
    return Project(source=source, pages=pages, order=order, style=style, glossary=glossary,
                   series_uuid=series_uuid, volume_uuid=volume_uuid, extra={FORMAT: extra} if extra else {},
                   sizes=sizes or "each", memory=memory, dismissed_proposals=dismissed,
                   outside=reader.outside(data.get("outside"), "outside"))


def project_fields_to_dict(project: Project) -> dict:
    """The project's own fields (not its pages): reading order, lettering style, glossary, sizes,
    the policies for text outside bubbles."""
    return {"order": project.order, "style": style_to_dict(project.style), "sizes": project.sizes,
            "glossary": [{"source": g.source, "target": g.target, "note": g.note} for g in project.glossary],
            "outside": dict(project.outside)}


def project_fields_from_dict(data, path: str | os.PathLike = "<project>") -> dict:
    """`project_fields_to_dict` data back as Project keyword arguments; UserError naming `path`."""
    reader = _Reader(Path(path))
    data = reader.obj(data, "project")
    order = reader.text(data, "order", "project")
    if order not in ("rtl", "ltr"):
        reader.fail("project.order", f"must be 'rtl' or 'ltr', not {order!r}")
    glossary = reader.items(data, "glossary", "project")
    return {"order": order, "style": reader.style(data.get("style"), "project.style"),
            "sizes": reader.sizes(data, "project") or "each",
            "glossary": [reader.glossary_entry(g, f"project.glossary[{i}]") for i, g in enumerate(glossary)],
            "outside": reader.outside(data.get("outside"), "project.outside")}


def page_from_dict(data, path: str | os.PathLike = "<page>") -> Page:
    """A Page from `page_to_dict` data; UserError naming `path` and the bad field."""
    return _Reader(Path(path)).page(data, "page")


def damaged(path: Path, why: str) -> UserError:
    return UserError(f"{path}: the project file is damaged ({why}). Restore it from a backup, "
                     "or move it away to start the project over.")


class _Reader:
    """Typed field access with messages like 'pages[3].blocks[0].box: expected 4 numbers'."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: str, why: str):
        raise damaged(self.path, f"{where}: {why}")

    def obj(self, data, where: str) -> dict:
        if not isinstance(data, dict):
            self.fail(where or "top level", "expected an object")
        return data

    def get(self, data: dict, key: str, where: str):
        if key not in data:
            self.fail(_join(where, key), "missing")
        return data[key]

    def text(self, data: dict, key: str, where: str, optional=False, default=None):
        if optional and data.get(key) is None:
            return default
        value = self.get(data, key, where)
        if not isinstance(value, str):
            self.fail(_join(where, key), "expected text")
        return value

    def number(self, value, where: str, integer=False):
        ok = isinstance(value, int if integer else (int, float)) and not isinstance(value, bool)
        if not ok:
            self.fail(where, "expected an integer" if integer else "expected a number")
        return value

    def flag(self, data: dict, key: str, where: str) -> bool:
        value = data.get(key, False)
        if not isinstance(value, bool):
            self.fail(_join(where, key), "expected true or false")
        return value

    def items(self, data: dict, key: str, where: str) -> list:
        value = self.get(data, key, where)
        if not isinstance(value, list):
            self.fail(_join(where, key), "expected a list")
        return value

    def style(self, data, where: str) -> TextStyle:
        if data is None:
            return TextStyle()
        try:
            return style_from_dict(data)
        except (ValueError, TypeError) as exc:
            self.fail(where, str(exc))

    def sizes(self, data: dict, where: str) -> str | None:
        from app.render.page import SIZE_MODES

        value = data.get("sizes")
        if value is not None and value not in SIZE_MODES:
            self.fail(_join(where, "sizes"), f"expected one of {', '.join(SIZE_MODES)}, not {value!r}")
        return value

    def outside(self, data, where: str) -> dict[str, str]:
        """The policies for text outside bubbles (document.outside_from); an error names the key."""
        try:
            return outside_from(data, where)
        except ValueError as exc:
            where, _, why = str(exc).partition(": ")
            self.fail(where, why)

    def block_style(self, data, where: str):
        try:
            return override_from_dict(data)
        except (ValueError, TypeError) as exc:
            self.fail(where, str(exc))

    def strokes(self, data, where: str) -> tuple:
        if data is None:
            return ()
        if not isinstance(data, list):
            self.fail(where, "expected a list of brush strokes")
        out = []
        for i, item in enumerate(data):
            try:
                out.append(stroke_from_dict(item))
            except ValueError as exc:
                self.fail(f"{where}[{i}]", str(exc))
        return tuple(out)

    def page(self, data, where: str) -> Page:
        data = self.obj(data, where)
        blocks_data = self.items(data, "blocks", where) if "blocks" in data else []
        return Page(
            name=self.text(data, "name", where),
            width=self.number(data.get("width", 0), f"{where}.width", integer=True),
            height=self.number(data.get("height", 0), f"{where}.height", integer=True),
            blocks=tuple(self.block(b, f"{where}.blocks[{i}]") for i, b in enumerate(blocks_data)),
            processed=self.flag(data, "processed", where),
            error=self.text(data, "error", where, optional=True),
            sizes=self.sizes(data, where),
            order_by_hand=self.flag(data, "order_by_hand", where),
            order_check=self.text(data, "order_check", where, optional=True) or None,
            checked=self.flag(data, "checked", where),
            extra=unknown_keys(data, _PAGE_KEYS) or None,
        )

    def block(self, data, where: str) -> Block:
        data = self.obj(data, where)
        box = self.get(data, "box", where)
        if not isinstance(box, list) or len(box) != 4:
            self.fail(f"{where}.box", "expected 4 numbers [x0, y0, x1, y1]")
        box = tuple(float(self.number(v, f"{where}.box")) for v in box)
        polygon = data.get("polygon")
        if polygon is not None:
            if not isinstance(polygon, list) or not all(
                    isinstance(p, list) and len(p) == 2 for p in polygon):
                self.fail(f"{where}.polygon", "expected a list of [x, y] points or null")
            polygon = tuple((float(self.number(x, f"{where}.polygon")),
                             float(self.number(y, f"{where}.polygon"))) for x, y in polygon)
        score = data.get("score")
        patches = data.get("patches")
        return Block(
            id=self.text(data, "id", where),
            order=self.number(self.get(data, "order", where), f"{where}.order", integer=True),
            kind=self.text(data, "kind", where),
            box=box, polygon=polygon,
            vertical=self.flag(data, "vertical", where),
            score=None if score is None else float(self.number(score, f"{where}.score")),
            ocr_text=self.text(data, "ocr_text", where, optional=True, default=""),
            text=self.text(data, "text", where, optional=True),
            translation=self.text(data, "translation", where, optional=True, default=""),
            model=self.text(data, "model", where, optional=True, default=""),
            patches=None if patches is None else self.number(patches, f"{where}.patches", integer=True),
            style=self.block_style(data.get("style"), f"{where}.style"),
            mask_edits=self.strokes(data.get("mask_edits"), f"{where}.mask_edits"),
            machine_translation=self.text(data, "machine_translation", where, optional=True, default=""),
            translator=self.text(data, "translator", where, optional=True, default=""),
            machine_flag=self.text(data, "machine_flag", where, optional=True, default=""),
            approved=self.flag(data, "approved", where),
            extra=unknown_keys(data, _BLOCK_KEYS) or None,
        )

    def glossary_entry(self, data, where: str) -> GlossaryEntry:
        data = self.obj(data, where)
        return GlossaryEntry(self.text(data, "source", where), self.text(data, "target", where),
                             self.text(data, "note", where, optional=True, default=""))


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


