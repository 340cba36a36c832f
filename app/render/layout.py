"""Text layout inside a bubble: font size by search, line breaking, hyphenation, balanced lines,
vertical columns. Measures with Pillow (FreeType + raqm); draws nothing (app.render.draw does).

The usable area is a boolean shape (h, w) in the block's window (True = text may go there).

Horizontal setting: for a font size s the lines are stacked at a pitch of s * line_spacing,
centred on the shape's middle row; each line may use the part of the shape that every pixel row
of its band has (so lines get shorter towards the top and bottom of an ellipse). Words are put
on lines greedily; a word wider than its line is hyphenated at pyphen's points (for the target
language) or, as a last resort at the smallest sizes, cut between letters. Chinese / Japanese
text breaks between any two characters (in mostly Latin text, a run of kanji such as a name
is one word), except where kinsoku forbids it: a character
that may not start a line (、。」）ー, small kana...) stays with the one before it, one that may
not end a line (「（『...) with the one after it, so 「。」」 moves as one unit. Those units are
measured whole, so a line never runs past its width to obey kinsoku. With
the fewest lines that hold the text, the line width is then narrowed as far as the text still
fits in that many lines, which balances the line lengths.

Vertical setting (Japanese / Chinese): columns right to left at a pitch of s * line_spacing,
characters top to bottom (raqm's "ttb" direction with the font's vertical forms); 1-3 digit
numbers and !? / !! are set tate-chu-yoko, upright across one character cell.

Glyphs: each character is drawn with the first face of the block's FontChain that has it
(app.render.glyphs), and lines are measured piece by piece with the same faces.

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

from app.render.glyphs import FontChain, pieces, tcy_groups

FLOOR_SIZE = 6
VERTICAL_FEATURES = ("vert",)
# characters that may not start a line or column (kinsoku shori, the common subset)
NO_START = set("、。，．,.!?！？」』）)]｝〕〉》】〙〗〟’”ーっゃゅょぁぃぅぇぉゎゕゖッャュョァィゥェォヮヵヶㇰㇱㇲㇳㇴㇵㇶㇷㇸㇹㇺㇻㇼㇽㇾㇿ"
                "…‥・：；:;々〻ゝゞヽヾ〜～")
# characters that may not end a line or column
NO_END = set("「『（([｛〔〈《【〘〖〝‘“")
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
    font_path: str  # the block's own face (fonts.primary)
    fonts: FontChain | None = None  # every face the lines are drawn with, in fallback order

    @property
    def chain(self) -> FontChain:
        return self.fonts or FontChain((self.font_path,))


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


def has_hangul(text: str) -> bool:
    return bool(_HANGUL.search(text))


CJK_TARGETS = ("ja", "zh", "ko")


def wants_cjk_face(text: str, target_lang: str | None = None) -> bool:
    """The default face for this text is Noto Sans CJK rather than Comic Neue: a Japanese,
    Chinese or Korean target, or text that is mostly CJK or has any Hangul (Comic Neue has
    neither)."""
    if target_lang and target_lang.split("-")[0].split("_")[0].lower() in CJK_TARGETS:
        return True
    return is_cjk_text(text) or has_hangul(text)


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


def _raw_atoms(paragraph: str, vertical: bool) -> list[_Atom]:
    out: list[_Atom] = []
    cjk = vertical or is_cjk_text(paragraph)  # in mostly Latin text a kanji name stays one word
    for i, word in enumerate(paragraph.split()):
        space = i > 0
        run = ""
        tcy = dict(tcy_groups(word)) if vertical else {}
        j = 0
        while j < len(word):
            ch = word[j]
            if vertical or (cjk and _CJK_BLOCKS.match(ch)):
                if run:
                    out.append(_Atom(run, space, True))
                    space = False
                    run = ""
                end = tcy.get(j, j + 1)  # a tate-chu-yoko run is one unit
                out.append(_Atom(word[j:end], space, False))
                space = False
                j = end
                continue
            run += ch
            j += 1
        if run:
            out.append(_Atom(run, space, True))
    return out


def atoms(paragraph: str, vertical: bool) -> list[_Atom]:
    """Breakable units: words (with the space before them), single CJK characters (a
    tate-chu-yoko run in vertical text), joined where kinsoku forbids a break between them."""
    out: list[_Atom] = []
    for atom in _raw_atoms(paragraph, vertical):
        if out and not atom.space_before and (atom.text[0] in NO_START or out[-1].text[-1] in NO_END):
            prev = out[-1]
            out[-1] = _Atom(prev.text + atom.text, prev.space_before, prev.word and atom.word)
        else:
            out.append(atom)
    return out


class _Measure:
    """Advance of a line's text at one size, piece by piece with the chain's faces (a
    tate-chu-yoko piece advances one em)."""

    def __init__(self, chain: FontChain, size: int, vertical: bool):
        self.chain = chain
        self.size = size
        self.vertical = vertical
        self.cache: dict[str, float] = {}

    def __call__(self, text: str) -> float:
        hit = self.cache.get(text)
        if hit is None:
            hit = 0.0
            for piece in pieces(text, self.chain, self.vertical) if text else ():
                font = font_at(piece.font, self.size)
                if piece.tcy:
                    hit += self.size
                elif self.vertical:
                    hit += font.getlength(piece.text, direction="ttb", features=list(VERTICAL_FEATURES))
                else:
                    hit += font.getlength(piece.text)
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
            if current:  # the line is full: the next line
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
    return lines


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

def _fit(paragraphs, profile: _Profile, chain: FontChain, size: int, spacing: float, vertical: bool, lang, letters):
    """(lines, bands) of the fewest lines holding the text at this size, balanced; or None."""
    measure = _Measure(chain, size, vertical)
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


def layout_text(text: str, shape: np.ndarray, font_path: str | FontChain, min_size: int, max_size: int,
                line_spacing: float = 1.15, align: str = "center", vertical: bool = False,
                lang: str | None = "en") -> Layout:
    """Lay `text` out inside `shape` ((h, w) bool): see the module doc. `font_path`: the
    block's face (then the app's Noto CJK for what it lacks) or a whole FontChain."""
    chain = font_path if isinstance(font_path, FontChain) else FontChain.for_font(font_path)
    font_path = chain.primary
    paragraphs = [atoms(p, vertical) for p in text.split("\n")]
    while paragraphs and not paragraphs[-1]:
        paragraphs.pop()
    profile = _Profile(shape, vertical)

    def attempt(size: int, letters: bool):
        return _fit(paragraphs, profile, chain, size, line_spacing, vertical, lang, letters)

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
        return _place_overflow(paragraphs, profile, chain, FLOOR_SIZE, line_spacing, vertical, lang)
    size, (lines, bands, measure) = found
    placed = _place(lines, bands, measure, chain, size, size * line_spacing, align, vertical)
    return Layout(size, vertical, tuple(placed), fits, overflow, font_path, chain)


def _place(lines, bands, measure, chain: FontChain, size: int, pitch: float, align: str,
           vertical: bool) -> list[Line]:
    """Lines at their places: aligned within their band's extent (for columns: left = top)."""
    font = font_at(chain.primary, size)
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


def _place_overflow(paragraphs, profile, chain: FontChain, size, spacing, vertical, lang) -> Layout:
    """Nothing fits: as many lines as the shape has room for (at least one), cut between letters."""
    measure = _Measure(chain, size, vertical)
    pitch = size * spacing
    n = max(1, int((profile.hi - profile.lo) / pitch))
    bands = _bands(profile, n, pitch, vertical)
    widths = [max(e - s, size) for _a, s, e in bands]
    widths_long = widths + [max(widths)] * 200
    lines = wrap(paragraphs, widths_long, measure, lang, letters=True) or []
    lines = lines[:n]
    placed = _place(lines, bands[:len(lines)], measure, chain, size, pitch, "center", vertical)
    return Layout(size, vertical, tuple(placed), False, True, chain.primary, chain)
