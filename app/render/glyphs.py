"""Which face draws each character (per-glyph font fallback), and the pieces a line is drawn in.

A block is lettered with a `FontChain`: its own face first, then the app's Noto Sans CJK (which
holds Japanese, Chinese, Korean and Latin), then, for a character neither has, the first
installed font that has it. A line is cut into `Piece`s, each drawn with one face, so "EN: た！？"
draws the Latin in Comic Neue and the kana in Noto, and no character turns into the .notdef box
when any face on the machine has it. Coverage is read from each face's cmap with fontTools.

In vertical text, 1-3 digit numbers and the pairs !? !! ?! ?? are set tate-chu-yoko: upright
side by side, in one character cell of the column (`Piece.tcy`).

Measuring (app.render.layout) and drawing (app.render.draw) both go through `pieces`, so the
width a line is measured at is the width it is drawn at.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from app.fonts import font_file

# characters that never need a glyph of their own: spaces and joiners go with their neighbours
_SOFT = {"\u200b", "\u200c", "\u200d", "\ufe0e", "\ufe0f"}
# tate-chu-yoko: a 1-3 digit number (not part of a longer one), or two of ! ?
TCY = re.compile(r"(?<![0-9０-９])[0-9０-９]{1,3}(?![0-9０-９])|[!?！？]{2}(?![!?！？])")
_WIDE_TO_NARROW = str.maketrans("０１２３４５６７８９！？", "0123456789!?")


@functools.lru_cache(maxsize=1024)
def charset(path: str, index: int = 0) -> frozenset[int]:
    """The code points a font file maps to a glyph (its best cmap; face `index` of a collection).
    Empty when fontTools cannot read the file. Kept for every font looked at (a machine's whole
    font folder, when a character is in none of the app's faces, is read once)."""
    from fontTools.ttLib import TTFont

    try:
        font = TTFont(path, fontNumber=index, lazy=True) if path.lower().endswith((".ttc", ".otc")) \
            else TTFont(path, lazy=True)
        cmap = font["cmap"].getBestCmap() or {}
    except Exception:  # noqa: BLE001 - a damaged or unusual file covers nothing
        return frozenset()
    return frozenset(cmap)


@functools.lru_cache(maxsize=64)
def postscript_name(path: str) -> str:
    """The font's PostScript name (name ID 6), what a PSD type layer names it by; the file's
    stem when the font has none."""
    from fontTools.ttLib import TTFont

    try:
        font = TTFont(path, fontNumber=0, lazy=True) if path.lower().endswith((".ttc", ".otc")) \
            else TTFont(path, lazy=True)
        name = font["name"].getDebugName(6)
    except Exception:  # noqa: BLE001
        name = None
    return name or Path(path).stem


def covers(path: str, ch: str) -> bool:
    return ord(ch) in charset(path)


@functools.lru_cache(maxsize=4096)
def installed_face_for(ch: str) -> str | None:
    """The first installed font (in the scan's order) that has `ch`; None when none has it."""
    from app.render.fontfind import installed_files

    for path in installed_files():
        if covers(str(path), ch):
            return str(path)
    return None


def _needs_glyph(ch: str) -> bool:
    return not (ch.isspace() or ch in _SOFT or unicodedata.category(ch) in ("Mn", "Me", "Cf"))


@dataclass(frozen=True)
class FontChain:
    """The faces a block is lettered with, in the order they are tried. `paths[0]` is the
    block's own face (what the style names)."""

    paths: tuple[str, ...]

    @property
    def primary(self) -> str:
        return self.paths[0]

    @staticmethod
    def for_font(path: str | Path) -> FontChain:
        """`path`, then the app's Noto Sans CJK (when it is not `path` already)."""
        path = str(path)
        noto = str(font_file("cjk"))
        return FontChain((path,) if path == noto else (path, noto))

    def face_for(self, ch: str) -> str:
        """The face that draws `ch`: the first of the chain that has it, else an installed font
        that has it, else the block's own face (which then draws its .notdef)."""
        for path in self.paths:
            if covers(path, ch):
                return path
        return installed_face_for(ch) or self.primary


def drawable(text: str, chain: FontChain) -> bool:
    """Every character of `text` that needs a glyph has one in a face the chain or the machine
    offers (none would be drawn as the .notdef box)."""
    return all(covers(chain.face_for(ch), ch) for ch in text if _needs_glyph(ch))


@dataclass(frozen=True)
class Piece:
    """A run of a line drawn with one face. `tcy`: set upright across the column (vertical
    text only), in one character cell."""

    text: str
    font: str
    tcy: bool = False


def _runs(text: str, chain: FontChain) -> list[Piece]:
    out: list[Piece] = []
    for ch in text:
        if not _needs_glyph(ch) and out:
            face = out[-1].font if covers(out[-1].font, ch) or ch in _SOFT else chain.face_for(ch)
        else:
            face = chain.face_for(ch)
        if out and out[-1].font == face and not out[-1].tcy:
            out[-1] = Piece(out[-1].text + ch, face)
        else:
            out.append(Piece(ch, face))
    return out


@functools.lru_cache(maxsize=8192)
def pieces(text: str, chain: FontChain, vertical: bool) -> tuple[Piece, ...]:
    """The pieces of one line (or column), in drawing order."""
    if not vertical:
        return tuple(_runs(text, chain))
    out: list[Piece] = []
    at = 0
    for m in TCY.finditer(text):
        out += _runs(text[at:m.start()], chain)
        narrow = m.group().translate(_WIDE_TO_NARROW)
        out.append(Piece(narrow, chain.face_for(narrow[0]), tcy=True))
        at = m.end()
    out += _runs(text[at:], chain)
    return tuple(out)


def tcy_groups(text: str) -> list[tuple[int, int]]:
    """(start, end) of the tate-chu-yoko runs of a column's text."""
    return [(m.start(), m.end()) for m in TCY.finditer(text)]
