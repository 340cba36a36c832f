"""CJK fonts for the synthetic pages: the app's shipped Noto CJK faces, loaded at a size.

The faces are the subsets in `app/resources/fonts/` (`app.fonts`), so pages come out the same on
every machine, whatever fonts it has installed. A character in the subset renders exactly as
with the full Noto CJK collection (face 0, JP) the demo models were trained on.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from PIL import ImageFont

from app.fonts import font_file

# Face names (as recorded in the truth files) and their shipped files, in a fixed order so that a
# seed picks the same face everywhere.
FONT_STEMS = (
    "NotoSansCJK-Regular",
    "NotoSansCJK-Bold",
    "NotoSerifCJK-Regular",
    "NotoSerifCJK-Bold",
)
_ROLES = {"NotoSansCJK-Regular": "cjk", "NotoSansCJK-Bold": "cjk-bold",
          "NotoSerifCJK-Regular": "cjk-serif", "NotoSerifCJK-Bold": "cjk-serif-bold"}

# In Noto CJK the ideographic em box spans 0.88 em above the baseline to 0.12 em below.
EM_ASCENT = 0.88


@dataclass(frozen=True)
class FontFace:
    name: str  # e.g. "NotoSansCJK-Regular"
    path: Path
    index: int = 0


@functools.lru_cache(maxsize=1)
def find_faces() -> tuple[FontFace, ...]:
    """The shipped Noto CJK faces, in FONT_STEMS order. FileNotFoundError names a missing file."""
    return tuple(FontFace(stem, font_file(_ROLES[stem])) for stem in FONT_STEMS)


@functools.lru_cache(maxsize=256)
def load_font(face: FontFace, size: int) -> ImageFont.FreeTypeFont:
    """The face at `size` pixels per em (cached)."""
    return ImageFont.truetype(str(face.path), size=size, index=face.index)
