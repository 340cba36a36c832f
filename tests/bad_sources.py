"""A generated corpus of bad page sources (shared by tests/test_bad_sources.py, the GUI's test
and bench/big_archive_open.py). Everything is made here from Pillow and the zipfile module;
nothing is downloaded.

`bad_folder(root)` -> (folder, {page name: what is wrong}) with two good pages among them;
`bad_archive(root)` -> (cbz, {member: what is wrong}) likewise; `big_archive(path, pages)`.
"""
from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
GOOD_PAGE = ROOT / "app" / "resources" / "samples" / "page_0000.png"


def _encode(image: Image.Image, fmt: str, **kw) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **kw)
    return out.getvalue()


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def bomb_png(width: int = 60000, height: int = 60000) -> bytes:
    """A tiny PNG that declares width x height pixels (a decompression bomb)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", zlib.compress(b"\0" * 64)) \
        + _png_chunk(b"IEND", b"")


def _page(size=(240, 320), color=(250, 250, 250)) -> Image.Image:
    return Image.new("RGB", size, color)


def odd_pages() -> dict[str, tuple[bytes, str | None]]:
    """name -> (bytes, None when it must be read, else a word the error must contain)."""
    png = _encode(_page(), "PNG")
    jpeg = _encode(_page(), "JPEG", quality=90)
    webp = _encode(_page(), "WEBP")
    sixteen = Image.new("I;16", (200, 120))
    sixteen.putdata([i * 97 % 65536 for i in range(200 * 120)])
    palette = _page().convert("P", palette=Image.ADAPTIVE, colors=16)
    frames = [_page(color=(i * 40, 0, 0)) for i in range(3)]
    exif = Image.Exif()
    exif[0x0112] = 6  # rotated 90 degrees: stored sideways
    return {
        "truncated.png": (png[: len(png) // 2], "truncated.png"),
        "truncated.jpg": (jpeg[: len(jpeg) // 3], "truncated.jpg"),
        "truncated.webp": (webp[: len(webp) // 2], "truncated.webp"),
        "bomb.png": (bomb_png(), "decompression bomb"),
        "zero.png": (b"", "empty"),
        "not-an-image.jpg": (b"<html>404 not found</html>", "not a readable image"),
        "photo.heic": (b"\0\0\0\x18ftypheic\0\0\0\0mif1heic" + b"\0" * 64, "HEIC"),
        "sixteen-bit.png": (_encode(sixteen, "PNG"), None),
        "palette.png": (_encode(palette, "PNG"), None),
        "animated.gif": (_encode(frames[0], "GIF", save_all=True, append_images=frames[1:]), None),
        "animated.webp": (_encode(frames[0], "WEBP", save_all=True, append_images=frames[1:]), None),
        "cmyk.jpg": (_encode(_page().convert("CMYK"), "JPEG"), None),
        "rotated.jpg": (_encode(_page((320, 240)), "JPEG", exif=exif.tobytes()), None),
    }


def bad_folder(root: Path, outside: Path | None = None) -> tuple[Path, dict[str, str | None]]:
    """A volume folder holding every odd page, two good ones, a nested archive, and a link to a
    page outside it (`outside`: where that page lives). {name: None | a word of its error}."""
    folder = root / "bad-volume"
    folder.mkdir(parents=True)
    expected: dict[str, str | None] = {}
    for name, (data, error) in odd_pages().items():
        (folder / name).write_bytes(data)
        expected[name] = error
    for name in ("000-good.png", "999-good.png"):
        (folder / name).write_bytes(GOOD_PAGE.read_bytes())
        expected[name] = None
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr("001.png", GOOD_PAGE.read_bytes())
    (folder / "inner.cbz").write_bytes(inner.getvalue())
    expected["inner.cbz"] = "archive inside the volume"
    outside = outside or root / "elsewhere"
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "private.png").write_bytes(GOOD_PAGE.read_bytes())
    (folder / "link.png").symlink_to(outside / "private.png")
    expected["link.png"] = "outside the folder"
    return folder, expected


def _encrypt_flag(data: bytes, member: str) -> bytes:
    """The archive with `member` marked encrypted (flag bit 0) in its local and central headers."""
    data = bytearray(data)
    name = member.encode()
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = 0
        while (at := data.find(signature, start)) >= 0:
            name_at = at + (30 if signature == b"PK\x03\x04" else 46)
            if data[name_at:name_at + len(name)] == name:
                data[at + offset] |= 0x01
            start = at + 4
    return bytes(data)


def bad_archive(root: Path, absolute_member: str = "/etc/x.png") -> tuple[Path, dict[str, str | None]]:
    """A CBZ with members named outside it ('../x.png', `absolute_member`), a nested archive, an
    encrypted member, a truncated page and good pages. {member: None | a word of its error}."""
    path = root / "bad.cbz"
    good = GOOD_PAGE.read_bytes()
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr("p.png", good)
    members = {
        "001.png": (good, None),
        "../x.png": (good, "outside the archive"),
        absolute_member: (good, "outside the archive"),
        "nested.cbz": (inner.getvalue(), "archive inside the volume"),
        "secret.png": (good, "encrypted"),
        "torn.png": (good[: len(good) // 2], "torn.png"),
        "099.png": (good, None),
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name, (data, _error) in members.items():
            info = zipfile.ZipInfo(name)  # written as given: zipfile would not sanitise a ZipInfo's name
            z.writestr(info, data)
    path.write_bytes(_encrypt_flag(buffer.getvalue(), "secret.png"))
    return path, {name: error for name, (_data, error) in members.items()}


def big_archive(path: Path, pages: int = 10_000, size=(64, 96)) -> Path:
    """A CBZ of `pages` small distinct PNG pages (stored, not compressed)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        base = Image.new("L", size, 255)
        for i in range(pages):
            image = base.copy()
            image.putpixel((i % size[0], (i // size[0]) % size[1]), 0)
            z.writestr(f"vol/{i + 1:05d}.png", _encode(image, "PNG"))
    return path
