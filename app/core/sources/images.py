"""Decoding page images robustly: any file Pillow reads becomes an upright 8-bit RGB image.

`decode_image(data_or_path, name)` is the one place pages are decoded (folder pages, archive
members and single files all come through it). What it handles:

- EXIF orientation is applied (phone photos and some scans are stored sideways).
- Grayscale, bilevel, palette, CMYK, YCbCr, LAB and 16-bit (I;16, I) images become RGB; 16-bit
  samples are scaled to 8 bits (value / 257), never clamped; float images are scaled to 0..255.
- Transparency (alpha channel, palette or tRNS transparency) is composited on white, as the
  page would look on paper.
- Animated GIF/WebP: the first frame.
- Decompression bombs (more than MAX_PIXELS pixels declared), truncated, corrupt, empty and
  non-image files raise `ImageError` naming the file and saying what to do.
"""
from __future__ import annotations

import contextlib
import io
import os
import warnings
from pathlib import Path
from typing import BinaryIO

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError, features

from app.errors import ImageError

# A manga page is a few megapixels; a double-page 1200 dpi scan is about 100 MP. Anything
# declaring more is a decompression bomb (or a scan nobody can OCR at that size).
MAX_PIXELS = 150_000_000
Image.MAX_IMAGE_PIXELS = MAX_PIXELS  # Pillow warns above this and refuses above twice this
# Pillow's warning is redundant: _check_size refuses those images with a clear ImageError.
# (A process-wide filter, because warnings.catch_warnings is not thread-safe.)
warnings.filterwarnings("ignore", category=Image.DecompressionBombWarning)

# Extensions listed as pages. AVIF and HEIC/HEIF pages are listed even where this Pillow cannot
# decode them, so that the user gets a per-page message instead of a silently missing page.
IMAGE_EXTENSIONS = frozenset({
    ".png", ".jpg", ".jpeg", ".jpe", ".jfif", ".webp", ".bmp", ".dib", ".gif",
    ".tif", ".tiff", ".avif", ".heic", ".heif",
})

_EXIF_ORIENTATION = 0x0112
_SWAPPING_ORIENTATIONS = {5, 6, 7, 8}  # orientations that exchange width and height


def is_image_name(name: str) -> bool:
    """True when the file name has a page-image extension (case-insensitive)."""
    return os.path.splitext(name)[1].lower() in IMAGE_EXTENSIONS


def load_image(path: str | os.PathLike) -> Image.Image:
    """Decode one image file into an upright RGB image; ImageError naming the file if it cannot."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise ImageError(f"{path}: file not found. Check that it was not moved or deleted.") from exc
    except OSError as exc:
        raise ImageError(f"{path}: cannot read the file ({exc.strerror or exc}). "
                         "Check its permissions and that the disk is reachable.") from exc
    return decode_image(data, str(path))


@contextlib.contextmanager
def _pillow_errors(name: str, damaged: str):
    """Any failure while Pillow reads `name` -> ImageError naming the file and what to do."""
    try:
        yield
    except ImageError:
        raise
    except UnidentifiedImageError as exc:
        raise ImageError(_unidentified_message(name)) from exc
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:  # warning: -W error
        raise ImageError(_bomb_message(name, None)) from exc
    except ModuleNotFoundError as exc:  # no installed plugin reads it (ultralytics' Image.open then tries pi_heif)
        raise ImageError(_unidentified_message(name)) from exc
    except MemoryError as exc:
        raise ImageError(f"{name}: not enough memory to decode this image. Reduce its size "
                         "with an image editor, or close other programs.") from exc
    except Exception as exc:  # noqa: BLE001 - Pillow plugins raise many types on corrupt data
        raise ImageError(f"{name}: {damaged} ({type(exc).__name__}: {exc}). "
                         "Copy the page again from its original, or remove it.") from exc


def decode_image(data: bytes, name: str) -> Image.Image:
    """Decode encoded image bytes into an upright RGB image (mode "RGB", 8 bits per sample).

    `name` is only used in messages (a path or an archive member). Raises ImageError.
    """
    if not data:
        raise ImageError(f"{name}: the file is empty (0 bytes). Copy the page again from its "
                         "original, or remove it from the folder.")
    with _pillow_errors(name, "the image is damaged or truncated"):
        image = Image.open(io.BytesIO(data))
        _check_size(image, name)
        image.seek(0)  # first frame of animated GIF/WebP/APNG/multi-page TIFF
        image.load()
        image = ImageOps.exif_transpose(image)
        return to_rgb(image)


def image_size(data: bytes | BinaryIO, name: str) -> tuple[int, int]:
    """(width, height) of the upright image from its header only (pixels are not decoded).

    `data` is the encoded bytes or a seekable binary stream positioned at the start.
    Raises ImageError.
    """
    if isinstance(data, (bytes, bytearray)):
        if not data:
            raise ImageError(f"{name}: the file is empty (0 bytes). Copy the page again from its "
                             "original, or remove it from the folder.")
        data = io.BytesIO(data)
    with _pillow_errors(name, "the image header is damaged"):
        image = Image.open(data)
        _check_size(image, name)
        width, height = image.size
        # PNG's getexif() decodes the whole image when no eXIf chunk came before the pixels
        if image.format != "PNG" or "exif" in image.info:
            if image.getexif().get(_EXIF_ORIENTATION) in _SWAPPING_ORIENTATIONS:
                width, height = height, width
        return width, height


def to_rgb(image: Image.Image) -> Image.Image:
    """Convert any Pillow mode to 8-bit RGB: 16-bit scaled, transparency composited on white."""
    mode = image.mode
    if mode == "RGB" and "transparency" not in image.info:
        return image
    if mode.startswith("I;16") or mode == "I":
        # (H, W) 16-bit samples: scale 0..65535 to 0..255 (not clamp, which would whiten pages)
        array = np.asarray(image, dtype=np.float64) if mode == "I" else _i16_array(image)
        array = np.clip(array, 0, 65535) / 257.0
        gray = Image.fromarray(np.round(array).astype(np.uint8), mode="L")
        return gray.convert("RGB")
    if mode == "F":
        array = np.nan_to_num(np.asarray(image, dtype=np.float64))
        low, high = float(array.min()), float(array.max())
        if low >= 0.0 and high <= 1.0:
            array = array * 255.0
        elif high > low:
            array = (array - low) * (255.0 / (high - low))
        gray = Image.fromarray(np.round(np.clip(array, 0, 255)).astype(np.uint8), mode="L")
        return gray.convert("RGB")
    has_alpha = mode in ("RGBA", "LA", "PA", "RGBa", "La") or "transparency" in image.info
    if has_alpha:
        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(white, rgba).convert("RGB")
    if mode == "CMYK":
        return _cmyk_to_rgb(image)
    return image.convert("RGB")


def _i16_array(image: Image.Image) -> np.ndarray:
    """(H, W) float64 array of a 16-bit image in any byte order."""
    dtype = ">u2" if image.mode == "I;16B" else "<u2"
    raw = image.tobytes()
    return np.frombuffer(raw, dtype=dtype).reshape(image.height, image.width).astype(np.float64)


def _cmyk_to_rgb(image: Image.Image) -> Image.Image:
    """CMYK to RGB through the embedded ICC profile when there is one, else Pillow's formula."""
    icc = image.info.get("icc_profile")
    if icc:
        try:
            from PIL import ImageCms
        except ImportError:  # Pillow built without littlecms
            return image.convert("RGB")
        try:
            source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
            return ImageCms.profileToProfile(image, source, ImageCms.createProfile("sRGB"),
                                             outputMode="RGB")
        except (OSError, ValueError, TypeError, ImageCms.PyCMSError):
            pass  # a broken profile: fall back to the plain conversion below
    return image.convert("RGB")


def _check_size(image: Image.Image, name: str) -> None:
    width, height = image.size
    if width <= 0 or height <= 0:
        raise ImageError(f"{name}: the image declares no pixels ({width}x{height}). "
                         "The file is damaged; copy it again from its original.")
    if width * height > MAX_PIXELS:
        raise ImageError(_bomb_message(name, (width, height)))


def _bomb_message(name: str, size: tuple[int, int] | None) -> str:
    declared = f" ({size[0]}x{size[1]} pixels)" if size else ""
    return (f"{name}: the image is too large{declared}; more than {MAX_PIXELS:,} pixels is refused "
            "as a possible decompression bomb. Scale it down with an image editor.")


def _unidentified_message(name: str) -> str:
    ext = os.path.splitext(name)[1].lower()
    if ext == ".avif" and not _avif_supported():
        return (f"{name}: this installation cannot decode AVIF images. Convert the page to PNG "
                "or JPEG, or install a Pillow build with AVIF support.")
    if ext in (".heic", ".heif"):
        return (f"{name}: HEIC/HEIF images (iPhone photos) cannot be decoded here. Convert the page to "
                "PNG or JPEG (most photo apps can export it).")
    return (f"{name}: not a readable image (the file content is not {ext[1:].upper() or 'an image'}"
            " data). Copy the page again from its original, or remove it from the folder.")


def _avif_supported() -> bool:
    try:
        return bool(features.check("avif"))
    except (ValueError, KeyError):
        return False
