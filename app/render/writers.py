"""Page writers: images (PNG, JPEG, WebP), CBZ, PDF and layered PSD.

Every writer writes to a temporary file beside its target and moves it into place when done,
so a failed or cancelled export never leaves a half-written file under the final name.
OSError becomes UserError naming the file.

    write_image(rgb, path)                 one page; the format from the suffix
    with CbzWriter(path) as cbz: cbz.add("001.png", rgb)
    with PdfWriter(path) as pdf: pdf.add(rgb)     # one page per image, JPEG inside
    write_psd(path, original, cleaned, [(name, x0, y0, rgba), ...])
"""
from __future__ import annotations

import contextlib
import io
import os
import zipfile
from pathlib import Path, PurePosixPath

import numpy as np
from PIL import Image

from app.atomic import atomic_open
from app.errors import UserError

IMAGE_FORMATS = {"png": "PNG", "jpg": "JPEG", "webp": "WEBP"}
JPEG_QUALITY = 92
PDF_DPI = 150  # page size in the PDF: pixels at this resolution


def output_name(page_name: str, ext: str) -> str:
    """The file name for a page in an export: its name with the new suffix ("ch1/001.png", "psd"
    -> "ch1/001.psd"), always inside the export's folder ("../x.png" and "/etc/x.png" -> "x.png")."""
    parts = [p for p in PurePosixPath(page_name.replace("\\", "/")).parts
             if p not in ("", ".", "..", "/") and not (len(p) == 2 and p[1] == ":")]  # never outside the folder
    path = PurePosixPath(*parts) if parts else PurePosixPath("page")
    return str(path.with_suffix(f".{ext}"))


def encode_image(rgb: np.ndarray, fmt: str) -> bytes:
    """PNG, JPEG (quality 92) or WebP (lossless) bytes of an RGB page (H, W, 3) uint8."""
    image = Image.fromarray(rgb, "RGB")
    buf = io.BytesIO()
    if fmt == "png":
        image.save(buf, format="PNG", compress_level=6)
    elif fmt == "jpg":
        image.save(buf, format="JPEG", quality=JPEG_QUALITY, subsampling=0)
    elif fmt == "webp":
        image.save(buf, format="WEBP", lossless=True, quality=80, method=4)
    else:
        raise ValueError(f"unknown image format {fmt!r}")
    return buf.getvalue()


@contextlib.contextmanager
def _atomic(path: Path):
    """A temporary file beside `path` (app.atomic: fsynced, the umask's permissions), moved onto
    it when the block ends without an error; OSError becomes a UserError naming the file."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path, binary=True) as fh:
            yield fh
    except OSError as exc:
        raise _write_error(path, exc) from exc


def _write_error(path: Path, exc: OSError) -> UserError:
    return UserError(f"{path}: cannot write the export ({exc.strerror or exc}). Choose another folder or free "
                     "some disk space.")


def write_image(rgb: np.ndarray, path: str | os.PathLike) -> Path:
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".").replace("jpeg", "jpg")
    data = encode_image(rgb, fmt)
    with _atomic(path) as fh:
        fh.write(data)
    return path


class CbzWriter:
    """A CBZ (ZIP) of page images, written entry by entry (memory: one page at a time)."""

    def __init__(self, path: str | os.PathLike, fmt: str = "png"):
        self.path = Path(path)
        self.fmt = fmt
        self._ctx = _atomic(self.path)
        self._zip: zipfile.ZipFile | None = None

    def __enter__(self) -> CbzWriter:
        fh = self._ctx.__enter__()
        self._zip = zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED)
        return self

    def add(self, page_name: str, rgb: np.ndarray) -> None:
        assert self._zip is not None
        try:
            self._zip.writestr(output_name(page_name, self.fmt), encode_image(rgb, self.fmt))
        except OSError as exc:
            raise _write_error(self.path, exc) from exc

    def __exit__(self, *exc) -> None:
        if self._zip is not None:
            self._zip.close()
        self._ctx.__exit__(*exc)


class PdfWriter:
    """A PDF with one page per image (JPEG inside, DCTDecode), written page by page.

    The page size is the image's at PDF_DPI (150 pixels per inch). Objects: 1 catalog, 2 page
    tree, then per page: page, content stream, image.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._ctx = _atomic(self.path)
        self._fh = None
        self._offsets: dict[int, int] = {}
        self._pages: list[int] = []
        self._next = 3

    def __enter__(self) -> PdfWriter:
        self._fh = self._ctx.__enter__()
        self._fh.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
        return self

    def _obj(self, number: int, body: bytes, stream: bytes | None = None) -> None:
        fh = self._fh
        self._offsets[number] = fh.tell()
        fh.write(f"{number} 0 obj\n".encode() + body)
        if stream is not None:
            fh.write(b"\nstream\n" + stream + b"\nendstream")
        fh.write(b"\nendobj\n")

    def add(self, rgb: np.ndarray) -> None:
        h, w = rgb.shape[:2]
        jpeg = io.BytesIO()
        Image.fromarray(rgb, "RGB").save(jpeg, format="JPEG", quality=JPEG_QUALITY, subsampling=0)
        data = jpeg.getvalue()
        pw, ph = w * 72.0 / PDF_DPI, h * 72.0 / PDF_DPI
        page, content, image = self._next, self._next + 1, self._next + 2
        self._next += 3
        draw = f"q {pw:.3f} 0 0 {ph:.3f} 0 0 cm /Im0 Do Q".encode()
        try:
            self._obj(page, (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {pw:.3f} {ph:.3f}] "
                             f"/Resources << /XObject << /Im0 {image} 0 R >> >> /Contents {content} 0 R >>").encode())
            self._obj(content, f"<< /Length {len(draw)} >>".encode(), draw)
            self._obj(image, (f"<< /Type /XObject /Subtype /Image /Width {w} /Height {h} /ColorSpace /DeviceRGB "
                              f"/BitsPerComponent 8 /Filter /DCTDecode /Length {len(data)} >>").encode(), data)
        except OSError as exc:
            raise _write_error(self.path, exc) from exc
        self._pages.append(page)

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            kids = " ".join(f"{p} 0 R" for p in self._pages)
            self._obj(1, b"<< /Type /Catalog /Pages 2 0 R >>")
            self._obj(2, f"<< /Type /Pages /Kids [{kids}] /Count {len(self._pages)} >>".encode())
            fh = self._fh
            xref = fh.tell()
            count = self._next
            fh.write(f"xref\n0 {count}\n0000000000 65535 f \n".encode())
            for n in range(1, count):
                fh.write(f"{self._offsets[n]:010d} 00000 n \n".encode())
            fh.write(f"trailer\n<< /Size {count} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
        self._ctx.__exit__(exc_type, exc, tb)


def write_psd(path: str | os.PathLike, original: np.ndarray, cleaned: np.ndarray, text_layers) -> Path:
    """A layered PSD: "original" (hidden), "cleaned", then one layer per text block, named as given,
    from the bottom up. `text_layers`: (name, x0, y0, rgba (h, w, 4) uint8). psd-tools stores the
    flattened visible layers as the file's merged image, for viewers that do not read layers."""
    from psd_tools import PSDImage
    from psd_tools.api.layers import PixelLayer
    from psd_tools.constants import Compression

    h, w = original.shape[:2]
    psd = PSDImage.new("RGBA", (w, h))  # RGBA: a layer's alpha is its transparency, not a mask
    bottom = PixelLayer.frompil(Image.fromarray(original, "RGB"), psd, "original", 0, 0, Compression.RLE)
    bottom.visible = False
    psd.append(bottom)
    psd.append(PixelLayer.frompil(Image.fromarray(cleaned, "RGB"), psd, "cleaned", 0, 0, Compression.RLE))
    for name, x0, y0, rgba in text_layers:
        psd.append(PixelLayer.frompil(Image.fromarray(rgba, "RGBA"), psd, name, y0, x0, Compression.RLE))
    path = Path(path)
    with _atomic(path) as fh:
        psd.save(fh)
    return path
