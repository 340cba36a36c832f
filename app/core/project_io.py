"""The project file: save, load, find and reopen a source's project; autosave for crash recovery.

Where a project lives (`project_path_for`):
- a folder of pages: `<folder>/.hayai-project.json`;
- an archive or single image: `<archive>.hayai.json` beside it (e.g. `vol1.cbz.hayai.json`);
- when that folder is not writable, or lies inside the app's own installation (the demo's
  sample pages: read-only in a bundle, the repository in a source install):
  `<data dir>/projects/<hash of the absolute path>.json`.
The data dir is platformdirs' user data dir for "hayai-desktop", or $HAYAI_DATA_DIR when set.

Autosaves (`save_autosave`) always go to `<data dir>/autosave/<hash>.json`, apart from the
explicit save, so that frequent background writes never touch the user's folder. On start the
GUI calls `recoverable_autosave(source)`: a path when an autosave newer than the project file
exists (offer to restore it with `load_project`), else None.

File format (JSON, UTF-8), schema version 1.3 (see docs/export-format.md; versions, migrations and
unknown keys: app.core.versioning):
    {"format": "hayai-desktop-project", "version": 1, "minor": 3, "app_version": str, "saved_at": ISO-8601,
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
know is kept and lettered in place. "outside" (1.3) says how captions and sound effects
are lettered (app.core.document.OUTSIDE_POLICIES); absent: both translated in place, as before.
A page may also hold "sizes" (its own size harmonisation; absent = the project's).
A page's "order_by_hand": true (written only when so) says the user renumbered its blocks.
"machine_translation", "translator", "machine_flag", "glossary", "style" and "mask_edits" are optional (files
saved before machine translation and translated pages load with them empty / the defaults; the
migration from 1.0 fills them in). Keys this build does not know, at the top, in a page or in a
block, are kept (`extra`) and written back; a file of a newer major version loads read-only
(`Project.read_only`), and `save_project` refuses to write over it.
"series_uuid" and "volume_uuid" (the identity the .mokuro export gives readers, app.core.mokuro)
are written once set (optional keys within 1.1).

A source that is a mokuro volume (a .mokuro file, a folder holding one, or the page folder beside
one) opens as its page folder; with no saved project yet, the project starts from the .mokuro's
blocks (app.core.mokuro). A saved project always wins over the .mokuro, so edits are never lost.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import fields, replace
from datetime import datetime, timezone
from pathlib import Path

from app import __version__
from app.atomic import atomic_write_text
from app.core.document import OUTSIDE_KINDS, OUTSIDE_POLICIES, Block, Page, Project, default_outside
from app.core.sources import natural_key, open_source
from app.core.versioning import FileSchema, unknown_keys, upgrade, with_unknown
from app.errors import UserError
from app.render.strokes import stroke_from_dict, stroke_to_dict
from app.render.style import TextStyle, override_from_dict, override_to_dict, style_from_dict, style_to_dict
from app.translate.base import GlossaryEntry
from app.translate.memory import StoryMemory, memory_from_dict, memory_to_dict

FORMAT = "hayai-desktop-project"
SCHEMA_VERSION = 1
SCHEMA_MINOR = 3  # 1.2: "sizes" (the project's and a page's size harmonisation); 1.3: "outside", kinds caption / sfx
FOLDER_PROJECT_NAME = ".hayai-project.json"
FILE_PROJECT_SUFFIX = ".hayai.json"
MISSING_PAGE_ERROR = "missing from the source"  # Page.error prefix for pages no longer on disk


# ----------------------------------------------------------------------------- locations

def data_dir() -> Path:
    """The app's per-user data folder ($HAYAI_DATA_DIR overrides it, e.g. in tests)."""
    override = os.environ.get("HAYAI_DATA_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_data_dir("hayai-desktop", appauthor=False))


def _abs(source_path: str | os.PathLike) -> Path:
    return Path(os.path.abspath(os.fspath(source_path)))


def source_key(source_path: str | os.PathLike) -> str:
    """A stable 20-hex-digit key for a source: sha256 of its normalised absolute path."""
    normalised = os.path.normcase(str(_abs(source_path)))
    return hashlib.sha256(normalised.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def _beside_path(source: Path) -> Path:
    if source.is_dir():
        return source / FOLDER_PROJECT_NAME
    return source.with_name(source.name + FILE_PROJECT_SUFFIX)


def _fallback_path(source: Path) -> Path:
    return data_dir() / "projects" / f"{source_key(source)}.json"


def _writable(folder: Path) -> bool:
    """True when a file can really be created in `folder` (os.access lies for root, ACLs, RO mounts)."""
    probe = folder / f".hayai-write-test-{os.getpid()}"
    try:
        with open(probe, "x"):
            pass
    except OSError:
        return False
    with contextlib.suppress(OSError):
        probe.unlink()
    return True


def in_installation(path: str | os.PathLike) -> bool:
    """Does `path` lie inside the app's own files (app.paths.app_root(): the checkout or the bundle)?"""
    from app.paths import app_root

    try:
        _abs(path).resolve().relative_to(app_root().resolve())
    except ValueError:
        return False
    return True


def project_path_for(source_path: str | os.PathLike) -> Path:
    """Where the project of this folder/archive is saved: beside the pages when writable and not
    part of the app's installation, else in the data dir."""
    source = _abs(source_path)
    beside = _beside_path(source)
    if in_installation(source) or not _writable(beside.parent):
        return _fallback_path(source)
    return beside


def find_project_file(source_path: str | os.PathLike) -> Path | None:
    """The saved project file of this source (beside it or in the data dir; newest wins)."""
    source = _abs(source_path)
    found = [p for p in (_beside_path(source), _fallback_path(source)) if p.is_file()]
    if not found:
        return None
    return max(found, key=lambda p: p.stat().st_mtime_ns)


def autosave_path_for(source_path: str | os.PathLike) -> Path:
    """Where background autosaves of this source's project go (always in the data dir)."""
    return data_dir() / "autosave" / f"{source_key(source_path)}.json"


# ----------------------------------------------------------------------------- versions

_TOP_KEYS = ("format", "version", "minor", "app_version", "saved_at", "source", "order", "style", "glossary",
             "series_uuid", "volume_uuid", "pages", "sizes", "memory",
             "dismissed_proposals", "outside")
_PAGE_KEYS = ("name", "width", "height", "processed", "error", "order_by_hand", "blocks", "sizes")
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


def save_project(project: Project, path: str | os.PathLike | None = None) -> Path:
    """Write the project file atomically; returns its path.

    With no `path`, saves to `project_path_for(project.source)` and, once that succeeded,
    deletes the source's autosave (it is now older than the saved project). Raises UserError
    when the file cannot be written (the previous file is kept intact), and when the project
    was read from a file of a newer major version (`Project.read_only`).
    """
    target = Path(path) if path is not None else project_path_for(project.source)
    if project.read_only:
        raise UserError(project.read_only)
    _write(project, target)
    if path is None:
        discard_autosave(project.source)
    return target


def _write(project: Project, target: Path) -> None:
    data = project_to_dict(project)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, lambda stream: _dump(data, stream))
    except OSError as exc:
        raise UserError(f"{target}: cannot save the project ({exc.strerror or exc}). Free some "
                        "disk space or check the folder's permissions; the previous save is "
                        "intact.") from exc


def _dump(data: dict, stream) -> None:
    """Write the project JSON with one page per line: readable, diffable, and about 5x faster
    than an indented json.dump (indent disables the C encoder). Streams page by page."""
    pages = data["pages"]
    head = {k: v for k, v in data.items() if k != "pages"}
    stream.write(json.dumps(head, ensure_ascii=False, allow_nan=False)[:-1])
    stream.write(', "pages": [')
    for i, page in enumerate(pages):
        stream.write(",\n" if i else "\n")
        stream.write(json.dumps(page, ensure_ascii=False, allow_nan=False))
    stream.write("\n]}\n")


def load_project(path: str | os.PathLike) -> Project:
    """Read a project file. Raises UserError naming the file when it is missing or damaged."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise UserError(f"{path}: no such project file.") from exc
    except UnicodeDecodeError as exc:
        raise _damaged(path, f"not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise UserError(f"{path}: cannot read the project file ({exc.strerror or exc}).") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _damaged(path, f"invalid JSON at line {exc.lineno}, column {exc.colno}") from exc
    return project_from_dict(data, path)


def project_from_dict(data, path: str | os.PathLike = "<project>") -> Project:
    """Build a Project from project-file data of any version this build reads (older ones are
    migrated, a newer major version comes back read-only); UserError naming `path` and the bad
    field."""
    path = Path(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _damaged(path, "not a Hayai Desktop project file")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise _damaged(path, "the schema version is missing")
    if version < 1:
        raise _damaged(path, f"unknown schema version {version}")
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


def _damaged(path: Path, why: str) -> UserError:
    return UserError(f"{path}: the project file is damaged ({why}). Restore it from a backup, "
                     "or move it away to start the project over.")


class _Reader:
    """Typed field access with messages like 'pages[3].blocks[0].box: expected 4 numbers'."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: str, why: str):
        raise _damaged(self.path, f"{where}: {why}")

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
        """The policies for text outside bubbles; absent: the defaults. A kind this build does not
        know is kept (a newer build's), a policy it does not know is an error naming the key."""
        out = default_outside()
        if data is None:
            return out
        data = self.obj(data, where)
        for kind, policy in data.items():
            if kind in OUTSIDE_KINDS and policy not in OUTSIDE_POLICIES:
                self.fail(f"{where}.{kind}", f"must be one of {', '.join(OUTSIDE_POLICIES)}, not {policy!r}")
            out[kind] = policy
        return out

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


# ----------------------------------------------------------------------------- reopening

def open_project(source_path: str | os.PathLike, page_names: list[str] | None = None,
                 project_file: str | os.PathLike | None = None, replay_journal: bool = False) -> Project:
    """The project of a source: its saved project merged with the pages on disk now.

    `page_names` is the source's current page list (listed with `open_source` when None).
    `project_file` loads that file instead of the saved project (e.g. a recovered autosave).
    `replay_journal`: apply the source's edit journal (app.core.edit_journal) on top, the edits
    committed after the last autosave (crash recovery).
    Pages added on disk appear unprocessed; pages gone from disk are dropped, except those
    holding blocks, which stay (so no typed text is lost) with `error` saying they are missing.
    Raises UserError for a damaged project file (so it is never silently overwritten).
    A mokuro volume opens as its page folder; without a saved project its blocks come from the
    .mokuro file (app.core.mokuro).
    """
    from app.core.mokuro import mokuro_for_images, project_from_mokuro
    from app.core.sources import resolve_source_path

    source = resolve_source_path(source_path)
    if page_names is None:
        with open_source(source) as opened:
            page_names = list(opened.page_names)
    path = Path(project_file) if project_file is not None else find_project_file(source)
    if path is None:
        mokuro = mokuro_for_images(source)
        saved = project_from_mokuro(mokuro, source) if mokuro is not None else Project(source=str(source), pages=[])
    else:
        saved = load_project(path)
    if replay_journal:
        from app.core.edit_journal import replay

        saved, _applied = replay(saved, source)
    if path is None and not saved.pages:
        return Project(source=str(source), pages=[Page(name=n) for n in page_names], order=saved.order,
                       style=saved.style, glossary=list(saved.glossary), memory=saved.memory,
                       dismissed_proposals=list(saved.dismissed_proposals), outside=dict(saved.outside))
    return merge_pages(saved, page_names, source=str(source))


def merge_pages(saved: Project, page_names: list[str], source: str | None = None) -> Project:
    """`saved` updated to the current page list (see `open_project`); `saved` is not changed."""
    current = set(page_names)
    by_name = {p.name: p for p in saved.pages}
    pages = []
    for name in page_names:
        page = by_name.get(name, Page(name=name))
        if page.error and page.error.startswith(MISSING_PAGE_ERROR):
            page = replace(page, error=None)  # the file is back
        pages.append(page)
    kept = len(pages)
    for page in saved.pages:
        if page.name not in current and page.blocks:
            error = (f"{MISSING_PAGE_ERROR}: {page.name} is no longer in the folder or archive. "
                     "Put the file back to see the page, or delete the page to drop its text.")
            pages.append(replace(page, error=error))
    if len(pages) > kept:  # `page_names` is in natural order already: only missing pages need a place
        pages.sort(key=lambda p: natural_key(p.name))
    return Project(source=source or saved.source, pages=pages, order=saved.order,
                   version=saved.version, glossary=list(saved.glossary), style=saved.style,
                   series_uuid=saved.series_uuid, volume_uuid=saved.volume_uuid,
                   extra=dict(saved.extra), read_only=saved.read_only, sizes=saved.sizes, memory=saved.memory,
                   dismissed_proposals=list(saved.dismissed_proposals), outside=dict(saved.outside))


# ----------------------------------------------------------------------------- autosave

def save_autosave(project: Project) -> Path:
    """Write a crash-recovery snapshot of the project (atomically) to its autosave path."""
    target = autosave_path_for(project.source)
    _write(project, target)
    return target


def recoverable_edits(source_path: str | os.PathLike) -> bool:
    """Did the last session on this source end without saving: an autosave newer than the
    project, or committed edits in its journal? (Then `open_project(..., project_file=
    recoverable_autosave(source), replay_journal=True)` restores them.)"""
    from app.core.edit_journal import has_edits

    return recoverable_autosave(source_path) is not None or has_edits(source_path)


def recoverable_autosave(source_path: str | os.PathLike) -> Path | None:
    """The autosave path when one exists that is newer than the saved project, else None."""
    autosave = autosave_path_for(source_path)
    if not autosave.is_file():
        return None
    saved = find_project_file(source_path)
    if saved is not None and saved.stat().st_mtime_ns >= autosave.stat().st_mtime_ns:
        return None
    return autosave


def load_autosave(source_path: str | os.PathLike) -> Project | None:
    """The autosaved project of this source, or None when there is none."""
    autosave = autosave_path_for(source_path)
    return load_project(autosave) if autosave.is_file() else None


def discard_autosave(source_path: str | os.PathLike) -> None:
    """Delete the source's autosave and edit journal (after an explicit save, or when the user
    declines to restore them)."""
    from app.core.edit_journal import discard

    with contextlib.suppress(FileNotFoundError):
        autosave_path_for(source_path).unlink()
    discard(source_path)
