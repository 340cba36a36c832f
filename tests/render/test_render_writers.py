"""Page writers: image names and formats, CBZ, a PDF a real reader opens, a PSD psd-tools opens."""
from __future__ import annotations

import zipfile

import numpy as np
import pytest
from PIL import Image

from app.errors import UserError
from app.render.writers import CbzWriter, PdfWriter, output_name, write_image, write_psd


def _page(w=120, h=80, value=0):
    rng = np.random.default_rng(value)
    return rng.integers(0, 256, (h, w, 3), dtype=np.uint8)


def test_output_names_follow_the_page():
    assert output_name("001.png", "png") == "001.png"
    assert output_name("001.png", "psd") == "001.psd"
    assert output_name("ch1/p 3.jpeg", "webp") == "ch1/p 3.webp"


@pytest.mark.parametrize("ext", ["png", "webp"])
def test_lossless_images_round_trip(tmp_path, ext):
    rgb = _page()
    path = write_image(rgb, tmp_path / f"x.{ext}")
    assert np.array_equal(np.asarray(Image.open(path).convert("RGB")), rgb)
    assert [p.name for p in tmp_path.iterdir()] == [f"x.{ext}"], "no temporary file left"


def test_jpeg_is_close(tmp_path):
    rgb = np.full((64, 64, 3), 180, np.uint8)
    path = write_image(rgb, tmp_path / "x.jpg")
    assert Image.open(path).format == "JPEG"
    assert np.abs(np.asarray(Image.open(path), np.int16) - 180).max() <= 2


def test_cbz_holds_every_page_in_order(tmp_path):
    with CbzWriter(tmp_path / "v.cbz") as cbz:
        cbz.add("002.png", _page(value=2))
        cbz.add("010.png", _page(value=10))
    with zipfile.ZipFile(tmp_path / "v.cbz") as z:
        assert z.namelist() == ["002.png", "010.png"]
        assert np.array_equal(np.asarray(Image.open(z.open("010.png"))), _page(value=10))


def test_failed_export_leaves_no_file(tmp_path):
    with pytest.raises(RuntimeError), CbzWriter(tmp_path / "v.cbz") as cbz:
        cbz.add("1.png", _page())
        raise RuntimeError("cancelled")
    assert list(tmp_path.iterdir()) == []


def test_unwritable_folder_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UserError, match="cannot write the export"):
        write_image(_page(), blocker / "sub" / "x.png")


def test_pdf_opens_in_a_pdf_reader(tmp_path, qapp):
    from PySide6.QtCore import QSize
    from PySide6.QtPdf import QPdfDocument

    pages = [np.full((300, 200, 3), (200, 30, 30), np.uint8), np.full((150, 100, 3), (30, 30, 200), np.uint8)]
    with PdfWriter(tmp_path / "v.pdf") as pdf:
        for p in pages:
            pdf.add(p)
    doc = QPdfDocument()
    assert doc.load(str(tmp_path / "v.pdf")) == QPdfDocument.Error.None_
    assert doc.pageCount() == 2
    size = doc.pagePointSize(0)
    assert abs(size.width() - 200 * 72 / 150) < 0.5 and abs(size.height() - 300 * 72 / 150) < 0.5
    image = doc.render(1, QSize(100, 150))
    colour = image.pixelColor(50, 75)
    assert abs(colour.blue() - 200) < 12 and colour.red() < 45


def test_psd_layers_open_with_psd_tools(tmp_path):
    from psd_tools import PSDImage

    original, cleaned = _page(value=1), _page(value=2)
    text = np.zeros((20, 30, 4), np.uint8)
    text[5:15, 5:25] = (10, 20, 30, 255)
    path = write_psd(tmp_path / "p.psd", original, cleaned, [("1", 40, 30, text), ("2", 0, 0, text)])
    psd = PSDImage.open(path)
    assert psd.size == (120, 80)
    assert [layer.name for layer in psd] == ["original", "cleaned", "1", "2"]
    assert not psd[0].visible and psd[1].visible
    assert psd[2].mask is None, "text layers are transparent, not masked"
    assert np.array_equal(np.asarray(psd[0].topil().convert("RGB")), original)
    assert np.array_equal(np.asarray(psd[1].topil().convert("RGB")), cleaned)
    assert psd[2].bbox == (40, 30, 70, 50)
    assert np.array_equal(np.asarray(psd[2].topil()), text)
    merged = np.asarray(psd.topil().convert("RGB"))
    assert tuple(merged[40, 50]) == (10, 20, 30) and tuple(merged[0, 60]) == tuple(cleaned[0, 60])
