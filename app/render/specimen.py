"""Specimens: a text drawn alone as a clean crop, in the app's own faces (no Qt).

Adapting the OCR to a series (app.ocr.adapt) mixes such crops of the corrections' own texts
into its training, so that while the model learns the series' lettering it keeps reading plain
print (rehearsal: without it the model forgets part of what it read before). A specimen is laid
out and drawn by the lettering's own code (app.render.layout and draw: vertical columns with the
fonts' vertical forms, kinsoku, tate-chu-yoko), dark ink on light paper, with a margin like a
detector's crop. The shipped Noto CJK faces (Sans and Serif, Regular and Bold) are used in turn.

    specimens(["そうか…", "行くぞ！"], vertical=[True, True], seed=0) -> [(RGB crop, text), ...]
"""
from __future__ import annotations

import math
import random

import numpy as np
from PIL import Image

from app.fonts import font_file
from app.render.draw import render_rgba
from app.render.glyphs import FontChain, drawable
from app.render.layout import layout_text

FACES = ("cjk", "cjk-bold", "cjk-serif", "cjk-serif-bold")
PER_LINE = 12  # characters a line or column holds before the text wraps


def specimen(text: str, font_path: str, size: int, vertical: bool, paper: int = 255, ink: int = 0,
             pad: tuple[int, int, int, int] = (4, 4, 4, 4), per_line: int | None = None) -> Image.Image:
    """`text` set at `size` px in `font_path` (the app's CJK face for what it lacks), `pad` px
    (left, top, right, bottom) of paper round its ink; a line or column holds `per_line`
    characters exactly (a character is 1 em along it) or, None, about PER_LINE (room to spare)."""
    chars = max(1, len(text.replace("\n", "")))
    wrap = PER_LINE if per_line is None else max(1, per_line)
    lines = max(text.count("\n") + 1, math.ceil(chars / wrap))
    if per_line is None:
        along = int(min(chars, wrap) * size * 1.15 + 2 * size)
    else:
        along = int(min(chars, wrap) * size + size // 2 + 2)
    across = int(lines * size * 1.6 + 2 * size)
    w, h = (across, along) if vertical else (along, across)
    layout = layout_text(text, np.ones((h, w), bool), font_path, size, size, vertical=vertical, lang=None)
    alpha = render_rgba(layout, (w, h), "#000000")[..., 3].astype(np.float32) / 255.0
    rows, cols = np.nonzero(alpha > 0)
    if not len(rows):
        y0 = x0 = 0
        y1, x1 = size, size
    else:
        y0, y1, x0, x1 = rows.min(), rows.max() + 1, cols.min(), cols.max() + 1
    left, top, right, bottom = pad
    out = np.full((y1 - y0 + top + bottom, x1 - x0 + left + right), float(paper), np.float32)
    a = alpha[y0:y1, x0:x1]
    out[top:top + a.shape[0], left:left + a.shape[1]] = paper * (1 - a) + ink * a
    return Image.fromarray(out.clip(0, 255).astype(np.uint8), "L").convert("RGB")


def specimens(texts: list[str], vertical: list[bool] | None = None, seed: int = 0,
              per_line: list[int] | None = None) -> list[tuple[Image.Image, str]]:
    """Each text drawn once, the faces of FACES in turn (from a seeded start), each at a size of
    20-33 px, paper 215-255, ink 0-40 and a margin of 3 px to half the size, all drawn from
    `seed`: the same texts and seed give the same crops. `vertical[i]`: text i in a column
    (default: as most Japanese lettering, vertical); `per_line[i]`: the characters a column (or
    line) of text i holds (default: about PER_LINE, see specimen). A text holding a character that no face of
    the app or the machine has is left out: it would be drawn as an empty box under a text that
    says otherwise, and a model trained on it would learn to read boxes as that character."""
    rng = random.Random(seed)
    start = rng.randrange(len(FACES))
    out = []
    for i, text in enumerate(texts):
        size = rng.randint(20, 33)
        pad = tuple(rng.randint(3, 3 + size // 2) for _ in range(4))
        paper, ink = rng.randint(215, 255), rng.randint(0, 40)
        face = str(font_file(FACES[(start + i) % len(FACES)]))
        upright = True if vertical is None else vertical[i]
        if not drawable(text, FontChain.for_font(face)):
            continue
        wrap = None if per_line is None else per_line[i]
        out.append((specimen(text, face, size, upright, paper, ink, pad, wrap), text))
    return out
