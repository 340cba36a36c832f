"""Image decoding on a generated corpus of unusual and broken files (all built with Pillow)."""
from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from app.core.sources import images
from app.core.sources.images import decode_image, image_size, load_image
from app.errors import ImageError


def _save(image: Image.Image, path, fmt=None, **kw):
    image.save(path, fmt, **kw)
    return path


def _halves(width=40, height=20) -> Image.Image:
    """Left half red, right half blue."""
    image = Image.new("RGB", (width, height), (255, 0, 0))
    image.paste((0, 0, 255), (width // 2, 0, width, height))
    return image


def _patch_png_size(data: bytes, width: int, height: int) -> bytes:
    """Rewrite the IHDR of a PNG to declare another size (recomputing the chunk CRC)."""
    assert data[12:16] == b"IHDR"
    ihdr = bytearray(data[16:29])
    ihdr[0:8] = struct.pack(">II", width, height)
    crc = struct.pack(">I", zlib.crc32(b"IHDR" + bytes(ihdr)) & 0xFFFFFFFF)
    return data[:16] + bytes(ihdr) + crc + data[33:]


def test_exif_orientation_is_applied(tmp_path):
    exif = Image.Exif()
    exif[0x0112] = 6  # stored sideways: display rotated 90 degrees clockwise
    path = _save(_halves(), tmp_path / "sideways.jpg", exif=exif.tobytes(), quality=95)
    stored = Image.open(path)
    assert stored.size == (40, 20)

    image = load_image(path)
    assert image.mode == "RGB" and image.size == (20, 40)
    top, bottom = image.getpixel((10, 5)), image.getpixel((10, 35))
    assert top[0] > 200 and top[2] < 60  # the left (red) half is now on top
    assert bottom[2] > 200 and bottom[0] < 60
    assert image_size(path.read_bytes(), "sideways.jpg") == (20, 40)  # header-only size agrees


def test_sixteen_bit_grayscale_is_scaled_not_clamped(tmp_path):
    values = np.array([[0, 257 * 10, 32768, 65535]], dtype=np.uint16)
    path = _save(Image.fromarray(values), tmp_path / "deep.png")
    assert Image.open(path).mode.startswith("I")  # really stored as 16-bit
    image = load_image(path)
    assert image.mode == "RGB"
    assert [image.getpixel((x, 0)) for x in range(4)] == [
        (0, 0, 0), (10, 10, 10), (128, 128, 128), (255, 255, 255)]


def test_sixteen_bit_tiff(tmp_path):
    values = np.full((3, 5), 16384, dtype=np.uint16)
    path = _save(Image.fromarray(values), tmp_path / "deep.tif")
    assert load_image(path).getpixel((0, 0)) == (64, 64, 64)


def test_float_image_is_scaled(tmp_path):
    values = np.array([[0.0, 0.5, 1.0]], dtype=np.float32)
    path = _save(Image.fromarray(values, mode="F"), tmp_path / "float.tif")
    assert [load_image(path).getpixel((x, 0))[0] for x in range(3)] == [0, 128, 255]


def test_cmyk_jpeg_becomes_rgb(tmp_path):
    path = _save(Image.new("CMYK", (16, 16), (0, 255, 255, 0)), tmp_path / "cmyk.jpg", quality=95)
    assert Image.open(path).mode == "CMYK"
    r, g, b = load_image(path).getpixel((8, 8))
    assert r > 230 and g < 30 and b < 30  # pure red, not inverted cyan


def test_palette_with_transparency_is_composited_on_white(tmp_path):
    image = Image.new("P", (4, 1))
    image.putpalette([0, 0, 0, 255, 0, 0] + [0] * 762)
    image.putpixel((0, 0), 0)  # index 0 is the transparent one
    image.putpixel((1, 0), 1)
    path = _save(image, tmp_path / "palette.png", transparency=0)
    assert Image.open(path).mode == "P"
    loaded = load_image(path)
    assert loaded.getpixel((0, 0)) == (255, 255, 255)  # transparent -> paper white, not black
    assert loaded.getpixel((1, 0)) == (255, 0, 0)


def test_alpha_channel_is_composited_on_white(tmp_path):
    rgba = Image.new("RGBA", (2, 1), (0, 0, 0, 0))
    rgba.putpixel((1, 0), (255, 0, 0, 128))
    loaded = load_image(_save(rgba, tmp_path / "alpha.png"))
    assert loaded.getpixel((0, 0)) == (255, 255, 255)
    r, g, b = loaded.getpixel((1, 0))
    assert r == 255 and 120 <= g <= 135 and g == b  # half red over white

    la = Image.new("LA", (1, 1), (0, 0))
    assert load_image(_save(la, tmp_path / "la.png")).getpixel((0, 0)) == (255, 255, 255)


@pytest.mark.parametrize("mode,value,expected", [
    ("L", 77, (77, 77, 77)),
    ("1", 1, (255, 255, 255)),
    ("RGB", (1, 2, 3), (1, 2, 3)),
])
def test_plain_modes_become_rgb(tmp_path, mode, value, expected):
    path = _save(Image.new(mode, (3, 3), value), tmp_path / f"plain_{mode}.png")
    image = load_image(path)
    assert image.mode == "RGB" and image.getpixel((1, 1)) == expected


@pytest.mark.parametrize("ext,fmt", [("bmp", "BMP"), ("webp", "WEBP"), ("tiff", "TIFF"),
                                     ("jpeg", "JPEG")])
def test_common_formats(tmp_path, ext, fmt):
    path = _save(Image.new("RGB", (12, 7), (10, 200, 30)), tmp_path / f"page.{ext}", fmt,
                 **({"lossless": True} if fmt == "WEBP" else {}))
    image = load_image(path)
    assert image.size == (12, 7)
    assert all(abs(a - b) < 8 for a, b in zip(image.getpixel((6, 3)), (10, 200, 30), strict=True))


def test_animated_gif_gives_first_frame(tmp_path):
    frames = [Image.new("RGB", (4, 4), c) for c in ((255, 0, 0), (0, 0, 255))]
    path = tmp_path / "anim.gif"
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=100)
    assert Image.open(path).n_frames == 2
    assert load_image(path).getpixel((2, 2)) == (255, 0, 0)


def test_non_ascii_path(tmp_path):
    folder = tmp_path / "ワンピース 第1巻" / "çà"
    folder.mkdir(parents=True)
    path = _save(Image.new("RGB", (5, 5), "white"), folder / "頁①.png")
    assert load_image(path).size == (5, 5)


def _assert_clear_error(exc_info, name: str, *hints: str):
    message = str(exc_info.value)
    assert name in message, message
    assert any(h in message for h in hints), message


def test_truncated_jpeg(tmp_path):
    noise = np.random.default_rng(0).integers(0, 255, (200, 200, 3), dtype=np.uint8)
    full = tmp_path / "full.jpg"
    Image.fromarray(noise).save(full, quality=90)
    path = tmp_path / "truncated.jpg"
    path.write_bytes(full.read_bytes()[: full.stat().st_size // 2])
    with pytest.raises(ImageError) as exc_info:
        load_image(path)
    _assert_clear_error(exc_info, "truncated.jpg", "truncated", "damaged")
    assert "Copy the page again" in str(exc_info.value)


def test_garbage_bytes_named_png(tmp_path):
    path = tmp_path / "garbage.png"
    path.write_bytes(np.random.default_rng(1).bytes(4096))
    with pytest.raises(ImageError) as exc_info:
        load_image(path)
    _assert_clear_error(exc_info, "garbage.png", "not a readable image")


def test_png_with_corrupt_data(tmp_path):
    data = bytearray((_save(Image.new("RGB", (64, 64), "red"), tmp_path / "ok.png")).read_bytes())
    data[60:80] = b"\x00" * 20  # inside the compressed IDAT stream
    path = tmp_path / "corrupt.png"
    path.write_bytes(bytes(data))
    with pytest.raises(ImageError) as exc_info:
        load_image(path)
    _assert_clear_error(exc_info, "corrupt.png", "damaged", "truncated", "not a readable")


def test_zero_byte_file(tmp_path):
    path = tmp_path / "empty.jpg"
    path.write_bytes(b"")
    with pytest.raises(ImageError) as exc_info:
        load_image(path)
    _assert_clear_error(exc_info, "empty.jpg", "0 bytes")
    with pytest.raises(ImageError):
        image_size(b"", "empty.jpg")


def test_text_file_named_jpg(tmp_path):
    path = tmp_path / "notes.jpg"
    path.write_text("this is not a picture\n", encoding="utf-8")
    with pytest.raises(ImageError) as exc_info:
        load_image(path)
    _assert_clear_error(exc_info, "notes.jpg", "not a readable image")


def test_missing_file(tmp_path):
    with pytest.raises(ImageError) as exc_info:
        load_image(tmp_path / "gone.png")
    _assert_clear_error(exc_info, "gone.png", "not found")


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
@pytest.mark.parametrize("width,height", [(100_000, 100_000), (13_000, 12_000)])
def test_decompression_bomb_is_refused(tmp_path, width, height):
    small = io.BytesIO()
    Image.new("L", (8, 8)).save(small, "PNG")
    path = tmp_path / "bomb.png"
    path.write_bytes(_patch_png_size(small.getvalue(), width, height))
    assert width * height > images.MAX_PIXELS
    with pytest.raises(ImageError) as exc_info:
        load_image(path)
    _assert_clear_error(exc_info, "bomb.png", "too large")
    with pytest.raises(ImageError, match="too large"):
        image_size(path.read_bytes(), "bomb.png")


def test_decode_image_names_archive_members():
    with pytest.raises(ImageError, match=r"vol\.cbz: 001\.png"):
        decode_image(b"\x89PNG\r\n\x1a\n broken", "vol.cbz: 001.png")
