"""Text layout inside a bubble: font size by search, line breaking, hyphenation, balanced lines,
vertical columns. Measures with Pillow (FreeType + raqm); draws nothing (app.render.draw does).

The usable area is a boolean shape (h, w) in the block's window (True = text may go there).

Horizontal setting: for a font size s the lines are stacked at a pitch of s * line_spacing,
centred on the shape's middle row; each line may use the part of the shape that every pixel row
of its band has (so lines get shorter towards the top and bottom of an ellipse). Words are put
on lines greedily; a word wider than its line is hyphenated at pyphen's points (for the target
language) or, as a last resort at the smallest sizes, cut between letters. Chinese / Japanese
characters break between any two characters, except before closing punctuation (kinsoku). With
the fewest lines that hold the text, the line width is then narrowed as far as the text still
fits in that many lines, which balances the line lengths.

Vertical setting (Japanese / Chinese): columns right to left at a pitch of s * line_spacing,
characters top to bottom (raqm's "ttb" direction with the font's vertical forms).

Font size: the largest integer size in [min_size, max_size] at which the text fits (binary
search); when even min_size does not fit, sizes below it down to FLOOR_SIZE are tried and the
layout says `fits=False`; when nothing fits, FLOOR_SIZE is used with letter breaks and
`overflow=True` (the renderer clips to the bubble, so nothing is drawn outside it).
"""
from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

import numpy as np
from PIL import ImageFont

FLOOR_SIZE = 6
VERTICAL_FEATURES = ("vert",)
# characters that may not start a line or column (kinsoku shori, the common subset)
NO_START = set("、。，．,.!?！？」』）)]｝〕〉》】ーっゃゅょぁぃぅぇぉッャュョァィゥェォ…‥・：；:;")
_CJK_BLOCKS = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")


@dataclass(frozen=True)
class Line:
    """One line (or column). Horizontal: `x` left edge of its advance, `y` baseline. Vertical:
    `x` centre of the column, `y` top of its first character. `length` is the advance."""

    text: str
    x: float
    y: float
    length: float


@dataclass(frozen=True)
class Layout:
    size: int
    vertical: bool
    lines: tuple[Line, ...]
    fits: bool  # the text fits at a size >= the style's min_size
    overflow: bool  # it did not fit at all (set at FLOOR_SIZE and clipped)
    font_path: str


@functools.lru_cache(maxsize=256)
def font_at(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size, layout_engine=ImageFont.Layout.RAQM)


def is_cjk_text(text: str) -> bool:
    """True when most letters are Chinese characters or kana (text to set vertically)."""
    letters = [c for c in text if not c.isspace() and unicodedata.category(c)[0] in "LN"]
    if not letters:
        return False
    cjk = sum(1 for c in letters if _CJK_BLOCKS.match(c))
    return cjk >= 0.5 * len(letters) and not any(_HANGUL.match(c) for c in letters)


def wants_vertical(text: str, direction: str, target_lang: str | None = None) -> bool:
    if direction == "vertical":
        return True
    if direction == "horizontal":
        return False
    if target_lang:
        return target_lang.split("-")[0].lower() in ("ja", "zh")
    return is_cjk_text(text)


# --------------------------------------------------------------------------- atoms and wrapping

@dataclass(frozen=True)
class _Atom:
    text: str
    space_before: bool
    word: bool  # a Latin-like word that may be hyphenated


def atoms(paragraph: str, vertical: bool) -> list[_Atom]:
    """Breakable units: words (with the space before them), single CJK characters."""
    out: list[_Atom] = []
    for i, word in enumerate(paragraph.split()):
        space = i > 0
        run = ""
        for ch in word:
            if vertical or _CJK_BLOCKS.match(ch):
                if run:
                    out.append(_Atom(run, space, True))
                    space = False
                    run = ""
                out.append(_Atom(ch, space, False))
                space = False
            else:
                run += ch
        if run:
            out.append(_Atom(run, space, True))
    return out


class _Measure:
    def __init__(self, font: ImageFont.FreeTypeFont, vertical: bool):
        self.font = font
        self.vertical = vertical
        self.cache: dict[str, float] = {}

    def __call__(self, text: str) -> float:
        hit = self.cache.get(text)
        if hit is None:
            if self.vertical:
                hit = self.font.getlength(text, direction="ttb", features=list(VERTICAL_FEATURES)) if text else 0.0
            else:
                hit = self.font.getlength(text) if text else 0.0
            self.cache[text] = hit
        return hit


@functools.lru_cache(maxsize=64)
def _hyphenator(lang: str):
    import pyphen

    code = pyphen.language_fallback(lang) or pyphen.language_fallback("en")
    return pyphen.Pyphen(lang=code)


def _split_word(word: str, room: float, measure: _Measure, lang: str | None, letters: bool):
    """(head to put on the line, e.g. "extra-", rest) or None when no head fits in `room`."""
    if lang:
        positions = _hyphenator(lang).positions(word)
        for p in reversed(positions):
            head = word[:p] + "-"
            if measure(head) <= room:
                return head, word[p:]
    if letters:
        for p in range(len(word) - 1, 0, -1):
            if measure(word[:p]) <= room:
                return word[:p], word[p:]
    return None


def wrap(paragraphs: list[list[_Atom]], widths: list[float], measure: _Measure, lang: str | None,
         letters: bool) -> list[str] | None:
    """Lines of text filling `widths` in order, or None when they do not hold the paragraphs."""
    lines: list[str] = []
    index = 0
    for para in paragraphs:
        queue = list(para)
        current = ""
        while queue or current:
            if index >= len(widths):
                return None
            room = widths[index]
            if not queue:
                lines.append(current)
                index += 1
                current = ""
                break
            atom = queue[0]
            candidate = (current + (" " if atom.space_before and current else "") + atom.text)
            if measure(candidate) <= room:
                current = candidate
                queue.pop(0)
                continue
            if current:  # the line is full: kinsoku, then the next line
                lines.append(current)
                index += 1
                current = ""
                continue
            split = _split_word(atom.text, room, measure, lang if atom.word else None, letters) \
                if len(atom.text) > 1 else None
            if split is None:
                return None
            head, rest = split
            lines.append(head)
            index += 1
            queue[0] = _Atom(rest, False, atom.word)
        if not para:
            if index >= len(widths):
                return None
            lines.append("")
            index += 1
    return _kinsoku(lines)


def _kinsoku(lines: list[str]) -> list[str]:
    """Move one character down where a line would start with closing punctuation."""
    out = list(lines)
    for i in range(1, len(out)):
        if out[i] and out[i][0] in NO_START and len(out[i - 1]) > 1 and not out[i - 1].endswith((" ", "-")) \
                and not out[i - 1][-1].isspace():
            prev = out[i - 1]
            if _CJK_BLOCKS.match(prev[-1]):
                out[i - 1], out[i] = prev[:-1], prev[-1] + out[i]
    return out


# --------------------------------------------------------------------------- the shape

class _Profile:
    """Per-row (or per-column, for vertical text) extents of the usable shape."""

    def __init__(self, shape: np.ndarray, vertical: bool):
        grid = shape.T if vertical else shape  # rows = the direction lines are stacked in
        any_ = grid.any(axis=1)
        n = grid.shape[1]
        first = np.where(any_, grid.argmax(axis=1), n)
        last = np.where(any_, n - grid[:, ::-1].argmax(axis=1), 0)
        self.first, self.last = first.astype(np.float64), last.astype(np.float64)
        rows = np.flatnonzero(any_)
        self.lo, self.hi = (int(rows[0]), int(rows[-1]) + 1) if rows.size else (0, 0)
        self.extent = grid.shape[0]

    def band(self, a: float, b: float) -> tuple[float, float]:
        """(start, end) of what every row in [a, b) has; (0, 0) when a row is empty or outside."""
        ia, ib = int(np.floor(a)), int(np.ceil(b))
        if ia < self.lo or ib > self.hi or ib <= ia:
            return 0.0, 0.0
        start, end = float(self.first[ia:ib].max()), float(self.last[ia:ib].min())
        return (start, end) if end > start else (0.0, 0.0)


def _bands(profile: _Profile, n: int, pitch: float, vertical: bool) -> list[tuple[float, float, float]]:
    """(band start, extent start, extent end) of n lines centred on the shape, in reading order
    (top to bottom; for columns right to left)."""
    middle = (profile.lo + profile.hi) / 2
    top = middle - n * pitch / 2
    out = []
    for i in range(n):
        a = top + i * pitch
        s, e = profile.band(a, a + pitch)
        out.append((a, s, e))
    return out[::-1] if vertical else out


# --------------------------------------------------------------------------- fitting

def _fit(paragraphs, profile: _Profile, font, size: int, spacing: float, vertical: bool, lang, letters):
    """(lines, bands) of the fewest lines holding the text at this size, balanced; or None."""
    measure = _Measure(font, vertical)
    pitch = size * spacing
    max_lines = int((profile.hi - profile.lo) / pitch) if pitch > 0 else 0
    for n in range(1, max_lines + 1):
        bands = _bands(profile, n, pitch, vertical)
        widths = [e - s for _a, s, e in bands]
        lines = wrap(paragraphs, widths, measure, lang, letters)
        if lines is None:
            continue
        lo_k, hi_k = 0.2, 1.0  # balance: the narrowest width that still holds n lines
        best = lines
        for _ in range(8):
            k = (lo_k + hi_k) / 2
            trial = wrap(paragraphs, [w * k for w in widths], measure, lang, letters)
            if trial is not None and len(trial) <= n:
                best, hi_k = trial, k
            else:
                lo_k = k
        return best, bands, measure
    return None


def layout_text(text: str, shape: np.ndarray, font_path: str, min_size: int, max_size: int,
                line_spacing: float = 1.15, align: str = "center", vertical: bool = False,
                lang: str | None = "en") -> Layout:
    """Lay `text` out inside `shape` ((h, w) bool): see the module doc."""
    paragraphs = [atoms(p, vertical) for p in text.split("\n")]
    while paragraphs and not paragraphs[-1]:
        paragraphs.pop()
    profile = _Profile(shape, vertical)

    def attempt(size: int, letters: bool):
        return _fit(paragraphs, profile, font_at(font_path, size), size, line_spacing, vertical, lang, letters)

    def search(lo: int, hi: int, letters: bool):
        """Largest size in [lo, hi] that fits (assuming fitting is monotonic), with its result."""
        found = None
        while lo <= hi:
            mid = (lo + hi) // 2
            result = attempt(mid, letters)
            if result is not None:
                found, lo = (mid, result), mid + 1
            else:
                hi = mid - 1
        return found

    fits, overflow = True, False  # overflow: see _place_overflow
    found = search(min_size, max_size, letters=False) if paragraphs else (max_size, ([], [], None))
    if found is None:
        fits = False
        found = search(FLOOR_SIZE, min_size - 1, letters=True) if min_size > FLOOR_SIZE else None
        if found is None:
            found = search(min_size, min_size, letters=True)
    if found is None:
        return _place_overflow(paragraphs, profile, font_path, FLOOR_SIZE, line_spacing, vertical, lang)
    size, (lines, bands, measure) = found
    placed = _place(lines, bands, measure, font_path, size, size * line_spacing, align, vertical)
    return Layout(size, vertical, tuple(placed), fits, overflow, font_path)


def _place(lines, bands, measure, font_path: str, size: int, pitch: float, align: str,
           vertical: bool) -> list[Line]:
    """Lines at their places: aligned within their band's extent (for columns: left = top)."""
    font = font_at(font_path, size)
    ascent, descent = font.getmetrics()
    out = []
    for text, (a, s, e) in zip(lines, bands):
        length = measure(text) if measure else 0.0
        if align == "left":
            start = s
        elif align == "right":
            start = e - length
        else:
            start = (s + e - length) / 2
        if vertical:
            out.append(Line(text, a + pitch / 2, start, length))
        else:
            baseline = a + (pitch - (ascent + descent)) / 2 + ascent
            out.append(Line(text, start, baseline, length))
    return out


def _place_overflow(paragraphs, profile, font_path, size, spacing, vertical, lang) -> Layout:
    """Nothing fits: as many lines as the shape has room for (at least one), cut between letters."""
    font = font_at(font_path, size)
    measure = _Measure(font, vertical)
    pitch = size * spacing
    n = max(1, int((profile.hi - profile.lo) / pitch))
    bands = _bands(profile, n, pitch, vertical)
    widths = [max(e - s, size) for _a, s, e in bands]
    widths_long = widths + [max(widths)] * 200
    lines = wrap(paragraphs, widths_long, measure, lang, letters=True) or []
    lines = lines[:n]
    placed = _place(lines, bands[:len(lines)], measure, font_path, size, pitch, "center", vertical)
    return Layout(size, vertical, tuple(placed), False, True, font_path)
