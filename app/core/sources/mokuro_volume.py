"""Finding and reading .mokuro files (mokuro's volumes): which .mokuro a path names, its JSON
checked, the folder of its page images, and the project a .mokuro file opens as. Used by
app.core.sources.source (a mokuro volume opens as its page folder), app.core.project.files (a volume with
no saved project starts from its .mokuro's blocks) and app.core.exports.mokuro (the export); imports
none of them.

The project of a .mokuro file (`project_from_mokuro`): one block per .mokuro block, in the
file's order, its lines joined (or its `text` when that still matches the lines), its
translation when present; the pages are the images beside the .mokuro (`images_root`).
"""
from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from app.core.document.types import Block, Page, Project
from app.errors import UserError
from app.textfile import read_json_file

MOKURO_SUFFIX = ".mokuro"


def mokuro_file_in(path: Path) -> Path | None:
    """The .mokuro file that `path` names: the file itself, the one .mokuro a folder holds, or
    the one beside a page folder (`TITLE/VOLUME/` -> `TITLE/VOLUME.mokuro`); None for other
    paths. A folder holding several .mokuro files is refused: each one is a volume."""
    path = Path(path)
    if path.suffix.lower() == MOKURO_SUFFIX and path.is_file():
        return path
    if not path.is_dir():
        return None
    try:
        inside = sorted(p for p in path.iterdir() if p.suffix.lower() == MOKURO_SUFFIX and p.is_file()
                        and not p.name.startswith("."))
    except OSError:
        return None
    if len(inside) == 1:
        return inside[0]
    if len(inside) > 1:
        names = ", ".join(p.name for p in inside[:5]) + (" ..." if len(inside) > 5 else "")
        raise UserError(f"{path}: holds {len(inside)} mokuro volumes ({names}); open one of the "
                        ".mokuro files, or its page folder.")
    beside = path.with_name(path.name + MOKURO_SUFFIX)
    return beside if beside.is_file() else None


def read_mokuro(path: str | os.PathLike) -> dict:
    """The JSON of a .mokuro file, checked: UserError naming the file and the bad field."""
    path = Path(path)
    data = read_json_file(path, ".mokuro file", "Run mokuro on the volume again.")

    def bad(where: str, why: str):
        raise UserError(f"{path}: not a valid .mokuro file ({where}: {why}). Run mokuro on the volume again.")

    if not isinstance(data, dict):
        bad("top level", "expected an object")
    if not isinstance(data.get("pages"), list):
        bad("pages", "missing or not a list")
    for i, page in enumerate(data["pages"]):
        where = f"pages[{i}]"
        if not isinstance(page, dict):
            bad(where, "expected an object")
        if not isinstance(page.get("img_path"), str) or not page["img_path"]:
            bad(f"{where}.img_path", "missing")
        for key in ("img_width", "img_height"):
            if not isinstance(page.get(key, 0), (int, float)) or isinstance(page.get(key), bool):
                bad(f"{where}.{key}", "expected a number")
        blocks = page.get("blocks", [])
        if not isinstance(blocks, list):
            bad(f"{where}.blocks", "expected a list")
        for j, block in enumerate(blocks):
            bw = f"{where}.blocks[{j}]"
            if not isinstance(block, dict):
                bad(bw, "expected an object")
            box = block.get("box")
            if not (isinstance(box, list) and len(box) == 4
                    and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in box)):
                bad(f"{bw}.box", "expected 4 numbers [x0, y0, x1, y1]")
            lines = block.get("lines", [])
            if not isinstance(lines, list) or not all(isinstance(t, str) for t in lines):
                bad(f"{bw}.lines", "expected a list of text")
    return data


def _first_image(mokuro: Path) -> str | None:
    """The first page's img_path, read once per version of the file (sources ask again and again)."""
    try:
        stamp = mokuro.stat().st_mtime_ns
    except OSError:
        stamp = None
    key = (str(mokuro), stamp)
    if key not in _FIRST:
        data = read_mokuro(mokuro)
        if len(_FIRST) > 64:
            _FIRST.clear()
        _FIRST[key] = next((p["img_path"] for p in data["pages"]), None)
    return _FIRST[key]


_FIRST: dict[tuple[str, int | None], str | None] = {}


def images_root(mokuro: Path) -> Path:
    """The folder of a .mokuro file's page images: `VOLUME/` beside it (mokuro's layout), or
    the .mokuro's own folder when the images lie there. UserError when neither holds them."""
    first = _first_image(mokuro)
    beside = mokuro.with_suffix("")
    candidates = [beside, mokuro.parent]
    for folder in candidates:
        if folder.is_dir() and (first is None or (folder / first).is_file()):
            return folder.resolve()
    if beside.is_dir():
        return beside.resolve()
    raise UserError(f"{mokuro}: its page images are not beside it: put the folder {beside.name}/ (the "
                    "images the .mokuro names) next to it, as mokuro writes them.")


def mokuro_for_images(folder: str | os.PathLike) -> Path | None:
    """The .mokuro file whose page images are in `folder`, or None."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    try:
        found = mokuro_file_in(folder)
    except UserError:
        return None
    if found is None:
        return None
    try:
        return found if images_root(found) == folder.resolve() else None
    except UserError:
        return None


# ----------------------------------------------------------------------------- the project of a .mokuro file

def join_lines(lines: list[str]) -> str:
    """A block's text from its lines: joined without a separator (Japanese and Chinese), with a
    space between two lines that end and start with Latin letters or digits."""
    out = ""
    for line in lines:
        line = line.strip("\n")
        if out and line and out[-1].isascii() and out[-1].isalnum() and line[0].isascii() and line[0].isalnum():
            out += " "
        out += line
    return out


def block_from_mokuro(data: dict, index: int) -> Block:
    lines = [t for t in data.get("lines", [])]
    text = join_lines(lines)
    own = data.get("text")
    if isinstance(own, str) and "".join(own.split()) == "".join("".join(lines).split()):
        text = own  # our export's text, line breaks included, still what the lines say
    translation = data.get("translation")
    return Block(
        id=f"b{index + 1}", order=index + 1, kind="text",
        box=tuple(float(v) for v in data["box"]),
        vertical=bool(data.get("vertical", False)),
        ocr_text=text,
        translation=translation if isinstance(translation, str) else "",
        model="mokuro" if own is None else "",
    )


def project_from_mokuro(mokuro: str | os.PathLike, images: str | os.PathLike | None = None) -> Project:
    """The project of a .mokuro file: its pages (named by img_path, relative to the image
    folder `images`, by default `images_root`), their blocks in the file's order, read."""
    mokuro = Path(mokuro)
    data = read_mokuro(mokuro)
    images = Path(images) if images is not None else images_root(mokuro)
    pages = []
    for page in data["pages"]:
        name = PurePosixPath(page["img_path"].replace("\\", "/")).as_posix()
        blocks = tuple(block_from_mokuro(b, i) for i, b in enumerate(page.get("blocks", [])))
        pages.append(Page(name=name, width=int(page.get("img_width", 0)), height=int(page.get("img_height", 0)),
                          blocks=blocks, processed=True))
    title_uuid = data.get("title_uuid")
    volume_uuid = data.get("volume_uuid")
    return Project(source=str(images), pages=pages, order="rtl",
                   series_uuid=title_uuid if isinstance(title_uuid, str) else "",
                   volume_uuid=volume_uuid if isinstance(volume_uuid, str) else "")
