"""A block's text as mokuro lines: the lines (columns of vertical text right to left, rows of
horizontal text top to bottom) found in the block's ink when it shows them (app.detect.lines),
else set in the box at the largest glyph size that fits; the text shared out over them in
proportion to their lengths, so that a reader's selectable text lies over the glyphs. (The way
back, mokuro's lines joined into a block's text, is app.core.sources.mokuro_volume.join_lines.)"""
from __future__ import annotations

from dataclasses import dataclass

from app.core.document.types import Box
from app.core.exports.reader_page import char_advance as _advance


def _weight(text: str) -> float:
    return sum(_advance(c) for c in text)


def _shares(total: int, weights: list[float], minimum: int = 1) -> list[int]:
    """`total` split in proportion to `weights`, each at least `minimum` (largest remainders)."""
    n = len(weights)
    if n == 0:
        return []
    base = [minimum] * n
    left = total - minimum * n
    if left <= 0:
        return base
    w = sum(weights) or float(n)
    exact = [left * (x if sum(weights) else 1.0) / w for x in weights]
    floors = [int(e) for e in exact]
    rest = left - sum(floors)
    for i in sorted(range(n), key=lambda i: exact[i] - floors[i], reverse=True)[:rest]:
        floors[i] += 1
    return [b + f for b, f in zip(base, floors)]


def _split(text: str, weights: list[float]) -> list[str]:
    """`text` cut into len(weights) non-empty consecutive pieces whose lengths follow `weights`
    (cuts move to a space nearby in Latin text). Joined with "", the pieces are `text` again."""
    k = len(weights)
    if k <= 1:
        return [text]
    total = _weight(text)
    cum = [0.0]
    for c in text:
        cum.append(cum[-1] + _advance(c))
    cuts, acc = [], 0.0
    wsum = sum(weights) or float(k)
    for i in range(k - 1):
        acc += weights[i] / wsum
        target = acc * total
        j = min(range(1, len(text)), key=lambda j: abs(cum[j] - target))
        spaces = [s + 1 for s in range(max(0, j - 6), min(len(text) - 1, j + 6)) if text[s] == " "]
        if spaces:
            j = min(spaces, key=lambda s: abs(s - j))
        lo = (cuts[-1] if cuts else 0) + 1
        hi = len(text) - (k - 1 - i)
        cuts.append(min(max(j, lo), hi))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


@dataclass(frozen=True)
class LaidOut:
    """A block's lines for a reader: the texts, their rectangles (page pixels), the glyph size."""

    lines: tuple[str, ...]
    rects: tuple[Box, ...]
    font_size: float


def _geometry_lines(box: Box, vertical: bool, paragraphs: list[str]) -> tuple[list[str], list[Box], float]:
    """Lines set in the box at the largest glyph size at which the paragraphs fit, the lines
    (columns right to left, rows top to bottom) centred in the box, each starting at its top /
    left edge of the text."""
    x0, y0, x1, y1 = box
    across, along = (x1 - x0, y1 - y0) if vertical else (y1 - y0, x1 - x0)
    across, along = max(across, 1.0), max(along, 1.0)
    weights = [_weight(p) for p in paragraphs]

    def count(g: float) -> list[int]:
        return [max(1, -int(-(w * g) // along)) for w in weights]  # ceil(w * g / along) lines each

    lo, hi = 1.0, max(1.0, min(across, along))
    for _ in range(40):  # the largest glyph size g at which the lines fit across the box
        g = (lo + hi) / 2
        if sum(count(g)) * g <= across:
            lo = g
        else:
            hi = g
    g = lo
    lines: list[str] = []
    for p, n in zip(paragraphs, count(g)):
        n = min(n, len(p))
        lines += _split(p, [1.0] * n)
    g = min(g, across / len(lines))
    length = min(along, max(_weight(t) for t in lines) * g)
    start_across = (across - len(lines) * g) / 2
    start_along = (along - length) / 2
    rects = []
    for i, t in enumerate(lines):
        a0 = start_across + i * g
        run = min(along, _weight(t) * g)
        if vertical:  # columns from the right
            rects.append((x1 - a0 - g, y0 + start_along, x1 - a0, y0 + start_along + run))
        else:
            rects.append((x0 + start_along, y0 + a0, x0 + start_along + run, y0 + a0 + g))
    return lines, rects, g


def layout_lines(text: str, box: Box, vertical: bool,
                 ink: tuple[list[Box], float] | None = None) -> LaidOut:
    """The lines of a block for a reader. `ink` is what app.detect.lines.ink_lines found in the
    block (line rectangles in reading order, glyph size), or None. Every character of `text`
    except its line breaks is in exactly one line, in order."""
    paragraphs = [p for p in text.replace("\r\n", "\n").split("\n") if p.strip()]
    if not paragraphs:
        return LaidOut((), (), 0.0)
    chars = sum(len(p) for p in paragraphs)
    if ink is not None and len(paragraphs) <= len(ink[0]) <= chars:
        rects, glyph = ink
        along = [(r[3] - r[1]) if vertical else (r[2] - r[0]) for r in rects]
        counts = _shares(len(rects), [_weight(p) for p in paragraphs])
        if all(n <= len(p) for n, p in zip(counts, paragraphs)):
            lines, i = [], 0
            for p, n in zip(paragraphs, counts):
                lines += _split(p, along[i:i + n])
                i += n
            return LaidOut(tuple(lines), tuple(tuple(r) for r in rects), round(glyph, 1))
    lines, rects, g = _geometry_lines(box, vertical, paragraphs)
    return LaidOut(tuple(lines), tuple(tuple(r) for r in rects), round(g, 1))


def quad(rect: Box) -> list[list[float]]:
    """A rectangle as mokuro's line quadrilateral: top-left, top-right, bottom-right, bottom-left."""
    x0, y0, x1, y1 = (round(float(v), 1) for v in rect)
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def number(v: float):
    v = float(v)
    return int(v) if v.is_integer() else v
