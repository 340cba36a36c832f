"""Where pages come from: a folder of images, a CBZ/ZIP archive, or a single image file.

`open_source(path)` only lists page names (no decoding), so a 500-page volume opens at once;
`Source.load(name)` decodes one page on demand. Page names are relative POSIX paths (nested
folders included, e.g. "ch01/003.png"; archive member names as stored), in natural order:
"page2" before "page10", case-insensitive, folder by folder.

    with open_source("vol1.cbz") as source:
        for name in source.page_names:
            image = source.load(name)      # PIL RGB, EXIF applied; ImageError for a bad page
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import threading
import zipfile
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from PIL import Image

from app.core.sources.images import decode_image, image_size, is_image_name
from app.errors import ImageError, UserError

ARCHIVE_EXTENSIONS = frozenset({".cbz", ".zip"})
# Archives inside a volume are listed as pages that say what to do, never opened (or extracted).
NESTED_ARCHIVE_EXTENSIONS = frozenset({".cbz", ".zip", ".cbr", ".rar", ".cb7", ".7z", ".cbt", ".tar"})
# Archive members larger than this (uncompressed) are refused: no manga page is that big.
MAX_MEMBER_BYTES = 512 * 1024 * 1024

_DIGITS = re.compile(r"(\d+)")  # any Unicode decimal digits: ASCII, full-width (１０), ...


def natural_key(name: str) -> tuple:
    """Sort key: digit runs compare as numbers, text case-insensitively, path part by part.
    Digits are any Unicode decimal digits, so full-width ones ("２.png" < "１０.png", common in
    Japanese file names) and mixed runs count by their value.

    "ch2/p10.png" -> ((("ch", 2, ""), ("p", 10, ".png"))-like tuples; ties broken by the name.
    """
    parts = []
    for part in name.replace("\\", "/").split("/"):
        tokens = _DIGITS.split(part.casefold())
        # split() alternates text, number, text...: positions line up, so mixed types never meet
        parts.append(tuple(int(t) if i % 2 else t for i, t in enumerate(tokens)))
    return (tuple(parts), name)


def natural_sorted(names) -> list[str]:
    return sorted(names, key=natural_key)


def _hidden(parts) -> bool:
    return any(p.startswith(".") and p not in (".", "..") or p == "__MACOSX" for p in parts)


def _nested_archive(name: str) -> bool:
    return os.path.splitext(name)[1].lower() in NESTED_ARCHIVE_EXTENSIONS


def _listed(name: str) -> bool:
    """Listed as a page: an image, or an archive inside the volume (which says it is not read)."""
    return is_image_name(name) or _nested_archive(name)


def _unsafe_member(name: str) -> bool:
    """An archive member named outside the archive: absolute, a drive, or with '..' parts."""
    path = PurePosixPath(name)
    return path.is_absolute() or ".." in path.parts or (len(name) > 1 and name[1] == ":")


def _nested_message(where: str) -> str:
    return (f"{where}: an archive inside the volume; it is not opened. Extract it and open it on its own "
            "(or put its pages in the volume).")


def _member_name(info: zipfile.ZipInfo) -> str:
    """The member's name; UTF-8 names stored without the UTF-8 flag (common in CBZs made on
    Windows) are decoded as UTF-8 instead of zipfile's cp437 mojibake."""
    name = info.filename
    if not info.flag_bits & 0x800:
        try:
            name = name.encode("cp437").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            pass  # really cp437 (or another legacy code page): keep zipfile's reading
    return name.replace("\\", "/")


class Source:
    """A set of pages. Subclasses provide `_read(name) -> bytes`.

    Attributes: `path` (absolute Path of the folder, archive or file), `page_names`
    (list[str], natural order), `kind` ("folder", "archive" or "file").
    """

    kind = ""

    def __init__(self, path: Path, page_names: list[str]):
        self.path = path
        self.page_names = page_names
        self._known = set(page_names)

    def load(self, name: str) -> Image.Image:
        """Decode page `name` to an upright RGB image. Raises ImageError naming the file."""
        return decode_image(self._read_checked(name), self.describe(name))

    def _refuse(self, name: str) -> None:
        """ImageError for what is listed but never read: an archive in the volume."""
        if _nested_archive(name):
            raise ImageError(_nested_message(self.describe(name)))

    def size(self, name: str) -> tuple[int, int]:
        """(width, height) in pixels of page `name` as `load` returns it, from its header only."""
        if name not in self._known:
            self._read_checked(name)  # raises the "no such page" error
        self._refuse(name)
        with self._open_stream(name) as stream:
            return image_size(stream, self.describe(name))

    def read_bytes(self, name: str) -> bytes:
        """The encoded bytes of page `name` (as stored)."""
        return self._read_checked(name)

    def describe(self, name: str) -> str:
        """How messages name a page: a full path, or 'archive.cbz: member'."""
        return str(self.path / name)

    def close(self) -> None:
        """Release the archive handle (no-op for folders)."""

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __len__(self) -> int:
        return len(self.page_names)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r}, {len(self.page_names)} pages)"

    def _read_checked(self, name: str) -> bytes:
        if name not in self._known:
            raise ImageError(f"{self.describe(name)}: no such page in {self.path}. "
                             "Reopen the source to refresh its page list.")
        self._refuse(name)
        return self._read(name)

    def _read(self, name: str) -> bytes:  # pragma: no cover - abstract
        raise NotImplementedError

    def _open_stream(self, name: str) -> BinaryIO:
        """A seekable binary stream of the page (subclasses avoid reading it whole)."""
        data = self._read(name)
        if not data:
            raise ImageError(f"{self.describe(name)}: the file is empty (0 bytes). Copy the page "
                             "again from its original, or remove it.")
        return io.BytesIO(data)



@contextlib.contextmanager
def _file_errors(file: Path):
    """OSError while reading a page file -> ImageError naming the file and what to do."""
    try:
        yield
    except FileNotFoundError as exc:
        raise ImageError(f"{file}: the page was removed or renamed since the folder was "
                         "opened. Reopen the folder.") from exc
    except OSError as exc:
        raise ImageError(f"{file}: cannot read the file ({exc.strerror or exc}). Check its "
                         "permissions and that the disk is reachable.") from exc


class FolderSource(Source):
    """Image files in a folder and its subfolders (hidden files and folders skipped; a link to a
    file outside the folder is listed and refused when read)."""

    kind = "folder"

    def _refuse(self, name: str) -> None:
        super()._refuse(name)
        file = self.path / name
        real, root = os.path.realpath(file), os.path.realpath(self.path)
        if os.path.commonpath([real, root]) != root:
            raise ImageError(f"{file}: a link to {real}, outside the folder; it is not read. Copy the page "
                                 "into the folder instead.")

    def _open_stream(self, name: str) -> BinaryIO:
        file = self.path / name
        with _file_errors(file):
            if file.stat().st_size == 0:
                raise ImageError(f"{file}: the file is empty (0 bytes). Copy the page again from "
                                 "its original, or remove it from the folder.")
            return open(file, "rb")

    @classmethod
    def scan(cls, path: Path) -> FolderSource:
        names = []
        for root, dirs, files in os.walk(path, onerror=None):
            dirs[:] = [d for d in dirs if not _hidden([d])]
            rel = PurePosixPath(Path(root).relative_to(path).as_posix())
            for file in files:
                if not _hidden([file]) and _listed(file):
                    names.append(str(rel / file) if rel.parts else file)
        return cls(path, natural_sorted(names))

    def _read(self, name: str) -> bytes:
        file = self.path / name
        with _file_errors(file):
            return file.read_bytes()


class ArchiveSource(Source):
    """Image members of a ZIP/CBZ archive, read lazily (__MACOSX and dotfiles skipped)."""

    kind = "archive"

    def __init__(self, path: Path, members: dict[str, zipfile.ZipInfo], archive: zipfile.ZipFile):
        super().__init__(path, natural_sorted(members))
        self._members = members  # page name -> member
        self._zip = archive
        self._lock = threading.Lock()  # one reader at a time on the shared file handle

    @classmethod
    def scan(cls, path: Path) -> ArchiveSource:
        try:
            archive = zipfile.ZipFile(path)
        except zipfile.BadZipFile as exc:
            raise UserError(f"{path}: not a valid ZIP/CBZ archive ({exc}). The download may be "
                            "incomplete; get the file again.") from exc
        except OSError as exc:
            raise UserError(f"{path}: cannot open the archive ({exc.strerror or exc}).") from exc
        members = {}
        for info in archive.infolist():
            name = _member_name(info)
            if not info.is_dir() and not _hidden(PurePosixPath(name).parts) and _listed(name):
                members.setdefault(name, info)  # a name stored twice: the first one
        return cls(path, members, archive)

    def describe(self, name: str) -> str:
        return f"{self.path}: {name}"

    def _refuse(self, name: str) -> None:
        super()._refuse(name)
        if _unsafe_member(name):
            raise ImageError(f"{self.describe(name)}: the member's name points outside the archive; it is not "
                             "read. Repack the archive with plain page names.")

    def _read(self, name: str) -> bytes:
        info = self._members[name]
        if info.file_size > MAX_MEMBER_BYTES:
            raise ImageError(f"{self.describe(name)}: the page is {info.file_size:,} bytes "
                             "uncompressed, too large for a page image. Remove it from the archive.")
        if info.flag_bits & 0x1:
            raise ImageError(f"{self.describe(name)}: the page is encrypted. Extract the archive "
                             "with its password and open the folder instead.")
        try:
            with self._lock:
                return self._zip.read(info)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
                NotImplementedError, RuntimeError) as exc:
            raise ImageError(f"{self.describe(name)}: cannot extract this page from the archive "
                             f"({exc}). The archive is damaged; get it again.") from exc

    def close(self) -> None:
        self._zip.close()


class FileSource(Source):
    """A single image file as a one-page source."""

    kind = "file"

    def __init__(self, path: Path):
        super().__init__(path, [path.name])

    def describe(self, name: str) -> str:
        return str(self.path)

    def _read(self, name: str) -> bytes:
        try:
            return self.path.read_bytes()
        except OSError as exc:
            raise ImageError(f"{self.path}: cannot read the file ({exc.strerror or exc}).") from exc


def resolve_source_path(path: str | os.PathLike) -> Path:
    """The absolute path of the source that `path` names: itself, or for a mokuro volume (a
    .mokuro file, or a folder holding exactly one) the folder of its page images beside it.
    Raises UserError for a .mokuro file without its images or a folder holding several."""
    from app.core.sources.mokuro_volume import images_root, mokuro_file_in

    path = Path(os.path.abspath(os.fspath(path)))
    mokuro = mokuro_file_in(path)
    if mokuro is None or (mokuro != path and mokuro.parent == path.parent):
        return path  # not a volume, or a page folder itself (its .mokuro beside it)
    return images_root(mokuro)


def open_source(path: str | os.PathLike) -> Source:
    """Open a folder of images, a .cbz/.zip archive or one image file; lists pages, decodes none.
    A mokuro volume (a .mokuro file or a folder holding one) opens its page folder.

    Raises UserError when the path does not exist or is not a supported kind of source.
    """
    path = resolve_source_path(path)
    if path.is_dir():
        return FolderSource.scan(path)
    if not path.exists():
        raise UserError(f"{path}: no such folder or file. Check the path.")
    suffix = path.suffix.lower()
    if suffix in ARCHIVE_EXTENSIONS or (zipfile.is_zipfile(path) and not is_image_name(path.name)):
        return ArchiveSource.scan(path)
    if is_image_name(path.name):
        return FileSource(path)
    if suffix in (".cbr", ".rar", ".cb7", ".7z", ".cbt", ".tar", ".pdf"):
        raise UserError(f"{path}: {suffix[1:].upper()} files are not supported. Extract the pages "
                        "to a folder, or repack them as a CBZ (ZIP) archive.")
    raise UserError(f"{path}: not a folder of images, a CBZ/ZIP archive or an image file.")
