"""The measured figures of the translated-page stage, asserted with margins (synthetic pages with
their clean truth; bench/render_quality.py prints the same figures on more pages)."""
from __future__ import annotations

import pytest

from app.render.inpaint import OpenCVInpainter
from tools.render_metrics import (
    measure_pages,
    tone_figures,
)


@pytest.fixture(scope="module")
def figures():
    engine = OpenCVInpainter()
    bubbles, _free, typeset = measure_pages(engine, 4242, 6)
    return bubbles, typeset, tone_figures(range(8), engine)


def test_cleaning_inside_bubbles_against_the_clean_truth(figures):
    bubbles, _typeset, _tone = figures
    assert bubbles.pixels > 30000
    assert bubbles.mae < 2.0, bubbles.mae  # measured 0.60 on these pages, 0.88 on 16
    assert bubbles.off_share < 0.005, bubbles.off_share  # measured 0.002 %, 0.041 % on 16


def test_no_pixel_changes_outside_the_blocks(figures):
    assert figures[0].changed_outside == 0


def test_screentone_is_worse_with_opencv(figures):
    bubbles, _typeset, (auto, true) = figures
    assert auto.pixels > 2000 and true.pixels > 2000
    assert auto.mae > 10 * bubbles.mae, "text on tone is where LaMa is needed"
    assert auto.mae < 130 and true.mae < 130  # measured 109.5 / 110.0 on these 8 cases


def test_typesetting_fits_without_spill(figures):
    _bubbles, typeset, _tone = figures
    assert typeset.blocks >= 50
    assert typeset.fit_share >= 0.85, typeset.fit_share  # measured 94.7 %
    assert typeset.spill == 0
    assert typeset.overflow == 0
    assert typeset.mean_size >= 20, typeset.mean_size  # measured 24.1 px (style 12..40 px)
