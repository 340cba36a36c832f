"""mokuro volumes: export a project for mokuro's readers (the import: app.core.sources.mokuro_volume).

mokuro (github.com/kha-white/mokuro) writes, for a volume whose pages are in `TITLE/VOLUME/`, the
file `TITLE/VOLUME.mokuro` (JSON) beside that folder; its readers (mokuro-reader and others) take
the .mokuro together with the page images. This module writes the same layout:

    OUT/VOLUME.mokuro      the text of every page (below)
    OUT/VOLUME/            the page images, named as `img_path` says (flat: readers match by name)
    OUT/VOLUME.html        the reader page (app.core.exports.reader_page), when asked for

The .mokuro (all documented in docs/export-format.md):

    {"version": "0.2.0", "title": TITLE, "title_uuid": UUID, "volume": VOLUME, "volume_uuid": UUID,
     "pages": [{"version", "img_path", "img_width", "img_height",
                "blocks": [{"box": [x0, y0, x1, y1], "vertical", "font_size",
                            "lines": [str, ...], "lines_coords": [[[x, y] x 4], ...],
                            "text", "translation"}]}],
     "hayai_desktop": app version}

`text` (the block's whole text, line breaks included) and `translation` are extra fields that
readers ignore; blocks come in reading order. `lines` and `lines_coords` are laid out here from
the block's text and box: the lines (columns of vertical text right to left, rows of horizontal
text top to bottom) are found in the block's ink when it shows them, else set in the box
(app.core.exports.mokuro_lines).

UUIDs: the series' UUID is random once, then kept in the project (`Project.series_uuid`); the
volume's is uuid5(series UUID, volume name) unless the volume came from a .mokuro file (its own
is kept). Exporting over an existing .mokuro of a project that has none yet adopts that file's
UUIDs. So a reader keeps its progress when a volume is exported again.

Opening a .mokuro file as a project (`project_from_mokuro`) is app.core.sources.mokuro_volume'.
"""
from __future__ import annotations

import io
import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from app import __version__
from app.atomic import atomic_open, atomic_write_text
from app.core.document.types import Block, Page, Project
from app.core.exports.mokuro_lines import LaidOut, layout_lines, number, quad
from app.core.sources.mokuro_volume import MOKURO_SUFFIX
from app.errors import Cancelled, UserError
from app.textfile import read_json_file

MOKURO_VERSION = "0.2.0"  # the mokuro format version written (readers ask for 0.2.0 or later)
READER_IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")  # what mokuro's readers display
# A fixed namespace for ids that are not UUIDs (a .mokuro file may hold any string).
_NAMESPACE = uuid.UUID("5b0c3a0e-8f6e-4d7a-9c61-6b1f2d6b7a10")


# ----------------------------------------------------------------------------- names and UUIDs

def default_names(project: Project, out: str | os.PathLike | None = None) -> tuple[str, str]:
    """(title, volume) for a project exported into the folder `out`: as mokuro names them, the
    folder that holds the .mokuro is the title (else the source's parent folder), the source's
    own name the volume."""
    src = Path(project.source)
    volume = src.stem if src.suffix.lower() in (".cbz", ".zip") or src.is_file() else src.name
    title = Path(os.path.abspath(out)).name if out is not None else src.parent.name
    return (title or "manga"), (volume or "volume")


def _as_uuid(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except (ValueError, AttributeError, TypeError):
        return uuid.uuid5(_NAMESPACE, str(value))


def _read_ids(path: Path) -> tuple[str, str]:
    """(title_uuid, volume_uuid) of an existing .mokuro file, "" where it has none or is unreadable."""
    try:
        data = read_json_file(path, ".mokuro file")
    except UserError:
        return "", ""
    if not isinstance(data, dict):
        return "", ""
    t, v = data.get("title_uuid"), data.get("volume_uuid")
    return (t if isinstance(t, str) else ""), (v if isinstance(v, str) else "")


def volume_ids(project: Project, mokuro_path: Path, volume: str) -> tuple[str, str]:
    """(title_uuid, volume_uuid) for exporting `project` as `volume` to `mokuro_path`."""
    title_uuid, volume_uuid = project.series_uuid, project.volume_uuid
    if not title_uuid:
        old_title, old_volume = _read_ids(mokuro_path)
        if old_title:
            title_uuid, volume_uuid = old_title, volume_uuid or old_volume
        else:  # another volume of the series exported to the same folder
            others = {_read_ids(p)[0] for p in mokuro_path.parent.glob("*" + MOKURO_SUFFIX) if p != mokuro_path}
            others.discard("")
            title_uuid = others.pop() if len(others) == 1 else str(uuid.uuid4())
    if not volume_uuid:
        volume_uuid = str(uuid.uuid5(_as_uuid(title_uuid), volume))
    return title_uuid, volume_uuid


# ----------------------------------------------------------------------------- export

@dataclass
class MokuroExport:
    """What `export_mokuro` wrote: the .mokuro, the image folder, the reader page (or None),
    the pages skipped (name, why), and the project with its series UUID set (save it)."""

    project: Project
    mokuro: Path
    images: Path
    html: Path | None = None
    pages: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)


def image_names(page_names: list[str]) -> dict[str, str]:
    """A flat, unique file name for each page (readers match images by file name alone):
    the page's own name when that is unique, else its path with "_" for "/"."""
    base = {n: PurePosixPath(n).name for n in page_names}
    counts: dict[str, int] = {}
    for b in base.values():
        counts[b.casefold()] = counts.get(b.casefold(), 0) + 1
    out, used = {}, set()
    for n in page_names:
        name = base[n] if counts[base[n].casefold()] == 1 else n.replace("/", "_")
        stem, suffix = os.path.splitext(name)
        if suffix.lower() not in READER_IMAGE_SUFFIXES:
            suffix = ".png"  # converted: readers show jpg, png and webp only
        name, i = stem + suffix, 1
        while name.casefold() in used:
            i += 1
            name = f"{stem}-{i}{suffix}"
        used.add(name.casefold())
        out[n] = name
    return out


def _image_bytes(source, name: str, target: str) -> bytes:
    """The page as readers should get it: its own bytes when they already are an upright image
    of the target's format, else the decoded (upright) page re-encoded."""
    from PIL import Image

    data = source.read_bytes(name)
    same_kind = os.path.splitext(name)[1].lower() == os.path.splitext(target)[1].lower() or (
        os.path.splitext(name)[1].lower() in (".jpg", ".jpeg") and target.lower().endswith((".jpg", ".jpeg")))
    if same_kind:
        try:
            with Image.open(io.BytesIO(data)) as im:
                upright = im.getexif().get(0x0112, 1) in (None, 1)
        except Exception:  # noqa: BLE001 - undecodable: load() below says why, naming the file
            upright = False
        if upright:
            return data
    image = source.load(name)
    buf = io.BytesIO()
    if target.lower().endswith((".jpg", ".jpeg")):
        image.save(buf, "JPEG", quality=95)
    elif target.lower().endswith(".webp"):
        image.save(buf, "WEBP", lossless=True)
    else:
        image.save(buf, "PNG")
    return buf.getvalue()


def page_ink(gray, block: Block):
    """The ink lines of a block on the grayscale page (None when they cannot be read)."""
    from app.detect.lines import ink_lines

    try:
        return ink_lines(gray, block.box, block.vertical)
    except Exception:  # noqa: BLE001 - a failed ink reading falls back to the box's geometry
        return None


def block_lines(block: Block, gray=None) -> LaidOut:
    """The block's text laid out in lines (over its ink when the page `gray` is given)."""
    ink = page_ink(gray, block) if gray is not None and block.display_text.strip() else None
    return layout_lines(block.display_text, block.box, block.vertical, ink)


def mokuro_block(block: Block, laid: LaidOut) -> dict:
    return {
        "box": [number(v) for v in block.box],
        "vertical": bool(block.vertical),
        "font_size": laid.font_size,
        "lines_coords": [quad(r) for r in laid.rects],
        "lines": list(laid.lines),
        "text": block.display_text,
        "translation": block.translation,
    }


@dataclass
class VolumePage:
    """One page of an exported volume: its image file name, size and laid-out blocks."""

    page: Page
    image: str
    width: int
    height: int
    blocks: list[tuple[Block, LaidOut]]


def export_pages(project: Project, store: Callable[[str, bytes], None] | None, progress=None, cancel=None,
                 skipped: list | None = None) -> list[VolumePage]:
    """Read every page of the project's source, lay out its blocks and hand its image (file
    name, bytes) to `store`. Pages whose image cannot be read go to `skipped`."""
    import numpy as np

    from app.core.sources.source import open_source

    skipped = skipped if skipped is not None else []
    try:
        source = open_source(project.source)
    except (UserError, OSError) as exc:
        raise UserError(f"{project.source}: the pages of this project cannot be opened ({exc}). Put the folder or "
                        "archive back where it was.") from exc
    out: list[VolumePage] = []
    try:
        live = [p for p in project.pages if p.name in set(source.page_names)]
        for p in project.pages:
            if p.name not in set(source.page_names):
                skipped.append((p.name, p.error or "not in the source"))
        names = image_names([p.name for p in live])
        for done, page in enumerate(live, start=1):
            if cancel is not None and cancel():
                raise Cancelled()
            try:
                image = source.load(page.name)
                data = _image_bytes(source, page.name, names[page.name]) if store is not None else None
            except UserError as exc:
                skipped.append((page.name, str(exc)))
                continue
            gray = np.asarray(image.convert("L"))
            blocks = [(b, block_lines(b, gray)) for b in sorted(page.blocks, key=lambda b: b.order)]
            if data is not None:
                store(names[page.name], data)
            out.append(VolumePage(page, names[page.name], image.width, image.height, blocks))
            if progress is not None:
                progress(done, len(live), page.name)
    finally:
        source.close()
    return out


def mokuro_data(project: Project, pages: list[VolumePage], title: str, volume: str,
                title_uuid: str, volume_uuid: str) -> dict:
    return {
        "version": MOKURO_VERSION,
        "title": title,
        "title_uuid": title_uuid,
        "volume": volume,
        "volume_uuid": volume_uuid,
        "pages": [{
            "version": MOKURO_VERSION,
            "img_width": vp.width,
            "img_height": vp.height,
            "blocks": [mokuro_block(b, laid) for b, laid in vp.blocks],
            "img_path": vp.image,
        } for vp in pages],
        "hayai_desktop": __version__,
    }


def _check_name(what: str, value: str) -> str:
    value = value.strip()
    if not value or value in (".", "..") or any(c in value for c in '/\\\0'):
        raise UserError(f"the {what} name {value!r} cannot be a file name: give one without slashes")
    return value


def export_mokuro(project: Project, out: str | os.PathLike, title: str | None = None,
                  volume: str | None = None, reader_page: bool = True,
                  progress: Callable[[int, int, str], None] | None = None,
                  cancel: Callable[[], bool] | None = None) -> MokuroExport:
    """Write `out/VOLUME.mokuro`, the page images in `out/VOLUME/` and (reader_page) the reader
    page `out/VOLUME.html` that shows them. `title` / `volume` default to `default_names`.
    When `out/VOLUME/` is the project's own page folder (the .mokuro goes beside the volume, as
    mokuro puts it) its pages stay as they are; a page readers could not show refuses that.
    progress(done, total, page name) after each page; cancel() -> True raises Cancelled."""
    from app.core.exports import reader_page as reader

    d_title, d_volume = default_names(project, out)
    title = _check_name("title", title or d_title)
    volume = _check_name("volume", volume or d_volume)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"{out} is a file; a mokuro volume is written into a folder (VOLUME.mokuro and "
                        "the VOLUME folder of page images beside it)")
    mokuro_path = out / (volume + MOKURO_SUFFIX)
    images = out / volume
    in_place = Path(project.source).resolve() == images.resolve()  # VOLUME.mokuro beside the page folder
    try:
        images.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{images}: cannot create the folder ({exc.strerror or exc}). Choose another "
                        "folder.") from exc
    title_uuid, volume_uuid = volume_ids(project, mokuro_path, volume)
    project = replace(project, series_uuid=title_uuid, glossary=list(project.glossary))
    result = MokuroExport(project, mokuro_path, images)
    def store(name: str, data: bytes) -> None:
        target = images / name
        if in_place:  # the pages are already there, as readers need them: nothing to write
            if target.is_file() and target.read_bytes() == data:
                return
            raise UserError(f"{target}: exporting beside the volume's own page folder works only when its pages "
                            "are JPEG, PNG or WebP files readers can show as they are (this one must be "
                            "converted or renamed); export to another folder.")
        try:
            with atomic_open(target, binary=True) as stream:
                stream.write(data)
        except OSError as exc:
            raise UserError(f"{target}: cannot write the page image ({exc.strerror or exc}). Choose "
                            "another folder or free some disk space.") from exc

    pages = export_pages(project, store, progress, cancel, result.skipped)
    data = mokuro_data(project, pages, title, volume, title_uuid, volume_uuid)
    _write(mokuro_path, json.dumps(data, ensure_ascii=False, allow_nan=False))
    result.pages = len(pages)
    if reader_page:
        html = reader.reader_html(data, project.order, image_prefix=volume + "/")
        result.html = _write(out / (volume + ".html"), html)
    return result


def export_reader(project: Project, out: str | os.PathLike, title: str | None = None,
                  volume: str | None = None,
                  progress: Callable[[int, int, str], None] | None = None,
                  cancel: Callable[[], bool] | None = None) -> MokuroExport:
    """Write the reader page of the project as one self-contained HTML file `out` (the page
    images inside it as data URIs). The same pages and lines as `export_mokuro`."""
    import base64

    from app.core.exports import reader_page as reader

    out = Path(out)
    if out.is_dir():
        raise UserError(f"{out} is a folder; the reader page is one file: give a name such as "
                        f"{out / 'volume.html'}")
    d_title, d_volume = default_names(project)
    title, volume = title or d_title, volume or d_volume
    uris: dict[str, str] = {}
    mime = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".webp": "image/webp"}

    def store(name: str, data: bytes) -> None:
        kind = mime[os.path.splitext(name)[1].lower()]
        uris[name] = f"data:{kind};base64," + base64.b64encode(data).decode("ascii")

    result = MokuroExport(project, out, out)
    pages = export_pages(project, store, progress, cancel, result.skipped)
    ids = (project.series_uuid, project.volume_uuid)
    data = mokuro_data(project, pages, title, volume, *ids)
    result.html = _write(out, reader.reader_html(data, project.order, images=uris))
    result.pages = len(pages)
    return result


def _write(path: Path, text: str) -> Path:
    try:
        return atomic_write_text(path, text)
    except OSError as exc:
        raise UserError(f"{path}: cannot write the export ({exc.strerror or exc}). Choose another folder or "
                        "free some disk space.") from exc
