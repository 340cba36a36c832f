"""Consistent sizes: a page's bubbles at one size (or a few), the largest that most of them
take; blocks below their minimum named by number in the export report and on stderr."""
from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image

from app.render.inpaint import OpenCVInpainter
from app.render.page import MOST, PageRenderer, RenderBlock
from app.render.style import TextStyle

TEXT = "Where are you going? Wait for me, I am coming too!"
WIDTHS = (150, 190, 230, 270, 310, 350)


def _blocks(mode: str, extra=()):
    out = []
    for i, w in enumerate(WIDTHS):
        out.append(RenderBlock(f"b{i}", i + 1, "other", (20, 20 + i * 170, 20 + w, 20 + i * 170 + 150), None, TEXT,
                               False, TextStyle(min_size=10, max_size=60), page_sizes=mode))
    return out + list(extra)


@pytest.fixture(scope="module")
def renderer():
    return PageRenderer(np.full((1100, 420, 3), 255, np.uint8), OpenCVInpainter())


def _sizes(result):
    return {b.id: layer.layout.size for b, layer in result.layers}


def test_each_bubble_gets_its_own_largest_size(renderer):
    sizes = _sizes(renderer.render(_blocks("each")))
    assert len(set(sizes.values())) >= 4, sizes  # the widths differ, so do the sizes


def test_one_size_the_largest_most_bubbles_take(renderer):
    natural = _sizes(renderer.render(_blocks("each")))
    sizes = _sizes(renderer.render(_blocks("one")))
    ranked = sorted(natural.values(), reverse=True)
    target = ranked[math.ceil(MOST * len(ranked)) - 1]
    assert sum(1 for s in sizes.values() if s == target) >= MOST * len(sizes)
    for bid, size in sizes.items():  # the others keep their own (smaller) size
        assert size == min(target, natural[bid]), (bid, size, natural[bid], target)


def test_few_sizes_at_most_three(renderer):
    natural = _sizes(renderer.render(_blocks("each")))
    sizes = _sizes(renderer.render(_blocks("few")))
    assert len(set(sizes.values())) <= 3 < len(set(natural.values()))
    assert all(sizes[b] <= natural[b] for b in sizes)


def test_blocks_below_the_minimum_are_named(renderer):
    tiny = RenderBlock("t", 7, "other", (380, 20, 410, 40), None, TEXT, False, TextStyle(min_size=10, max_size=60),
                       page_sizes="one")
    result = renderer.render(_blocks("one", [tiny]))
    assert [b.order for b in result.below_min()] == [7]
    assert 7 not in {b.order for b, layer in result.layers if layer.layout.size == max(_sizes(result).values())}


def test_export_report_and_cli_name_the_blocks_below_minimum(tmp_path, capsys, monkeypatch):
    from app.cli import main
    from app.core.document.types import Block, Page, Project
    from app.core.exports.translated_pages import export_translated
    from app.core.project.files import load_project, save_project

    monkeypatch.setenv("HAYAI_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    folder = tmp_path / "vol"
    folder.mkdir()
    Image.new("RGB", (420, 300), "white").save(folder / "001.png")
    blocks = (Block("a", 1, "other", (10, 10, 300, 140), translation=TEXT),
              Block("b", 2, "other", (10, 200, 30, 215), translation=TEXT),
              Block("c", 3, "other", (330, 200, 350, 215), translation=TEXT))
    project = Project(source=str(folder), pages=[Page("001.png", 420, 300, blocks, processed=True, sizes="one")],
                      sizes="few")
    saved = save_project(project)
    again = load_project(saved)
    assert again.sizes == "few" and again.pages[0].sizes == "one"
    report = export_translated(again, "png", tmp_path / "out", OpenCVInpainter())
    assert report.below_min_blocks == [("001.png", 2), ("001.png", 3)]
    assert report.below_min_text() == "001.png: 2, 3"
    assert main(["render", str(saved), "--out", str(tmp_path / "out2"), "--inpaint", "opencv", "--sizes", "one"]) == 0
    assert "001.png: 2, 3" in capsys.readouterr().err
