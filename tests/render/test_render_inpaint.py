"""Cleaning: OpenCV and uniform fill against the clean truth; only masked pixels change."""
from __future__ import annotations

import numpy as np

from app.render.inpaint import OpenCVInpainter, clean_page, load_inpainter, uniform_fill
from app.render.masks import BlockMask, auto_mask
from tools.render_metrics import clean_figures, render_case


def test_opencv_cleaning_matches_the_clean_truth_inside_bubbles(synth_case):
    result, _blocks = render_case(synth_case, OpenCVInpainter(), text="none")
    fig = clean_figures(synth_case, result.cleaned, methods=result.methods)
    assert fig.pixels > 5000
    assert fig.mae < 3.0, fig.mae  # measured 0.8 over 8 pages (bench/render_quality.py)
    assert fig.off_share < 0.01, fig.off_share
    assert fig.changed_outside == 0
    assert set(result.methods.values()) <= {"fill", "opencv", "none"}
    assert "fill" in result.methods.values(), "plain bubbles are filled with their colour"


def test_only_masked_pixels_change(synth_case):
    gray = synth_case.page[..., 0]
    masks = [auto_mask(gray, b["box"], kind=b["kind"]) for b in synth_case.truth["blocks"]]
    out, methods = clean_page(synth_case.page, masks, OpenCVInpainter())
    union = np.zeros(gray.shape, bool)
    for m in masks:
        x0, y0, x1, y1 = m.page_box()
        union[y0:y1, x0:x1] |= m.mask
    changed = (out != synth_case.page).any(axis=2)
    assert changed.any() and not (changed & ~union).any()
    assert len(methods) == len(masks)


def test_uniform_fill_only_on_a_flat_surround():
    flat = np.full((60, 60, 3), 250, np.uint8)
    flat[25:35, 25:35] = 0
    mask = np.zeros((60, 60), bool)
    mask[24:36, 24:36] = True
    bm = BlockMask(0, 0, mask, np.ones((60, 60), bool))
    assert uniform_fill(flat, bm).tolist() == [250, 250, 250]
    tone = flat.copy()
    tone[::2, ::2] = 0  # dots around the text
    assert uniform_fill(tone, bm) is None


def test_auto_engine_is_opencv_without_the_lama_model(tmp_path, monkeypatch):
    monkeypatch.setenv("HAYAI_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    assert load_inpainter("auto").name == "opencv"
    assert load_inpainter("opencv").name == "opencv"
