"""Text outside bubbles: a caption (free text, narration) or a sound effect, from the page.

A text detection that is in no bubble (none detected around it, none found around it on the page:
app.detect.bubbles) is free text. Which kind it is comes from its ink (app.detect.ink.text_ink):

- a sound effect ("sfx") is drawn lettering: its glyphs are much larger than the page's dialogue
  (SFX_GLYPH x the median glyph size of the page's text in bubbles, when the page has some), or,
  with no dialogue to compare with, larger than SFX_PAGE of the page's shorter side; or its
  strokes are heavy for the glyph size (stroke width at least SFX_STROKE x the glyph size:
  brush lettering, not a typeset font) on glyphs no smaller than the dialogue's (dots and
  dashes, "......", are all stroke);
- anything else is a caption ("caption"): free text set like dialogue (narration, asides, text
  between panels or on the artwork).

A box holding too little ink to tell is a caption. No Qt; numpy + OpenCV.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.detect.ink import MIN_INK_PX, glyph_size, text_ink

Box = tuple[float, float, float, float]

SFX_GLYPH = 2.2  # x the page's dialogue glyph size
SFX_PAGE = 0.05  # x the page's shorter side, when the page has no dialogue to compare with
SFX_STROKE = 0.22  # stroke width over glyph size: brush lettering
NORMAL_PAGE = 0.02  # x the page's shorter side: a dialogue-sized glyph, with no dialogue to compare with
MIN_GLYPH_PX = 4
PAD = 0.06  # x the box's shorter side (at least 2 px): the box is measured this much larger


def ink_measure(gray: np.ndarray, box: Box) -> tuple[float, float] | None:
    """(glyph size, stroke width) in pixels of the text ink in `box`, None when it holds too
    little ink to tell."""
    import cv2

    x0, y0, x1, y1 = (float(v) for v in box)
    m = max(2.0, PAD * min(x1 - x0, y1 - y0))  # a tight box's glyphs touch its edge: not artwork
    h, w = gray.shape[:2]
    ink = text_ink(gray, (max(0.0, x0 - m), max(0.0, y0 - m), min(float(w), x1 + m), min(float(h), y1 + m)))
    if ink is None or int(ink.sum()) < MIN_INK_PX:
        return None
    size = glyph_size(ink)
    if size < MIN_GLYPH_PX:
        return None
    # stroke width: a stroke of width t and length L has area t * L and outline 2 * L
    contours, _ = cv2.findContours(ink, cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE)
    outline = sum(cv2.arcLength(c, True) for c in contours)
    stroke = 2.0 * float(ink.sum()) / outline if outline > 0 else 0.0
    return size, stroke


def dialogue_glyph(gray: np.ndarray, boxes: Sequence[Box]) -> float | None:
    """The median glyph size of the text boxes in bubbles `boxes` (None when none can tell)."""
    sizes = [m[0] for m in (ink_measure(gray, b) for b in boxes) if m is not None]
    return float(np.median(sizes)) if sizes else None


def outside_kind(gray: np.ndarray, box: Box, dialogue: float | None = None) -> str:
    """"sfx" or "caption" for a text box in no bubble (see the module doc); `dialogue`: the
    page's dialogue glyph size (`dialogue_glyph`), None when the page has no text in bubbles."""
    found = ink_measure(gray, box)
    if found is None:
        return "caption"
    size, stroke = found
    if dialogue is not None and dialogue > 0:
        large, normal = size >= SFX_GLYPH * dialogue, size >= dialogue
    else:
        side = min(gray.shape[:2])
        large, normal = size >= SFX_PAGE * side, size >= NORMAL_PAGE * side
    return "sfx" if large or (normal and stroke >= SFX_STROKE * size) else "caption"
