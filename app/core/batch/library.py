"""Finding the volumes of a library: folders of pages and CBZ/ZIP archives, found recursively.

A LIBRARY argument is
- a CBZ/ZIP archive (or a single image): one volume;
- a folder that holds page images itself: one volume (its subfolders are part of it, as when
  `ocr` or the app opens it);
- any other folder: searched recursively; each archive in it is a volume, and so is each
  subfolder that holds page images itself (a series folder of volume folders, a volume folder
  of chapter folders: the chapters become the volumes).
Hidden files and folders (and `__MACOSX`) are skipped, symbolic links to folders followed once.

Each volume has a key, its path relative to its LIBRARY argument without the archive extension
("Series A/vol 01"), used for its export (`OUT_DIR/<key>.json`) and to recognise it when a run
is resumed, also after the library moved to another disk. When a folder and an archive (or two
archives) would share a key, the archive keeps its extension ("vol 01.cbz").
"""
from __future__ import annotations

import os
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from app.core.sources.images import is_image_name
from app.core.sources.source import ARCHIVE_EXTENSIONS, natural_key
from app.errors import UserError


@dataclass(frozen=True)
class Volume:
    """path: the volume's folder or archive (absolute); key: its relative name (POSIX, no extension)."""

    path: Path
    key: str

    def export_path(self, out_dir: Path) -> Path:
        """OUT_DIR/<key>.json"""
        return out_dir.joinpath(*PurePosixPath(self.key + ".json").parts)


def _hidden(name: str) -> bool:
    return name.startswith(".") or name == "__MACOSX"


def _is_archive(path: Path) -> bool:
    return path.suffix.lower() in ARCHIVE_EXTENSIONS


def _holds_pages(folder: Path) -> bool:
    try:
        with os.scandir(folder) as entries:
            return any(not _hidden(e.name) and is_image_name(e.name) and e.is_file() for e in entries)
    except OSError as exc:
        raise UserError(f"{folder}: cannot list the folder ({exc.strerror or exc}).") from exc


def _walk(folder: Path, prefix: PurePosixPath, seen: set[str], found: list[tuple[Path, PurePosixPath]]) -> None:
    real = os.path.realpath(folder)
    if real in seen:  # a link back up the tree
        return
    seen.add(real)
    try:
        with os.scandir(folder) as it:
            entries = sorted((e for e in it if not _hidden(e.name)), key=lambda e: natural_key(e.name))
    except OSError as exc:
        raise UserError(f"{folder}: cannot list the folder ({exc.strerror or exc}).") from exc
    for entry in entries:
        path = Path(entry.path)
        if entry.is_dir():
            if _holds_pages(path):
                found.append((path, prefix / entry.name))
            else:
                _walk(path, prefix / entry.name, seen, found)
        elif entry.is_file() and _is_archive(path):
            found.append((path, prefix / entry.name))


def _volumes_of(arg: str) -> list[tuple[Path, PurePosixPath]]:
    path = Path(os.path.abspath(os.path.expanduser(arg)))
    if not path.exists():
        raise UserError(f"{arg}: no such folder or archive. Check the path.")
    if path.is_file():
        if _is_archive(path) or is_image_name(path.name) or zipfile.is_zipfile(path):
            return [(path, PurePosixPath(path.name))]
        raise UserError(f"{arg}: not a folder of volumes, a CBZ/ZIP archive or an image.")
    if _holds_pages(path):
        return [(path, PurePosixPath(path.name))]
    found: list[tuple[Path, PurePosixPath]] = []
    _walk(path, PurePosixPath(), set(), found)
    return found


def _key(path: Path, rel: PurePosixPath, keep_suffix: bool) -> str:
    if path.is_dir() or keep_suffix:
        return rel.as_posix()
    return rel.with_suffix("").as_posix() if rel.suffix else rel.as_posix()


def find_volumes(libraries: list[str]) -> list[Volume]:
    """The volumes of the LIBRARY arguments, each library in natural order, in argument order.

    Raises UserError for a missing path, a library without volumes, and two volumes that would
    write the same export (from two LIBRARY arguments: run them with different --out).
    """
    volumes: list[Volume] = []
    for arg in libraries:
        found = _volumes_of(arg)
        if not found:
            raise UserError(f"{arg}: no volumes found (no CBZ/ZIP archives and no folders of page images).")
        keys = Counter(_key(p, rel, False).casefold() for p, rel in found)
        volumes += [Volume(p, _key(p, rel, keep_suffix=keys[_key(p, rel, False).casefold()] > 1 and p.is_file()))
                    for p, rel in found]
    by_key: dict[str, list[Volume]] = {}
    for v in volumes:
        by_key.setdefault(v.key.casefold(), []).append(v)
    clashes = [vs for vs in by_key.values() if len({v.path for v in vs}) > 1]
    if clashes:
        names = "; ".join(" and ".join(str(v.path) for v in vs) for vs in clashes[:3])
        raise UserError(f"these volumes would write the same export: {names}. Run them with different --out folders.")
    return list({v.path: v for v in volumes}.values())  # a volume named twice is read once
