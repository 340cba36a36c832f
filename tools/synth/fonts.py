"""CJK fonts for the synthetic pages: find the Noto CJK collections and load them at a size.

The Noto CJK `.ttc` collections hold several faces; index 0 is the Japanese one (JP).
Fonts are found with `fc-list` (falling back to the usual Debian paths) and cached per size.
"""
from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from PIL import ImageFont

# File stems we use, in a fixed order so that a seed picks the same face everywhere.
FONT_STEMS = (
    "NotoSansCJK-Regular",
    "NotoSansCJK-Bold",
    "NotoSerifCJK-Regular",
    "NotoSerifCJK-Bold",
)
_FALLBACK_DIRS = ("/usr/share/fonts/opentype/noto", "/usr/share/fonts/noto-cjk", "/usr/share/fonts/truetype/noto")

# In Noto CJK the ideographic em box spans 0.88 em above the baseline to 0.12 em below.
EM_ASCENT = 0.88


@dataclass(frozen=True)
class FontFace:
    name: str  # file stem, e.g. "NotoSansCJK-Regular"
    path: Path
    index: int = 0  # face index inside the .ttc (0 = JP)


def _fc_list_paths() -> list[Path]:
    if shutil.which("fc-list") is None:
        return []
    try:
        out = subprocess.run(["fc-list", "--format", "%{file}\n"], capture_output=True, text=True,
                             timeout=20, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [Path(line) for line in out.splitlines() if line.strip()]


@functools.lru_cache(maxsize=1)
def find_faces() -> tuple[FontFace, ...]:
    """The available Noto CJK faces, in FONT_STEMS order.

    Raises FileNotFoundError naming what to install when none is found.
    """
    candidates = {p.stem: p for p in _fc_list_paths() if p.suffix.lower() in (".ttc", ".otf", ".ttf")}
    for folder in _FALLBACK_DIRS:
        for p in sorted(Path(folder).glob("*.tt[cf]")) if Path(folder).is_dir() else ():
            candidates.setdefault(p.stem, p)
    faces = tuple(FontFace(stem, candidates[stem]) for stem in FONT_STEMS if stem in candidates)
    if not faces:
        raise FileNotFoundError(
            "No Noto CJK font found (looked for NotoSansCJK-Regular.ttc and friends with fc-list and in "
            f"{', '.join(_FALLBACK_DIRS)}). Install the fonts-noto-cjk package.")
    return faces


@functools.lru_cache(maxsize=256)
def load_font(face: FontFace, size: int) -> ImageFont.FreeTypeFont:
    """The face at `size` pixels per em (cached)."""
    return ImageFont.truetype(str(face.path), size=size, index=face.index)
