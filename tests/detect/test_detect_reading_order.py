"""Reading order on hand-made layouts whose correct order is known."""
from __future__ import annotations

import itertools

import pytest

from app.detect import reading_order


def order_of(named: dict[str, tuple], order: str) -> list[str]:
    names = list(named)
    return [names[i] for i in reading_order([named[n] for n in names], order)]


GRID = {  # two rows of three, exact rows
    "top-left": (0, 0, 100, 100), "top-mid": (150, 0, 250, 100), "top-right": (300, 0, 400, 100),
    "bot-left": (0, 200, 100, 300), "bot-mid": (150, 200, 250, 300), "bot-right": (300, 200, 400, 300),
}


def test_grid_rtl_and_ltr():
    assert order_of(GRID, "rtl") == ["top-right", "top-mid", "top-left", "bot-right", "bot-mid", "bot-left"]
    assert order_of(GRID, "ltr") == ["top-left", "top-mid", "top-right", "bot-left", "bot-mid", "bot-right"]


def test_staggered_tops_stay_in_one_row_band():
    # the row's bubbles start at different heights (the left one lower than the next row would be
    # if judged by top edge alone), but their vertical extents overlap substantially
    row = {"a": (300, 0, 400, 200), "b": (150, 60, 250, 260), "c": (0, 120, 100, 320),
           "next": (200, 380, 400, 480)}
    assert order_of(row, "rtl") == ["a", "b", "c", "next"]
    assert order_of(row, "ltr") == ["c", "b", "a", "next"]


def test_slightly_overlapping_rows_are_separate_bands():
    layout = {"r1-left": (0, 0, 100, 100), "r1-right": (300, 0, 400, 100),
              "r2-left": (0, 80, 100, 180),   # overlaps row 1 by 20 px (< half): a new band
              "r2-right": (300, 90, 400, 190)}
    assert order_of(layout, "rtl") == ["r1-right", "r1-left", "r2-right", "r2-left"]
    assert order_of(layout, "ltr") == ["r1-left", "r1-right", "r2-left", "r2-right"]


def test_tall_bubble_beside_two_stacked_ones():
    # manga: a tall vertical bubble on the right, two small ones stacked on its left; the lower
    # one sits a little further right than the upper one, but they share a column
    layout = {"tall": (300, 0, 360, 400), "upper": (100, 10, 220, 150), "lower": (130, 250, 240, 390)}
    assert order_of(layout, "rtl") == ["tall", "upper", "lower"]
    assert order_of(layout, "ltr") == ["upper", "lower", "tall"]


def test_typical_manga_page():
    # tier 1: one wide panel with two bubbles; tier 2: two panels, right panel has a tall
    # bubble and a small one below-left; left panel one bubble; tier 3: a caption at the left
    page = {
        "t1-right": (820, 40, 900, 260), "t1-left": (520, 60, 600, 280),
        "t2-right-tall": (860, 420, 930, 720), "t2-right-small": (700, 600, 780, 700),
        "t2-left": (200, 430, 300, 650),
        "t3-caption": (60, 900, 400, 960),
    }
    assert order_of(page, "rtl") == ["t1-right", "t1-left", "t2-right-tall", "t2-right-small", "t2-left",
                                     "t3-caption"]


def test_webtoon_strip_ltr():
    strip = {"s1": (40, 100, 300, 180), "s2": (420, 400, 680, 470), "s3": (60, 900, 260, 1000),
             "s3b": (400, 920, 700, 990)}
    assert order_of(strip, "ltr") == ["s1", "s2", "s3", "s3b"]


@pytest.mark.parametrize("order", ["rtl", "ltr"])
def test_deterministic_whatever_the_input_order(order):
    boxes = list(GRID.values()) + [(320, 120, 380, 190)]
    expected = [boxes[i] for i in reading_order(boxes, order)]
    for perm in itertools.islice(itertools.permutations(boxes), 0, 720, 37):
        assert [perm[i] for i in reading_order(list(perm), order)] == expected


def test_empty_and_bad_order():
    assert reading_order([], "rtl") == []
    with pytest.raises(ValueError, match="rtl"):
        reading_order([(0, 0, 1, 1)], "ttb")
