"""Two training corrections joined in one box (app.ocr.training_data.joined and joins, the `join`
setting of app.ocr.adapt): the second goes on in the first's column when both are one column and
short, otherwise it is the next column to the left (vertical text reads right to left) or the
next line below; the text is theirs, first then second; only training corrections are joined,
never a held-out one, and a real-size model gets none unless asked."""
from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
from PIL import Image, ImageDraw

from app.errors import UserError
from app.ocr.adapt import AdaptSettings, Sample, adapt
from app.ocr.adapt_crops import crops_of
from app.ocr.training_data import joined, joins
from tests.test_adapt import DEMO, FAST, _samples


@pytest.fixture(scope="module")
def demo():
    from app.ocr import load_recognizer

    return load_recognizer(DEMO, device="cpu", precision="fp32")


def _box(size, ink, shade=0):
    """A crop of white paper with one dark rectangle of ink at `ink` (x0, y0, x1, y1)."""
    im = Image.new("RGB", size, (255, 255, 255))
    ImageDraw.Draw(im).rectangle(ink, fill=(shade, shade, shade))
    return im


def _ink_rows(im):
    rows = np.flatnonzero((np.asarray(im.convert("L")) < 128).any(axis=1))
    return rows


def test_one_column_goes_on_below_the_first_and_a_longer_pair_is_the_next_column_to_the_left():
    a = _box((30, 100), (8, 10, 21, 79))  # ink on rows 10-79, 20 rows of paper below it
    b = _box((15, 40), (4, 6, 10, 33), shade=90)  # half as broad: scaled to 30 wide, ink from row 12
    one = joined(a, b, vertical=True, one_line=True)
    # a's paper below its ink trimmed to a small gap (15 % of the breadth: 4 px); b's paper above its ink cut
    assert one.size == (30, 80 + 4 + (80 - 12)), one.size
    px = np.asarray(one.convert("L"))
    assert px[10:80, 8:22].max() < 10 and px[80:84].min() == 255  # a first, then the gap
    assert 60 <= px[84:84 + 50, 8:22].mean() <= 120  # b's lighter ink right after, at a's breadth
    two = joined(a, b, vertical=True, one_line=False)
    assert two.size == (60, 100)
    px = np.asarray(two.convert("L"))
    assert px[10:80, 38:51].max() < 10  # the first column is the right one
    assert 60 <= px[12:60, 8:22].mean() <= 120 and px[:, 30:36].min() == 255  # the second on the left, from the top
    lines = joined(_box((100, 30), (10, 8, 79, 21)), _box((40, 15), (6, 4, 33, 10)), vertical=False, one_line=False)
    assert lines.size == (100, 60) and _ink_rows(lines)[0] == 8 and _ink_rows(lines)[-1] >= 30  # the second below


def test_joined_crops_pair_examples_of_one_direction_their_texts_in_order_the_same_for_a_seed():
    tall = [Sample(_box((30, 30 * n + 20), (8, 10, 21, 30 * n)), "あいうえおかきく"[:n], f"p{n}") for n in (1, 2, 3)]
    wide = [Sample(_box((30 * n + 20, 30), (10, 8, 30 * n, 21)), "ABCDEFGH"[:n], f"q{n}") for n in (1, 2, 3)]
    made = joins(tall + wide, 12, random.Random(3))
    assert len(made) == 12
    texts = {x.text for x in tall}, {x.text for x in wide}
    for im, text in made:
        pairs = [(p, q) for group in texts for p in group for q in group if p != q and p + q == text]
        assert pairs, text  # two examples of one direction, the first's text first
        assert (im.height >= im.width) == (text[0] in "あいうえおかきく")
    # the longest one-column example holds 3 characters: a pair of 1 + 2 goes on in one column, 2 + 3 does not
    for im, text in made:
        if text[0] in "あいうえおかきく":
            assert (im.width == 30) == (len(text) <= 3), (text, im.size)
    again = joins(tall + wide, 12, random.Random(3))
    assert [t for _, t in again] == [t for _, t in made]
    assert all(np.array_equal(np.asarray(x), np.asarray(y)) for (x, _), (y, _) in zip(made, again))


def test_a_run_trains_on_joined_training_corrections_never_a_held_out_one(demo):
    samples = _samples()
    s = replace(FAST, augment=0)
    looked = crops_of(demo.model.cfg, samples, s, None, None)  # join "auto": one a training correction here
    train = [looked.corrections[i].text for i in looked.train_idx]
    held = {looked.corrections[i].text for i in looked.held_idx}
    made = looked.variants[len(looked.variants) - looked.joined:]
    assert looked.joined == len(train) and len(made) == len(train)
    for _, text in made:
        assert any(text == p + q for p in train for q in train), text
        assert not any(h and h in text for h in held if h not in "".join(train)), text
    none = crops_of(demo.model.cfg, samples, replace(s, join=0), None, None)
    assert none.joined == 0 and len(none.variants) == 0
    assert crops_of(demo.model.cfg, samples, replace(s, join=0.5), None, None).joined == round(0.5 * len(train))
    result = adapt(demo, samples, s, train=False)
    assert result.joined == len(train) and f"{len(train)} boxes made of two of them" in result.summary()
    for wrong in ("some", -1, 9, True):
        with pytest.raises(UserError, match="join="):
            adapt(demo, samples, replace(s, join=wrong), train=False)


def test_a_real_size_model_gets_no_joined_crops_unless_asked(tmp_path):
    from app.ocr import load_recognizer
    from app.ocr.testing import write_tiny_checkpoint

    wide = load_recognizer(write_tiny_checkpoint(tmp_path / "wide", "nova", d_vision=512), device="cpu",
                           precision="fp32")
    samples = _samples(16)
    assert crops_of(wide.model.cfg, samples, AdaptSettings(), None, None).joined == 0  # each costs a correction's time
    assert crops_of(wide.model.cfg, samples, AdaptSettings(join=1), None, None).joined > 0
