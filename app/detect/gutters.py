"""Panels from straight gutters: rule 1 of the panel finder (app.detect.panels), a recursive XY cut.

Panels are separated by gutters: bands of paper that run straight across a part of the page.
The page is cut along every gutter that crosses its whole width (rows of panels), each row
along every gutter that crosses its whole height (panels side by side), and so on down to
pieces that no gutter crosses. Rows read top to bottom; panels in a row right to left ("rtl",
manga) or left to right ("ltr", comics and webtoons). Bubbles and text often straddle a gutter:
their boxes (`ignore`) count as paper while gutters are searched, so a bubble that overlaps two
panels does not hide the gutter between them.

A gutter line may hold a speck or two (GUTTER_SPECKS), not a panel's border. Where panels have
borders, only the paper runs with a border line on both sides are gutters (a white band inside a
panel, beside its border, is not); a page without borders is cut at its plain paper runs. Panels
that share one border line, with no gutter between them, are cut at that line: a thin straight
line dark across the piece (LINE_INK of it, outside text and bubbles; at most MAX_LINE thick),
lighter on both sides, alone (screentone and hatching are series of lines), and not beside a
gutter (that is a panel's own border). A piece that no gutter crosses is looked at again once
its margins are trimmed: a line too light across the page, beside a wide margin, can cross the
piece from border to border. A page with no gutter is one panel.

A line two panels share does not cross a gutter of the other direction: where a gap in it as
wide as a gutter opens on paper that runs on across it on both sides, the dark row is two
panels' borders level with each other, or a gutter level with a line of the artwork beside it
(`_crosses_gutter`). No Qt; numpy only.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.detect.bubbles import paper_level

Box = tuple[float, float, float, float]

PAPER_FRACTION = 0.85  # a pixel is paper when lighter than this x the page's paper level
GUTTER_SPECKS = 0.002  # a gutter line has at most this share (and at least 2 px) of non-paper
BORDER_INK = 0.5  # a border line: at least this share of a line beside the gutter is not paper
BORDER_REACH = 4  # px: how far from the gutter's edge the border line may be
MIN_GUTTER = 0.004  # of the page's longer side (at least 3 px)
MIN_PANEL = 0.04  # of the page's side: thinner pieces are no panels (a margin, a sliver)
MAX_DEPTH = 8
LINE_INK = 0.82  # a shared border line: this share of the line (outside text and bubbles) is dark ...
MAX_LINE = 0.006  # ... it is at most this thick (of the page's longer side, at least 3 px) ...
MIN_LINE = 0.0025  # ... and at least this thick (at least 2 px) ...
LINE_SIDE = 2  # ... and the LINE_SIDE lines on each side of it are lighter by LINE_CONTRAST
LINE_CONTRAST = 0.35
LINE_ALONE = 16  # px: no other dark line this near (screentone and hatching are series of lines)
LINE_NEAR = 0.75
LINE_GUTTER = 0.03  # a line beside lines this empty (a gutter) is a panel's own border
MIN_LINE_PIECE = 0.08  # of the page's side: the least a panel cut off by a shared border measures
LINE_GAP = 0.02  # of its length: the longest gap a shared border line may have
LINE_SEEN = 0.5  # a line is judged only when this share of it lies outside text and bubbles


def _box_mask(shape: tuple[int, ...], boxes: Sequence[Box]) -> np.ndarray:
    mask = np.zeros(shape[:2], dtype=bool)
    h, w = mask.shape
    for x0, y0, x1, y1 in boxes:
        mask[max(0, int(y0)):min(h, int(np.ceil(y1))), max(0, int(x0)):min(w, int(np.ceil(x1)))] = True
    return mask


def paper_mask(gray: np.ndarray, ignore: Sequence[Box] = ()) -> np.ndarray:
    """(H, W) bool: paper-coloured pixels of the grayscale page, with the `ignore` boxes as paper."""
    paper = gray >= PAPER_FRACTION * paper_level(gray)
    h, w = paper.shape
    for x0, y0, x1, y1 in ignore:
        paper[max(0, int(y0)):min(h, int(np.ceil(y1))), max(0, int(x0)):min(w, int(np.ceil(x1)))] = True
    return paper


def _border_lines(dark: np.ndarray, max_line: int, min_line: int = 2) -> list[tuple[int, int]]:
    """Runs [(a, b)) of lines that are a shared panel border: at least LINE_INK of the line dark
    (`dark[i]`: that share), `min_line` to `max_line` thick, with lighter lines on both sides."""
    line = dark >= LINE_INK
    runs, i, n = [], 0, len(dark)
    while i < n:
        if not line[i]:
            i += 1
            continue
        j = i
        while j < n and line[j]:
            j += 1
        if min_line <= j - i <= max_line and i >= LINE_ALONE and j + LINE_ALONE <= n:
            before, after = dark[i - LINE_SIDE:i].min(), dark[j:j + LINE_SIDE].min()
            alone = max(dark[i - LINE_ALONE:i - LINE_SIDE].max(), dark[j + LINE_SIDE:j + LINE_ALONE].max())
            if min(before, after) <= LINE_INK - LINE_CONTRAST and max(before, after) < LINE_NEAR and alone < LINE_NEAR:
                runs.append((i, j))
        i = j
    return runs


def _cuts(ink: np.ndarray, length: int, min_gutter: int, min_piece: int,
          lines: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """Pieces [(a, b)) between gutters along one axis; `ink[i]`: the share of line i (`length`
    pixels long) that is not paper; `lines`: runs of shared border lines, cuts as well. Margins
    (paper at either end) are trimmed."""
    full = ink * length <= max(2.0, GUTTER_SPECKS * length)
    content = np.flatnonzero(~full)
    if len(content) == 0:
        return []
    lo, hi = int(content[0]), int(content[-1]) + 1
    runs, i = [], lo
    while i < hi:
        if full[i]:
            j = i
            while j < hi and full[j]:
                j += 1
            if j - i >= min_gutter:
                runs.append((i, j))
            i = j
        else:
            i += 1

    def bordered(run: tuple[int, int]) -> bool:
        a, b = run
        return (ink[max(lo, a - BORDER_REACH):a].max(initial=0.0) >= BORDER_INK
                and ink[b:min(hi, b + BORDER_REACH)].max(initial=0.0) >= BORDER_INK)

    if any(bordered(r) for r in runs):
        runs = [r for r in runs if bordered(r)]
    runs = sorted([*runs, *((a, b) for a, b in lines if lo < a and b < hi)])
    pieces, start = [], lo
    for a, b in runs:
        if a - start >= min_piece and hi - b >= min_piece:
            pieces.append((start, a))
            start = b
    pieces.append((start, hi))
    return pieces


def _shared_borders(paper: np.ndarray, dark: np.ndarray, known: np.ndarray, texts: Sequence[Box],
                    piece: tuple[int, int, int, int], axis: int, thickness: tuple[int, int]) -> list[tuple[int, int]]:
    """Runs [(a, b)) of the piece's rows (axis 1) or columns (axis 0), from its start, that are a
    border line two panels share (see the module's rule 1). `paper`: the paper mask with text
    as paper; `dark`: dark pixels outside the text; `known`: pixels outside the text; `texts`:
    the text and bubble boxes; `thickness`: (least, most) pixels."""
    x0, y0, x1, y1 = piece
    h, w = paper.shape
    seen = known[y0:y1, x0:x1].sum(axis=axis)
    share = np.where(seen >= LINE_SEEN * (x1 - x0 if axis == 1 else y1 - y0),
                     dark[y0:y1, x0:x1].sum(axis=axis) / np.maximum(1, seen), 0.0)
    found = _border_lines(share, thickness[1], thickness[0])
    if not found:
        return []
    # lines along the first axis of these arrays
    region = ~paper[y0:y1, x0:x1] if axis == 1 else (~paper[y0:y1, x0:x1]).T
    covered = dark[y0:y1, x0:x1] | ~known[y0:y1, x0:x1]
    covered = covered if axis == 1 else covered.T
    edge = BORDER_REACH + LINE_SIDE
    inked = np.flatnonzero(region.any(axis=0))  # the content's extent along the line (no margins)
    c0, c1 = (int(inked[0]), int(inked[-1]) + 1) if len(inked) else (0, region.shape[1])
    framed = region[:, c0:c0 + edge].any(axis=1) & region[:, max(c0, c1 - edge):c1].any(axis=1)  # a frame's sides
    open_ = (region.mean(axis=1) <= LINE_GUTTER) & ~framed  # a gutter's line: (almost) empty and unframed
    # text on both sides: a line with text on one side only is the artwork's (a drawn frame, a
    # window, a horizon) as often as a border, and cutting there changes no order
    o0, o1, p0 = (x0, x1, y0) if axis == 1 else (y0, y1, x0)
    centres = [((t[1] + t[3]) / 2 if axis == 1 else (t[0] + t[2]) / 2) - p0 for t in texts
               if o0 <= ((t[0] + t[2]) / 2 if axis == 1 else (t[1] + t[3]) / 2) < o1]
    least = MIN_LINE_PIECE * (h if axis == 1 else w)  # panels cut off by a line are not thin
    gutter = max(3, int(MIN_GUTTER * max(h, w)))

    def keep(a: int, b: int) -> bool:
        beside_gutter = open_[max(0, a - edge):a].any() or open_[b:b + edge].any()
        both_sides = any(c < a for c in centres) and any(c > b for c in centres)
        return (not beside_gutter and both_sides and a >= least and len(share) - b >= least
                and _longest_run(~covered[a:b, c0:c1].any(axis=0)) <= LINE_GAP * (c1 - c0)  # unbroken
                and not _crosses_gutter(region, covered, (a, b), (c0, c1), gutter, int(least)))

    return [(a, b) for a, b in found if keep(a, b)]


def _crosses_gutter(ink: np.ndarray, covered: np.ndarray, line: tuple[int, int], extent: tuple[int, int],
                    gutter: int, reach: int) -> bool:
    """Does the line (rows `line` of the arrays, along their second axis over `extent`) cross a
    gutter of the other direction? A gap inside it (no pixel `covered`; not at either end, where
    a margin runs beside the content) as wide as a gutter, whose paper (`ink` False) runs on
    across the line on both sides as far as a panel measures (`reach`): the borders of two panels level with each other, or a gutter level with a line of
    the artwork beside it, not one line two panels share."""
    a, b = line
    c0, c1 = extent
    if a < reach:
        return False
    flags = np.concatenate(([0], (~covered[a:b, c0:c1].any(axis=0)).astype(np.int8), [0]))
    edges = np.flatnonzero(np.diff(flags))
    for g0, g1 in zip(edges[::2] + c0, edges[1::2] + c0):
        inside = c0 < g0 and g1 < c1
        if (inside and g1 - g0 >= gutter and ink[a - reach:a, g0:g1].any(axis=1).mean() <= GUTTER_SPECKS
                and ink[b:b + reach, g0:g1].any(axis=1).mean() <= GUTTER_SPECKS):
            return True
    return False


def _longest_run(flags: np.ndarray) -> int:
    """The longest run of True in a 1-D bool array."""
    padded = np.concatenate(([0], flags.astype(np.int8), [0]))
    edges = np.flatnonzero(np.diff(padded))
    return int((edges[1::2] - edges[::2]).max(initial=0))


def find_gutter_panels(gray: np.ndarray, order: str = "rtl", ignore: Sequence[Box] = ()) -> list[Box]:
    """Panel boxes (x0, y0, x1, y1) of the grayscale page `gray` (H, W uint8) in reading order,
    from the straight gutters only (rule 1)."""
    paper = paper_mask(gray, ignore)
    h, w = paper.shape
    known = ~_box_mask(gray.shape, ignore)  # pixels outside the ignored boxes
    dark = ~paper_mask(gray) & known
    min_gutter = max(3, int(MIN_GUTTER * max(h, w)))
    max_line = max(3, int(MAX_LINE * max(h, w)))
    min_line = max(2, round(MIN_LINE * max(h, w)))
    rtl = order == "rtl"
    out: list[Box] = []

    def lines(x0: int, y0: int, x1: int, y1: int, axis: int) -> list[tuple[int, int]]:
        return _shared_borders(paper, dark, known, ignore, (x0, y0, x1, y1), axis, (min_line, max_line))

    def split(x0: int, y0: int, x1: int, y1: int, depth: int) -> None:
        region = paper[y0:y1, x0:x1]
        rows = _cuts(1.0 - region.mean(axis=1), x1 - x0, min_gutter, int(MIN_PANEL * h), lines(x0, y0, x1, y1, 1))
        if len(rows) > 1 and depth < MAX_DEPTH:
            for a, b in rows:
                split(x0, y0 + a, x1, y0 + b, depth + 1)
            return
        if rows:  # trim to the content before looking for columns
            y0, y1 = y0 + rows[0][0], y0 + rows[0][1]
            region = paper[y0:y1, x0:x1]
        cols = _cuts(1.0 - region.mean(axis=0), y1 - y0, min_gutter, int(MIN_PANEL * w), lines(x0, y0, x1, y1, 0))
        if len(cols) > 1 and depth < MAX_DEPTH:
            for a, b in (reversed(cols) if rtl else cols):
                split(x0 + a, y0, x0 + b, y1, depth + 1)
            return
        if cols:
            trimmed = cols[0][1] - cols[0][0] < x1 - x0
            x0, x1 = x0 + cols[0][0], x0 + cols[0][1]
            # a border line across the panel, once the margins beside it are trimmed away
            if trimmed and depth < MAX_DEPTH and lines(x0, y0, x1, y1, 1):
                split(x0, y0, x1, y1, depth + 1)
                return
        if x1 > x0 and y1 > y0:
            out.append((float(x0), float(y0), float(x1), float(y1)))

    split(0, 0, w, h, 0)
    return out or [(0.0, 0.0, float(w), float(h))]
