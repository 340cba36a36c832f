"""Synthetic page generator (tools/synth): determinism, truth consistency, crops, exports."""
from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image, ImageFilter

from tools.synth import charset, generate_page, write_crops, write_pages, write_yolo
from tools.synth.__main__ import main as synth_main
from tools.synth.fonts import find_faces
from tools.synth.text import TextStyle, render

SIZE = (768, 1086)  # smaller than the default, to keep the tests fast


@pytest.fixture(scope="module")
def pages():
    return [generate_page(7, i, size=SIZE) for i in range(6)]


def test_same_seed_same_page_and_truth():
    a_img, a_truth = generate_page(11, 3, size=SIZE)
    b_img, b_truth = generate_page(11, 3, size=SIZE)
    assert a_img.tobytes() == b_img.tobytes()
    assert a_truth == b_truth
    c_img, _ = generate_page(12, 3, size=SIZE)
    assert c_img.tobytes() != a_img.tobytes()


def test_written_files_are_byte_identical(tmp_path):
    write_pages(tmp_path / "a", 2, seed=5, size=SIZE)
    write_pages(tmp_path / "b", 2, seed=5, size=SIZE, workers=2)
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == ["page_0000.json", "page_0000.png", "page_0001.json", "page_0001.png"]
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    truth = json.loads((tmp_path / "a" / "page_0001.json").read_text(encoding="utf-8"))
    assert truth["image"] == "page_0001.png"
    assert Image.open(tmp_path / "a" / "page_0001.png").size == SIZE


def test_truth_is_consistent_with_the_page(pages):
    for image, truth in pages:
        assert image.mode == "L" and image.size == SIZE == (truth["width"], truth["height"])
        assert truth["blocks"], "every page in this run has blocks"
        assert [b["order"] for b in truth["blocks"]] == list(range(1, len(truth["blocks"]) + 1))
        panels = [b["panel"] for b in truth["blocks"]]
        assert panels == sorted(panels), "blocks follow panel order"
        for b in truth["blocks"]:
            x0, y0, x1, y1 = b["box"]
            assert 0 <= x0 < x1 <= SIZE[0] and 0 <= y0 < y1 <= SIZE[1]
            tx0, ty0, tx1, ty1 = b["text_box"]
            assert x0 <= tx0 < tx1 <= x1 and y0 <= ty0 < ty1 <= y1, "text lies inside its block"
            assert b["text"] and "".join(b["lines"]) == b["text"]
            assert 1 <= len(b["lines"]) <= 4 and len(b["text"]) <= 20
            assert b["kind"] in ("bubble", "text")
            assert set(b["text"]) <= set(charset())
            # the text is really drawn: its ink box holds dark pixels on a light ground
            crop = np.asarray(image.crop(b["text_box"]))
            assert crop.min() < 140 and crop.std() > 15, (b, crop.min(), crop.std())


def test_both_writing_directions_and_kinds_occur(pages):
    blocks = [b for _, truth in pages for b in truth["blocks"]]
    assert {b["vertical"] for b in blocks} == {True, False}
    assert {b["kind"] for b in blocks} == {"bubble", "text"}
    assert len({b["shape"] for b in blocks if b["kind"] == "bubble"}) >= 2


def test_vertical_text_runs_in_columns_right_to_left():
    face = find_faces()[0]
    style = TextStyle(face, 24)
    tall = np.asarray(render(["ああああ"], style, vertical=True))
    wide = np.asarray(render(["ああああ"], style, vertical=False))
    assert tall.shape[0] > 3 * tall.shape[1] and wide.shape[1] > 3 * wide.shape[0]
    # ー is turned to a vertical stroke in vertical text
    bar = np.argwhere(np.asarray(render(["ー"], style, vertical=True)) > 128)
    assert np.ptp(bar[:, 0]) > 3 * max(np.ptp(bar[:, 1]), 1)
    # two columns: the first line is the right column
    two = np.asarray(render(["あ", "ーーーー"], style, vertical=True)) > 128
    right, left = two[:, two.shape[1] // 2:], two[:, : two.shape[1] // 2]
    assert right[:, :].any(axis=1).sum() < left.any(axis=1).sum()


def test_crops_manifest(tmp_path):
    manifest = write_crops(tmp_path, count=12, seed=3, size=SIZE)
    rows = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 12
    for row in rows:
        assert row["image"].startswith("crops/") and row["text"]
        crop = np.asarray(Image.open(tmp_path / row["image"]))
        assert crop.size > 0 and crop.std() > 10 and crop.min() < 90, "crop is not blank"
    again = write_crops(tmp_path / "again", count=12, seed=3, size=SIZE)
    assert again.read_bytes() == manifest.read_bytes()
    assert (tmp_path / "crops" / "000012.png").read_bytes() == (tmp_path / "again" / "crops" / "000012.png").read_bytes()


def test_yolo_export(tmp_path):
    data = write_yolo(tmp_path, pages=3, seed=4, size=SIZE, max_side=512)
    text = data.read_text()
    assert "0: bubble" in text and "1: text" in text and "train: images/train" in text
    labels = sorted((tmp_path / "labels").rglob("*.txt"))
    assert [p.parent.name for p in labels].count("val") == 1 and len(labels) == 3
    _, truth = generate_page(4, 0, size=SIZE)
    rows = (tmp_path / "labels" / "train" / "00000.txt").read_text().split("\n")[:-1]
    assert len(rows) == len(truth["blocks"])
    for row in rows:
        cls, *v = row.split()
        assert cls in ("0", "1") and all(0 < float(x) <= 1 for x in v)
    assert max(Image.open(tmp_path / "images" / "train" / "00000.png").size) == 512


def test_cli_writes_pages(tmp_path, capsys):
    assert synth_main([str(tmp_path), "--pages", "1", "--seed", "2", "--size", "512x724"]) == 0
    assert Image.open(tmp_path / "page_0000.png").size == (512, 724)
    assert "wrote 1 pages" in capsys.readouterr().err


def test_layers_give_the_same_page_plus_its_clean_truth_and_text_mask(tmp_path):
    from tools.synth import generate_page_layers

    image, truth = generate_page(7, 2, size=SIZE)
    page, clean, mask, truth2 = generate_page_layers(7, 2, size=SIZE)
    assert page.tobytes() == image.tobytes() and truth2 == truth, "the page itself does not change"
    p, c, m = (np.asarray(x, dtype=np.int16) for x in (page, clean, mask))
    assert clean.mode == mask.mode == "L" and clean.size == mask.size == SIZE
    assert m.max() == 255 and (m > 0).mean() < 0.05
    glyphs = m > 127
    assert np.abs(p - c)[glyphs].mean() > 60, "the clean page has no glyphs where the text was"
    outside = m == 0
    ring = ~np.asarray(mask.filter(ImageFilter.MaxFilter(7))).astype(bool)
    assert np.array_equal(p[ring & outside], c[ring & outside]), "away from the text both layers agree"
    for b in truth["blocks"]:
        x0, y0, x1, y1 = b["text_box"]
        assert m[y0:y1, x0:x1].max() == 255, f"{b['id']}: its text is in the mask"
    # the writer: same pages, plus the two layers in their own folder
    write_pages(tmp_path / "plain", 1, seed=7, size=SIZE, start=2)
    write_pages(tmp_path / "with", 1, seed=7, size=SIZE, start=2, layers=tmp_path / "layers")
    for name in ("page_0002.png", "page_0002.json"):
        assert (tmp_path / "plain" / name).read_bytes() == (tmp_path / "with" / name).read_bytes()
    assert sorted(p.name for p in (tmp_path / "layers").iterdir()) == ["page_0002.clean.png", "page_0002.mask.png"]
    assert np.array_equal(np.asarray(Image.open(tmp_path / "layers" / "page_0002.clean.png")), c)


def test_styled_crops_never_draw_a_character_the_face_lacks():
    # a glyph a face lacks is drawn as its empty box, which no reader can read as the text says:
    # such texts are left out (the Latin face has no kana or kanji: only digits and Latin remain)
    from app.fonts import font_file
    from tools.synth.fonts import FontFace, find_faces
    from tools.synth.styled import covered, styled_crops
    from tools.synth.text import DIGITS, HIRAGANA, KANJI, KATAKANA, LATIN, PUNCT_END

    latin = FontFace("ComicNeue-Regular", font_file("comic"))
    crops = styled_crops(latin, 6, seed=3, max_len=3, latin=True)
    assert len(crops) == 6
    for _, text in crops:
        assert all(ord(ch) in covered(latin) for ch in text), text
        assert not set(text) & set(HIRAGANA + KATAKANA + KANJI), text
    # the training faces have every character the texts draw: their crops are never thinned out
    every = set(HIRAGANA + KATAKANA + KANJI + DIGITS + LATIN + "".join(PUNCT_END) + "、ー")
    for face in find_faces():
        assert not {ch for ch in every if ord(ch) not in covered(face)}, face.name
