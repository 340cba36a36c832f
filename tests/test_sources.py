"""Opening folders, CBZ/ZIP archives and single files: listing, natural order, lazy decoding."""
from __future__ import annotations

import io
import zipfile

import pytest
from PIL import Image

from app.core.sources.source import ArchiveSource, FileSource, FolderSource, natural_sorted, open_source
from app.errors import ImageError, UserError


def _png_bytes(color=(255, 255, 255), size=(6, 4)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, "PNG")
    return buffer.getvalue()


def test_natural_sort():
    names = ["page10.png", "Page2.png", "page1.png", "page02b.png", "ch10/p1.png", "ch2/p10.png",
             "ch2/p9.png", "cover.png"]
    assert natural_sorted(names) == [
        "ch2/p9.png", "ch2/p10.png", "ch10/p1.png", "cover.png", "page1.png", "Page2.png",
        "page02b.png", "page10.png"]


def test_folder_lists_images_in_natural_order_with_nested_folders(tmp_path):
    for name in ["10.png", "2.jpg", "1.JPEG", "sub/3.webp", "sub/deeper/1.bmp", "a.gif",
                 "b.tiff", "c.tif", "d.avif"]:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
    for skipped in ["notes.txt", ".hidden.png", ".hayai-project.json", ".thumbs/1.png", "Thumbs.db"]:
        path = tmp_path / skipped
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
    source = open_source(tmp_path)
    assert isinstance(source, FolderSource) and source.kind == "folder"
    assert source.path == tmp_path
    assert source.page_names == ["1.JPEG", "2.jpg", "10.png", "a.gif", "b.tiff", "c.tif", "d.avif",
                                 "sub/3.webp", "sub/deeper/1.bmp"]


def test_500_pages_list_without_decoding(tmp_path):
    # Not one of these files is a valid image: listing works only because nothing is decoded.
    for i in range(500):
        (tmp_path / f"p{i}.png").write_bytes(b"not decoded while listing")
    source = open_source(tmp_path)
    assert len(source) == 500
    assert source.page_names[:3] == ["p0.png", "p1.png", "p2.png"]
    assert source.page_names[-1] == "p499.png"
    with pytest.raises(ImageError, match="p7.png"):
        source.load("p7.png")  # decoding happens only on demand


def test_folder_load_and_size(tmp_path):
    (tmp_path / "1.png").write_bytes(_png_bytes((1, 2, 3), (30, 20)))
    with open_source(tmp_path) as source:
        image = source.load("1.png")
        assert image.mode == "RGB" and image.size == (30, 20) and image.getpixel((0, 0)) == (1, 2, 3)
        assert source.size("1.png") == (30, 20)
        with pytest.raises(ImageError, match="no such page"):
            source.load("2.png")


def test_bad_pages_do_not_stop_the_volume(tmp_path):
    (tmp_path / "001.png").write_bytes(_png_bytes())
    (tmp_path / "002.png").write_bytes(b"")
    (tmp_path / "003.jpg").write_bytes(b"garbage" * 100)
    (tmp_path / "004.png").write_bytes(_png_bytes()[:40])
    (tmp_path / "005.png").write_bytes(_png_bytes())
    source = open_source(tmp_path)
    results = {}
    for name in source.page_names:
        try:
            results[name] = source.load(name).size
        except ImageError as exc:
            results[name] = str(exc)
    assert results["001.png"] == (6, 4) and results["005.png"] == (6, 4)
    for bad in ("002.png", "003.jpg", "004.png"):
        assert str(tmp_path / bad) in results[bad]


def test_page_removed_after_opening(tmp_path):
    (tmp_path / "1.png").write_bytes(_png_bytes())
    source = open_source(tmp_path)
    (tmp_path / "1.png").unlink()
    with pytest.raises(ImageError, match="removed or renamed"):
        source.load("1.png")


def test_non_ascii_folder(tmp_path):
    folder = tmp_path / "進撃の巨人" / "第１話"
    folder.mkdir(parents=True)
    (folder / "ページ2.png").write_bytes(_png_bytes())
    (folder / "ページ10.png").write_bytes(_png_bytes())
    source = open_source(tmp_path / "進撃の巨人")
    assert source.page_names == ["第１話/ページ2.png", "第１話/ページ10.png"]
    assert source.load("第１話/ページ10.png").size == (6, 4)


def _make_cbz(path, members: dict[str, bytes]):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def test_cbz_with_nested_folders(tmp_path):
    good = _png_bytes((9, 9, 9), (8, 5))
    path = _make_cbz(tmp_path / "第1巻.cbz", {
        "vol/ch2/p10.png": good, "vol/ch2/p9.png": good, "vol/ch10/p1.png": good,
        "vol/cover.JPG": b"broken", "__MACOSX/vol/._p1.png": b"junk", "vol/.DS_Store": b"junk",
        "vol/.hidden/1.png": good, "vol/info.txt": b"text", "vol/ch2/": b"",
    })
    with open_source(path) as source:
        assert isinstance(source, ArchiveSource) and source.kind == "archive"
        assert source.page_names == ["vol/ch2/p9.png", "vol/ch2/p10.png", "vol/ch10/p1.png",
                                     "vol/cover.JPG"]
        assert source.load("vol/ch2/p10.png").getpixel((0, 0)) == (9, 9, 9)
        assert source.size("vol/ch10/p1.png") == (8, 5)
        with pytest.raises(ImageError) as exc_info:
            source.load("vol/cover.JPG")
        assert "第1巻.cbz: vol/cover.JPG" in str(exc_info.value)


def test_zip_extension_and_lazy_members(tmp_path):
    path = _make_cbz(tmp_path / "pages.zip", {f"{i}.png": b"not an image" for i in range(500)})
    source = open_source(path)
    assert len(source.page_names) == 500 and source.page_names[10] == "10.png"
    source.close()


def test_not_a_zip(tmp_path):
    path = tmp_path / "broken.cbz"
    path.write_bytes(b"PK\x03\x04 but not really a zip")
    with pytest.raises(UserError, match="broken.cbz.*not a valid ZIP/CBZ"):
        open_source(path)


def test_single_image_file(tmp_path):
    path = tmp_path / "one.png"
    path.write_bytes(_png_bytes(size=(3, 2)))
    source = open_source(path)
    assert isinstance(source, FileSource) and source.page_names == ["one.png"]
    assert source.load("one.png").size == (3, 2)


def test_unsupported_and_missing_paths(tmp_path):
    with pytest.raises(UserError, match="no such folder"):
        open_source(tmp_path / "missing")
    rar = tmp_path / "vol.cbr"
    rar.write_bytes(b"Rar!")
    with pytest.raises(UserError, match="CBR files are not supported"):
        open_source(rar)


def test_size_reads_only_the_header(tmp_path):
    exif = Image.Exif()
    exif[0x0112] = 8
    Image.new("RGB", (30, 10)).save(tmp_path / "rot.jpg", exif=exif.tobytes())
    full = _png_bytes(size=(300, 200))
    (tmp_path / "cut.png").write_bytes(full[:60])  # header intact, pixel data cut off
    (tmp_path / "empty.png").write_bytes(b"")
    cbz = _make_cbz(tmp_path / "v.cbz", {"cut.png": full[:60]})
    with open_source(tmp_path) as source:
        assert source.size("cut.png") == (300, 200)
        with pytest.raises(ImageError, match="cut.png"):
            source.load("cut.png")
        assert source.size("rot.jpg") == (10, 30)  # upright size, as load() returns it
        assert source.load("rot.jpg").size == (10, 30)
        with pytest.raises(ImageError, match="0 bytes"):
            source.size("empty.png")
        with pytest.raises(ImageError, match="no such page"):
            source.size("other.png")
    with open_source(cbz) as source:
        assert source.size("cut.png") == (300, 200)


def _clear_utf8_flags(data: bytes) -> bytes:
    """Clear the 'names are UTF-8' flag (bit 11) in every local and central header."""
    out = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = out.find(signature)
        while start != -1:
            out[start + offset + 1] &= ~0x08 & 0xFF
            start = out.find(signature, start + 4)
    return bytes(out)


def test_cbz_utf8_names_without_the_utf8_flag(tmp_path):
    path = _make_cbz(tmp_path / "jp.cbz", {"第1話/ページ2.png": _png_bytes(), "第1話/ページ10.png": _png_bytes()})
    path.write_bytes(_clear_utf8_flags(path.read_bytes()))
    with zipfile.ZipFile(path) as raw:
        assert raw.namelist()[0] != "第1話/ページ2.png"  # zipfile alone reads cp437 mojibake
    with open_source(path) as source:
        assert source.page_names == ["第1話/ページ2.png", "第1話/ページ10.png"]
        assert source.load("第1話/ページ10.png").size == (6, 4)


def test_cbz_damaged_member_is_a_page_error(tmp_path):
    good = _png_bytes((5, 5, 5), (40, 40))
    path = tmp_path / "crc.cbz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("1.png", good)
        archive.writestr("2.png", good)
    data = bytearray(path.read_bytes())
    first = data.find(good)
    data[first + 50] ^= 0xFF  # flip a byte inside member 1.png: its CRC no longer matches
    path.write_bytes(bytes(data))
    with open_source(path) as source:
        with pytest.raises(ImageError, match=r"crc\.cbz: 1\.png: cannot extract"):
            source.load("1.png")
        assert source.load("2.png").getpixel((0, 0)) == (5, 5, 5)  # the rest still opens


def test_natural_order_reads_full_width_digits_as_numbers():
    names = ["１０.png", "２.png", "1.png", "第１１話/３.png", "第２話/１０.png", "第２話/９.png", "p１0.png", "p9.png"]
    assert natural_sorted(names) == ["1.png", "２.png", "１０.png", "p9.png", "p１0.png",
                                     "第２話/９.png", "第２話/１０.png", "第１１話/３.png"]
