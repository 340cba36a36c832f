"""Text crops in a given face and look: what a series' lettering looks like to the recognizer.

    styled_crops(face, count, seed, invert=False, min_len=1, max_len=8) -> [(RGB crop, text)]

Used to measure and test adapting the recognizer (app.ocr.adapt) on a face it never saw in
training: a font file the demo models were not trained with, or the training faces drawn white
on black (as in dark panels). A text holding a character the face has no glyph for is not drawn
(another is drawn instead): such a glyph comes out as the face's empty box, which no reader can
read as the text says (Droid Sans Fallback, for one, has no digits, Latin letters or "…").
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from app.render.glyphs import charset
from tools.synth.fonts import FontFace
from tools.synth.text import TextStyle, random_text, render


def face_from_file(path) -> FontFace:
    return FontFace(Path(path).stem, Path(path))


def covered(face: FontFace) -> frozenset[int]:
    """The code points `face` has a glyph for (its best cmap, app.render.glyphs.charset)."""
    return charset(str(face.path), face.index)


def styled_crops(face: FontFace, count: int, seed: int, invert: bool = False, min_len: int = 1,
                 max_len: int = 8, latin: bool = False) -> list[tuple[Image.Image, str]]:
    rng = np.random.default_rng(seed)
    out = []
    passed = 0  # texts in a row the face could not draw
    while len(out) < count:
        text = random_text(rng, min_len, max_len, latin=latin)
        if any(ord(ch) not in covered(face) for ch in text if not ch.isspace()):
            passed += 1  # a glyph the face lacks would be drawn as an empty box
            if passed > 100_000:
                raise ValueError(f"{face.path}: the face has glyphs for almost none of the texts drawn")
            continue
        passed = 0
        vertical = bool(rng.random() < 0.6)
        style = TextStyle(face, int(rng.integers(20, 34)))
        mask = render([text], style, vertical)
        if mask.getbbox() is None:  # the face has none of these glyphs
            continue
        pad = [int(v) for v in rng.integers(3, 3 + style.size // 2, size=4)]
        w, h = mask.width + pad[0] + pad[2], mask.height + pad[1] + pad[3]
        paper, ink = float(rng.uniform(215, 255)), float(rng.uniform(0, 40))
        if invert:
            paper, ink = 255 - paper, 255 - ink
        arr = np.full((h, w), paper, np.float32)
        m = np.asarray(mask, np.float32) / 255.0
        region = arr[pad[1]:pad[1] + mask.height, pad[0]:pad[0] + mask.width]
        arr[pad[1]:pad[1] + mask.height, pad[0]:pad[0] + mask.width] = region * (1 - m) + ink * m
        out.append((Image.fromarray(arr.clip(0, 255).astype(np.uint8), "L").convert("RGB"), text))
    return out
