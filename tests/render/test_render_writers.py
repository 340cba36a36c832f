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


def _lettered_page():
    """A page with a bubble (mixed Latin / kanji, outlined, right-aligned) and a vertical free-text
    block (a tate-chu-yoko number), cleaned and lettered by the one renderer."""
    from PIL import ImageDraw

    from app.render.inpaint import OpenCVInpainter
    from app.render.page import PageRenderer, RenderBlock
    from app.render.style import TextStyle

    image = Image.new("RGB", (420, 320), "white")
    d = ImageDraw.Draw(image)
    d.ellipse((20, 20, 230, 170), outline="black", width=3)
    d.rectangle((90, 80, 160, 100), fill="black")  # the source text to clean
    blocks = [RenderBlock("a", 1, "bubble", (20, 20, 231, 171), None, "Hello 山田, where are you going?", True,
                          TextStyle(color="#203080", outline_width=2, outline_color="#ffee00", align="right")),
              RenderBlock("b", 2, "other", (280, 20, 360, 300), None, "あと12分だ！", False,
                          TextStyle(direction="vertical"))]
    renderer = PageRenderer(np.asarray(image), OpenCVInpainter())
    return renderer, blocks, renderer.render(blocks)


def _write_lettered(tmp_path):
    from app.render.writers import psd_text

    renderer, blocks, result = _lettered_page()
    types = [psd_text(b.order, layer, b.style) for b, layer in result.layers]
    path = write_psd(tmp_path / "p.psd", result.original, result.cleaned, renderer.patched(blocks), types,
                     result.final)
    return path, renderer, blocks, result, types


def test_psd_has_editable_type_layers_that_psd_tools_reads_back(tmp_path):
    from psd_tools import PSDImage

    from app.fonts import font_file
    from app.render.glyphs import postscript_name

    path, renderer, blocks, result, types = _write_lettered(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["p.psd"], "no temporary file left"
    psd = PSDImage.open(path)
    assert psd.size == (420, 320)
    # bottom to top: original (hidden), cleaned, the patches, a group per block (block 1 on top)
    assert [layer.name for layer in psd] == ["original", "cleaned", "inpainting patches", "block 2", "block 1"]
    assert [layer.visible for layer in psd] == [False, True, True, True, True]
    assert {layer.fill_opacity for layer in psd.descendants()} == {255}, "no layer at a fill of 0 %"
    assert np.array_equal(np.asarray(psd[0].topil().convert("RGB")), result.original)
    assert np.array_equal(np.asarray(psd[1].topil().convert("RGB")), result.cleaned)
    patches = np.asarray(psd[2].topil())
    written = renderer.patched(blocks)
    assert written.any() and np.array_equal(patches[..., 3] > 0, written)
    assert np.array_equal(patches[written][:, :3], result.cleaned[written])
    # the merged image, what viewers without layers show, is the PNG export's pixels
    assert np.array_equal(np.asarray(psd.topil().convert("RGB")), result.final)

    one, two = psd[4], psd[3]
    assert [layer.name for layer in one] == ["1 pixels", "1 text"]
    raster, text = one
    layer_a = result.layers[0][1]
    h, w = layer_a.rgba.shape[:2]
    assert raster.kind == "pixel" and not raster.visible
    assert raster.bbox == (layer_a.x0, layer_a.y0, layer_a.x0 + w, layer_a.y0 + h)
    assert np.array_equal(np.asarray(raster.topil()), layer_a.rgba)
    assert text.kind == "type" and text.visible
    assert text.text.split("\r") == [ln.text for ln in layer_a.layout.lines]  # the lines as set
    assert " ".join(text.text.split("\r")).replace("山 田", "山田") == "Hello 山田, where are you going?" or \
        "".join(text.text.split()) == "Hello山田,whereareyougoing?"
    fonts = [f["Name"] for f in text.resource_dict["FontSet"]]
    runs = text.engine_dict["StyleRun"]["RunArray"]
    used = [fonts[r["StyleSheet"]["StyleSheetData"]["Font"]] for r in runs]
    comic, noto = postscript_name(str(font_file("comic"))), postscript_name(str(font_file("cjk")))
    assert (comic, noto) == ("ComicNeue-Regular", "NotoSansCJKjp-Regular")
    assert used == [comic, noto, comic], "the kanji are set in Noto, the Latin in the block's face"
    sheet = runs[0]["StyleSheet"]["StyleSheetData"]
    assert sheet["FontSize"] == layer_a.layout.size
    assert [round(v * 255) for v in sheet["FillColor"]["Values"]] == [255, 0x20, 0x30, 0x80]
    assert sheet["StrokeFlag"] and sheet["OutlineWidth"] == 2
    assert [round(v * 255) for v in sheet["StrokeColor"]["Values"]] == [255, 0xff, 0xee, 0x00]
    paragraph = text.engine_dict["ParagraphRun"]["RunArray"][0]["ParagraphSheet"]["Properties"]
    assert paragraph["Justification"] == 1  # right
    x0, y0, x1, y1 = types[0].frame
    assert text.transform[4:] == pytest.approx((x0, y0))
    box = text.engine_dict["Rendered"]["Shapes"]["Children"][0]["Cookie"]["Photoshop"]["BoxBounds"]
    assert list(box) == pytest.approx([0, 0, x1 - x0, y1 - y0])
    assert layer_a.x0 <= x0 and x1 <= layer_a.x0 + w and layer_a.y0 <= y0 and y1 <= layer_a.y0 + h
    # its pixels are the block as rendered (Photoshop's cache of a type layer; what GIMP shows)
    assert text.bbox == raster.bbox and np.array_equal(np.asarray(text.topil()), layer_a.rgba)

    vertical = two[1]
    assert vertical.name == "2 text" and vertical.text == "あと12分だ！"
    assert vertical.engine_dict["Rendered"]["Shapes"]["WritingDirection"] == 2  # vertical
    runs = vertical.engine_dict["StyleRun"]["RunArray"]
    directions = [r["StyleSheet"]["StyleSheetData"].get("BaselineDirection") for r in runs]
    lengths = list(vertical.engine_dict["StyleRun"]["RunLengthArray"])
    assert lengths[:2] == [2, 2] and directions[1] != directions[0], "12 is set tate-chu-yoko"


def test_psd_layers_composite_to_the_png(tmp_path):
    """psd-tools' own compositing of the visible layers (not the merged image) gives the exported
    page, to within blending rounding."""
    from psd_tools import PSDImage

    path, _renderer, _blocks, result, _types = _write_lettered(tmp_path)
    composed = np.asarray(PSDImage.open(path).composite(force=True).convert("RGB")).astype(int)
    assert np.abs(composed - result.final.astype(int)).max() <= 2


@pytest.mark.parametrize("rtl", [True, False])
def test_cbz_holds_a_comicinfo_that_comicapi_reads(tmp_path, rtl):
    from comicapi.comicarchive import ComicArchive

    from app.render.writers import ComicInfo

    info = ComicInfo.from_name("My Series v03 ch12.cbz", language="en", rtl=rtl, tool="Hayai Desktop 0.1.0")
    assert (info.series, info.volume, info.number) == ("My Series", 3, "12")
    path = tmp_path / "out.cbz"
    with CbzWriter(path, info=info) as cbz:
        cbz.add("001.png", _page(value=1))
        cbz.add("002.png", _page(w=100, value=2))
    with zipfile.ZipFile(path) as z:
        assert z.namelist() == ["001.png", "002.png", "ComicInfo.xml"]
        xml = z.read("ComicInfo.xml").decode("utf-8")
    archive = ComicArchive(str(path))
    assert archive.has_cix()
    md = archive.read_cix()
    assert (md.series, md.volume, md.issue, md.language, md.page_count) == ("My Series", 3, "12", "en", 2)
    assert md.manga == ("YesAndRightToLeft" if rtl else "No")
    assert "Hayai Desktop 0.1.0" in md.notes and "<Translator>Hayai Desktop 0.1.0</Translator>" in xml
    assert [(p["ImageWidth"], p["ImageHeight"]) for p in md.pages] == [("120", "80"), ("100", "80")]
    assert md.pages[0]["Type"] == "FrontCover"
