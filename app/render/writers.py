"""Page writers: images (PNG, JPEG, WebP), CBZ, PDF and layered PSD.

Every writer writes to a temporary file beside its target and moves it into place when done,
so a failed or cancelled export never leaves a half-written file under the final name.
OSError becomes UserError naming the file.

    write_image(rgb, path)                 one page; the format from the suffix
    with CbzWriter(path, info=ComicInfo(...)) as cbz: cbz.add("001.png", rgb)   # + ComicInfo.xml
    with PdfWriter(path) as pdf: pdf.add(rgb)     # one page per image, JPEG inside
    write_psd(path, original, cleaned, patches, [psd_text(n, layer, style), ...], final)
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np
from PIL import Image

from app.atomic import atomic_open
from app.errors import UserError

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


@dataclass(frozen=True)
class ComicInfo:
    """What a CBZ's ComicInfo.xml says (the Anansi ComicInfo schema, v2.0 elements plus 2.1's
    Translator): series, volume / number, language, reading direction, the app that made it.
    Page count and pages are filled in by CbzWriter."""

    series: str
    number: str | None = None
    volume: int | None = None
    language: str | None = None  # ISO code of the lettered text
    rtl: bool = True  # manga read right to left: Manga = YesAndRightToLeft
    tool: str = "Hayai Desktop"
    notes: str = ""

    @staticmethod
    def from_name(name: str, **kw) -> ComicInfo:
        """Series, volume and chapter number read from a file or folder name ("Series v03
        ch12" -> series "Series", volume 3, number "12")."""
        stem = Path(name).name
        for suffix in (".cbz", ".zip", ".cbr", ".pdf"):
            if stem.lower().endswith(suffix):
                stem = stem[: -len(suffix)]
        volume = re.search(r"(?i)(?:\bvol(?:ume)?|\bv|巻)[ ._-]*(\d+)", stem)
        number = re.search(r"(?i)(?:\bch(?:apter)?|\bc|#|第)[ ._-]*(\d+(?:\.\d+)?)", stem)
        series = stem
        for m in (volume, number):
            if m:
                series = series.replace(m.group(0), " ")
        series = re.sub(r"[ ._-]+", " ", series).strip(" -_.") or stem
        return ComicInfo(series=series, volume=int(volume.group(1)) if volume else None,
                         number=number.group(1) if number else None, **kw)

    def to_xml(self, pages: list[tuple[int, int]]) -> bytes:
        """The ComicInfo.xml document; `pages`: (width, height) of each page, in order."""
        from xml.etree import ElementTree as ET

        root = ET.Element("ComicInfo", {"xmlns:xsi": "http://www.w3.org/2001/XMLSchema-instance",
                                        "xmlns:xsd": "http://www.w3.org/2001/XMLSchema"})

        def add(tag: str, value) -> None:
            if value is not None and value != "":
                ET.SubElement(root, tag).text = str(value)

        add("Series", self.series)  # in the schema's order (it is an xs:sequence)
        add("Number", self.number)
        add("Volume", self.volume)
        add("Notes", self.notes or f"Translated pages lettered with {self.tool}.")
        add("Translator", self.tool)
        add("PageCount", len(pages))
        add("LanguageISO", self.language)
        add("Manga", "YesAndRightToLeft" if self.rtl else "No")
        listed = ET.SubElement(root, "Pages")
        for i, (w, h) in enumerate(pages):
            attrs = {"Image": str(i), "ImageWidth": str(w), "ImageHeight": str(h)}
            if i == 0:
                attrs["Type"] = "FrontCover"
            ET.SubElement(listed, "Page", attrs)
        ET.indent(root)
        return ET.tostring(root, encoding="utf-8", xml_declaration=True)


class CbzWriter:
    """A CBZ (ZIP) of page images, written entry by entry (memory: one page at a time), with a
    ComicInfo.xml after the pages when `info` is given."""

    def __init__(self, path: str | os.PathLike, fmt: str = "png", info: ComicInfo | None = None):
        self.path = Path(path)
        self.fmt = fmt
        self.info = info
        self._sizes: list[tuple[int, int]] = []
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
        self._sizes.append((int(rgb.shape[1]), int(rgb.shape[0])))

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._zip is not None:
            if exc_type is None and self.info is not None:
                try:
                    self._zip.writestr("ComicInfo.xml", self.info.to_xml(self._sizes), zipfile.ZIP_DEFLATED)
                except OSError as err:
                    self._zip.close()
                    self._ctx.__exit__(type(err), err, err.__traceback__)
                    raise _write_error(self.path, err) from err
            self._zip.close()
        self._ctx.__exit__(exc_type, exc, tb)


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


@dataclass(frozen=True)
class PsdText:
    """One lettered block as a PSD type layer: its lines (or columns) as set, the faces they are
    drawn with (runs of (text, font file) over the lines joined by newlines; tate-chu-yoko runs
    flagged), size in pixels, colour, alignment, outline, direction, and the text frame on the
    page (x0, y0, x1, y1); `rgba` at (x0, y0) of `raster` is the block's pixels (the hidden
    fallback layer)."""

    number: int
    lines: tuple[str, ...]
    runs: tuple[tuple[str, str, bool], ...]
    size: int
    color: str
    align: str
    outline_width: int
    outline_color: str
    vertical: bool
    leading: float
    frame: tuple[float, float, float, float]
    raster: tuple[int, int, np.ndarray]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def psd_text(number: int, layer, style) -> PsdText:
    """The type layer of a typeset block (an app.render.typeset.TextLayer and its TextStyle)."""
    from app.render.glyphs import pieces
    from app.render.layout import font_at

    lay = layer.layout
    runs: list[tuple[str, str, bool]] = []
    for i, line in enumerate(lay.lines):
        parts = [(p.text, p.font, p.tcy) for p in pieces(line.text, lay.chain, lay.vertical)] if line.text else []
        if i < len(lay.lines) - 1:
            parts.append(("\n", parts[-1][1] if parts else lay.font_path, False))
        for text, font, tcy in parts:
            if runs and runs[-1][1] == font and not tcy and not runs[-1][2]:
                runs[-1] = (runs[-1][0] + text, font, False)
            else:
                runs.append((text, font, tcy))
    h, w = layer.rgba.shape[:2]
    x0, y0 = layer.x0, layer.y0
    pitch = lay.size * style.line_spacing
    if lay.vertical:  # columns right to left: the frame spans them, from the first column's top
        right = max((ln.x + pitch / 2 for ln in lay.lines), default=w)
        left = min((ln.x - pitch / 2 for ln in lay.lines), default=0)
        top = min((ln.y for ln in lay.lines), default=0)
        frame = (x0 + left, y0 + top, x0 + right, y0 + h)
    else:  # the window's width (alignment within it), from the first line's top
        ascent, _descent = font_at(lay.font_path, lay.size).getmetrics()
        top = min((ln.y - ascent for ln in lay.lines), default=0) - (pitch - lay.size) / 2
        frame = (x0, y0 + max(0.0, top), x0 + w, y0 + h)
    return PsdText(number, tuple(ln.text for ln in lay.lines), tuple(runs), lay.size, style.color, style.align,
                   style.outline_width, style.outline_color, lay.vertical, pitch, frame, (x0, y0, layer.rgba))


_EMPTY = re.compile(rb"\(\xfe\xff(?:\\.|[^\\)])*\)|<<>>|\[\]", re.S)


def _engine_data_spaced(raw: bytes) -> bytes:
    """Engine data with its empty dictionaries and lists written "<< >>" / "[ ]" as Photoshop
    writes them (photoshopapi 0.9 writes "<<>>" and "[]", which psd-tools' reader cannot
    split); strings are left as they are."""
    def fix(m: re.Match) -> bytes:
        token = m.group()
        return b"<<\n>>" if token == b"<<>>" else b"[ ]" if token == b"[]" else token
    return _EMPTY.sub(fix, raw)


def _rgb01(color: str) -> list[float]:
    c = color.lstrip("#")
    return [int(c[i:i + 2], 16) / 255.0 for i in (0, 2, 4)]


def _type_layer(psapi, psd_file, block: PsdText):
    from app.render.glyphs import postscript_name

    x0, y0, x1, y1 = block.frame
    w, h = max(1.0, x1 - x0), max(1.0, y1 - y0)
    primary = block.runs[0][1] if block.runs else ""
    t = psapi.TextLayer_8bit(f"{block.number} text", block.text, font=postscript_name(primary) if primary else "ArialMT",
                             font_size=float(block.size), fill_color=[1.0, *_rgb01(block.color)],
                             position_x=x0, position_y=y0)  # no pixel bounds: GIMP 2.10 crashes on bounds without pixels
    t.fill = 1.0  # photoshopapi 0.9 starts every layer at a fill opacity of 0 %
    t.set_box_bounds(0.0, 0.0, h, w)
    t.set_position(x0, y0)
    if block.vertical:
        t.set_orientation(psapi.enum.WritingDirection.Vertical)
    justification = {"left": "Left", "right": "Right"}.get(block.align, "Center")
    t.set_paragraph_normal_justification(getattr(psapi.enum.Justification, justification))
    for i in range(t.paragraph_run_count):
        t.set_paragraph_run_justification(i, getattr(psapi.enum.Justification, justification))
    # one style run per piece of the text with its own face (per-glyph fallback), tate-chu-yoko
    for index, (text, _font, _tcy) in enumerate(block.runs[:-1]):
        t.split_style_run(index, len(text.encode("utf-16-le")) // 2)  # UTF-16 code units
    for index, (_text, font, tcy) in enumerate(block.runs):
        script = psapi.enum.FontScript.CJK if "CJK" in postscript_name(font) else psapi.enum.FontScript.Roman
        found = t.find_font_index(postscript_name(font))
        font_index = found if found is not None and found >= 0 else t.add_font(postscript_name(font), script=script)
        t.set_style_run_font(index, font_index)
        t.set_style_run_font_size(index, float(block.size))
        t.set_style_run_auto_leading(index, False)
        t.set_style_run_leading(index, float(block.leading))
        t.set_style_run_fill_color(index, [1.0, *_rgb01(block.color)])
        if block.outline_width > 0:
            t.set_style_run_stroke_flag(index, True)
            t.set_style_run_outline_width(index, float(block.outline_width))
            t.set_style_run_stroke_color(index, [1.0, *_rgb01(block.outline_color)])
        if tcy and block.vertical:
            t.set_style_run_baseline_direction(index, psapi.enum.BaselineDirection.CrossStream)
    if block.outline_width > 0:
        t.set_style_normal_stroke_flag(True)
        t.set_style_normal_outline_width(float(block.outline_width))
        t.set_style_normal_stroke_color([1.0, *_rgb01(block.outline_color)])
    return t


def _image_layer(psapi, name: str, rgba: np.ndarray, x0: int, y0: int, visible: bool = True):
    h, w = rgba.shape[:2]
    planar = np.ascontiguousarray(np.moveaxis(rgba, 2, 0))
    layer = psapi.ImageLayer_8bit(planar, name, width=w, height=h, pos_x=x0 + w / 2, pos_y=y0 + h / 2,
                                  is_visible=visible)
    layer.fill = 1.0  # photoshopapi 0.9 starts every layer at a fill opacity of 0 %
    return layer


def _opaque(rgb: np.ndarray) -> np.ndarray:
    return np.concatenate([rgb, np.full(rgb.shape[:2] + (1,), 255, np.uint8)], axis=2)


def write_psd(path: str | os.PathLike, original: np.ndarray, cleaned: np.ndarray, patches: np.ndarray,
              blocks, final: np.ndarray) -> Path:
    """A layered PSD, top to bottom: a group per lettered block ("block N": its type layer "N
    text", editable, and its rendered pixels "N pixels", hidden), "inpainting patches" (what
    cleaning wrote, transparent elsewhere), "cleaned" (the cleaned page) and "original" (hidden).
    `patches`: (H, W) bool, the pixels cleaning wrote; `blocks`: PsdText in reading order; the
    file's merged image (what viewers that do not read layers show) is `final`, the PNG export's
    pixels.

    The layers are written by photoshopapi (type layers); a second pass with psd-tools writes
    the merged image (photoshopapi leaves it black), gives each type layer the block's rendered
    pixels (as Photoshop keeps a type layer's last rendering; readers that do not set type show
    them) and spaces the type layers' empty engine-data entries so that readers other than
    Photoshop can parse them."""
    import tempfile

    import photoshopapi as psapi

    h, w = original.shape[:2]
    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="hayai-psd-") as tmp:
        raw = Path(tmp) / "layers.psd"
        doc = psapi.LayeredFile_8bit(psapi.enum.ColorMode.rgb, w, h)
        for block in blocks:
            group = psapi.GroupLayer_8bit(f"block {block.number}")
            group.fill = 1.0
            group.add_layer(doc, _type_layer(psapi, doc, block))
            rx, ry, rgba = block.raster
            group.add_layer(doc, _image_layer(psapi, f"{block.number} pixels", rgba, rx, ry, visible=False))
            doc.add_layer(group)
        patch_rgba = _opaque(cleaned)
        patch_rgba[..., 3] = np.where(patches, 255, 0).astype(np.uint8)
        patch_rgba[~patches, :3] = 0
        doc.add_layer(_image_layer(psapi, "inpainting patches", patch_rgba, 0, 0))
        doc.add_layer(_image_layer(psapi, "cleaned", _opaque(cleaned), 0, 0))
        doc.add_layer(_image_layer(psapi, "original", _opaque(original), 0, 0, visible=False))
        try:
            doc.write(str(raw))
        except (RuntimeError, ValueError) as exc:
            raise UserError(f"{path}: the PSD could not be written ({exc}). Export PNG pages instead.") from exc
        pixels = {f"{b.number} text": b.raster for b in blocks}
        with _atomic(path) as fh:
            _finish_psd(raw, final, fh, pixels)
    return path


def _give_pixels(psd, layer, x0: int, y0: int, rgba: np.ndarray) -> None:
    """The type layer's own pixels: the block as rendered (as Photoshop stores a type layer's
    last rendering), so that readers that do not set type (GIMP, Krita, viewers) show it."""
    from psd_tools.api.layers import PixelLayer
    from psd_tools.constants import Compression

    header = psd._record.header
    record, channels = PixelLayer._build_layer_record_and_channels(
        Image.fromarray(rgba, "RGBA"), layer.name, x0, y0, Compression.RLE, version=header.version, depth=header.depth)
    target = layer._record
    target.top, target.left, target.bottom, target.right = record.top, record.left, record.bottom, record.right
    target.channel_info = record.channel_info
    layer._channels = channels


def _finish_psd(raw: Path, final: np.ndarray, fh, pixels: dict | None = None) -> None:
    """psd-tools' pass over photoshopapi's file: engine data spaced, names without the NUL
    photoshopapi leaves at their end, the type layers' pixels (`pixels`: layer name -> (x0, y0,
    rgba)), merged image = `final`."""
    pixels = pixels or {}
    import logging

    from psd_tools import PSDImage
    from psd_tools.constants import Tag

    log = logging.getLogger("psd_tools")
    level = log.level
    log.setLevel(logging.ERROR)  # its first read of photoshopapi's engine data warns: spaced below
    try:
        psd = PSDImage.open(raw)
    finally:
        log.setLevel(level)
    for layer in psd.descendants():
        if layer.name.endswith("\x00"):  # photoshopapi 0.9 counts the terminator in the Unicode name
            layer.name = layer.name.rstrip("\x00")
        if layer.kind != "type":
            continue
        setting = layer._record.tagged_blocks.get_data(Tag.TYPE_TOOL_OBJECT_SETTING)
        entry = setting.text_data[b"EngineData"]
        if isinstance(entry.value, bytes):
            entry.value = _engine_data_spaced(entry.value)
        raster = pixels.get(layer.name)
        if raster is not None:
            _give_pixels(psd, layer, *raster)
    if pixels:
        psd._update_record()  # the records and channels written are rebuilt from the layers
    header = psd._record.header
    planes = [np.ascontiguousarray(final[..., c]).tobytes() for c in range(3)]
    planes += [np.full(final.shape[:2], 255, np.uint8).tobytes()] * (header.channels - 3)
    psd._record.image_data.set_data(planes, header)
    psd.save(fh)
