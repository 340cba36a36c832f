"""app.core.reading.evaluation: box matching, truth files, and the page figures `hayai-desktop eval` prints."""
from __future__ import annotations

import json

import pytest
from PIL import Image

from app.core.document.boxes import iou, match_boxes
from app.core.document.types import Block, Page
from app.core.reading.evaluation import PagesEvaluation, TruthBlock, TruthPage, read_truth_folder
from app.errors import UserError


def test_iou():
    assert iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0
    assert iou((0, 0, 10, 10), (5, 0, 15, 10)) == pytest.approx(1 / 3)
    assert iou((0, 0, 10, 10), (20, 20, 30, 30)) == 0.0
    assert iou((0, 0, 0, 0), (0, 0, 0, 0)) == 0.0


def test_matching_is_one_to_one_and_greedy_by_iou():
    truth = [(0, 0, 10, 10), (20, 0, 30, 10)]
    assert match_boxes(truth, [(0, 0, 10, 10)]) == [(0, 0)]
    assert match_boxes(truth, [(1, 0, 11, 10), (0, 0, 10, 10)]) == [(0, 1)], "the better box wins, once"
    assert match_boxes(truth, [(21, 0, 31, 10), (0, 1, 10, 11)]) == [(0, 1), (1, 0)]
    assert match_boxes(truth, [(5, 0, 15, 10)]) == [], "IoU 1/3 is under 0.5"
    assert match_boxes(truth, [(5, 0, 15, 10)], threshold=0.3) == [(0, 0)]


def _block(i, box, text):
    return Block(id=f"b{i}", order=i, kind="bubble", box=box, ocr_text=text)


def test_page_figures():
    truth = TruthPage("p.png", (TruthBlock((0, 0, 100, 100), "あいう", "bubble"),
                                TruthBlock((200, 0, 300, 100), "かきくけ", "bubble"),
                                TruthBlock((0, 200, 50, 230), "ＯＫ", "text")))
    found = Page("p.png", 400, 400, blocks=(
        _block(1, (2, 0, 100, 98), "あいえ"),  # matched, 1 edit of 3
        _block(2, (200, 0, 300, 100), "かきくけ"),  # matched, exact
        _block(3, (300, 300, 390, 390), "x"),  # nothing there
    ), processed=True)
    ev = PagesEvaluation()
    ev.add(truth, found)
    f = ev.figures()
    assert (f["truth_blocks"], f["found_blocks"], f["matched_blocks"]) == (3, 3, 2)
    assert f["recall"] == pytest.approx(2 / 3) and f["precision"] == pytest.approx(2 / 3)
    assert f["recall_by_kind"] == {"bubble": 1.0, "text": 0.0}
    assert f["cer"] == pytest.approx(1 / 7) and f["exact_match"] == 0.5
    # the missed "ＯＫ" counts 2 deletions (NFKC: "OK") over 9 reference characters
    assert f["end_to_end_cer"] == pytest.approx(3 / 9)
    # the user's edited text is what is scored
    edited = Page("p.png", 400, 400, blocks=(Block("b1", 1, "bubble", (0, 0, 100, 100), ocr_text="x", text="あいう"),))
    ev2 = PagesEvaluation()
    ev2.add(TruthPage("p.png", truth.blocks[:1]), edited)
    assert ev2.figures()["cer"] == 0.0


def test_truth_folder_errors_name_the_file(tmp_path):
    with pytest.raises(UserError, match="no truth files"):
        read_truth_folder(tmp_path)
    Image.new("RGB", (8, 8), "white").save(tmp_path / "a.png")
    (tmp_path / "a.json").write_text(json.dumps({"image": "a.png", "blocks": [{"box": [0, 0, 4, 4], "text": "x"}]}))
    (pages,) = read_truth_folder(tmp_path)
    assert pages == TruthPage("a.png", (TruthBlock((0.0, 0.0, 4.0, 4.0), "x", "text"),))
    (tmp_path / "b.json").write_text('{"image": "b.png", "blocks": [{"text": "x"}]}')
    with pytest.raises(UserError, match=r"b\.json: not a truth file"):
        read_truth_folder(tmp_path)
    (tmp_path / "b.json").write_text('{"image": "gone.png", "blocks": []}')
    with pytest.raises(UserError, match=r"b\.json: its image 'gone\.png' is not in"):
        read_truth_folder(tmp_path)
