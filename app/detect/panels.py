"""Panels of a page, in reading order, from its gutters: straight cuts, then regions.

Two rules, the second refining the first (`panel_layout`):

1. Straight gutters (recursive XY cut, `find_gutter_panels`), described below: exact on pages
   whose gutters run straight across, paper-white between bordered panels.
2. Regions bounded by the gutter (`region_panels`): the gutter is the paper-coloured area
   connected to the page's edge (white, black on a page whose edge is dark, or, on a page whose
   edge is one grey, pixels within GREY_TOL of that grey: the colour of the page's outer ring
   decides; on a grey page rule 1 reads that grey as paper and all else as ink), whatever its course (slanted borders, gutters that stop at a tall
   panel); what it does not reach falls apart into the panels. Bubbles found around the text
   boxes (app.detect.bubbles) are painted as paper first, so a bubble straddling a gutter does
   not join the two panels. A straight-cut panel holding two or more such regions (at least
   REGION_INSIDE of each) is replaced by them, cut to it.

Panels are then put in reading order by their boxes (`order_panels`): tiers top to bottom (a
cut between boxes, with PANEL_SLACK of the page's height or SLANT of the panel's own height
for slanted borders), inside a tier
the columns right to left (manga) or left to right, recursively; where the panels form both
tiers and columns, the gutter WIDER than the other parts them first (4-koma strips, the two
pages of a spread).

Panels narrower or shorter than MIN_PANEL_SIDE of the page that hold no text are slivers of a
cut, not panels; on a dark or grey page, a region filling less than MIN_REGION_FILL of its box is a
shape of the artwork (a splash page's hair, a shadow), not a panel.

Confidence: the layout is `sure` unless its panels overlap each other heavily (MAX_OVERLAP of
the smaller, without one lying inside the other's box), leave many of the text boxes outside
every panel (more than MAX_OUTSIDE of them with less than half their area in panels: a bubble
straddling two panels is inside), or a crowded panel (below) lies around another; panels
without text that overlap others (a sound effect breaking out of its frame) are left out of
that judgement (`settle_overlaps`) and put last. When it is
not sure, the reading order does not use the panels (app.detect.order's page-wide rule), so an
unsure panel finder is never worse than none. A panel holding CROWDED text boxes or more is
`crowded` (real panels hold a few bubbles; so many are likely several panels seen as one): the
order reads its boxes by the page-wide rule, and the other panels as panels.

Rule 1 in detail. Panels are separated by gutters: bands of paper that run straight across a part of the page.
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
piece from border to border. A page with no gutter is one panel. No Qt; numpy, and OpenCV for rule 2.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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

    def keep(a: int, b: int) -> bool:
        beside_gutter = open_[max(0, a - edge):a].any() or open_[b:b + edge].any()
        both_sides = any(c < a for c in centres) and any(c > b for c in centres)
        return (not beside_gutter and both_sides and a >= least and len(share) - b >= least
                and _longest_run(~covered[a:b, c0:c1].any(axis=0)) <= LINE_GAP * (c1 - c0))  # unbroken

    return [(a, b) for a, b in found if keep(a, b)]


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


# --- rule 2: regions bounded by the gutter; the layout and its confidence --------------------

DARK_LEVEL = 70  # a pixel this dark or darker is gutter on a page whose edge is dark
GREY_TOL = 24  # on a page whose edge is one grey: a pixel this near that grey is gutter ...
GREY_SHARE = 0.6  # ... when this share of the page's outer ring is that near its median
RING_PX = 3  # the page's outer ring: its colour says whether gutters are paper or black
MIN_REGION_AREA = 0.012  # of the page: smaller regions are no panels (free text, a speck of art)
MIN_REGION_SIDE = 0.05  # of the page's side
MIN_PANEL_SIDE = 0.04  # of the page's side: a narrower panel without text is a sliver of a cut, no panel
PANEL_FILL = 0.8  # a framed panel fills this share of its box or more
MIN_REGION_FILL = 0.8  # of its box: a panel is about as full as its box (not a splash's shapes of art)
BUBBLE_OUTLINE = 5  # px: a bubble's outline painted as paper with its inside
REGION_INSIDE = 0.7  # a region lies in a straight-cut panel when this share of its box does
PANEL_SLACK = 0.02  # of the page's height: how far boxes of two tiers may overlap (slanted borders)
SLANT = 0.25  # of a panel's height (width): how far its box may overlap the tier (column) before it
WIDER = 3.0  # a grid's columns are read first when the gutter between them is this x wider than between its tiers
MAX_OVERLAP = 0.3  # of the smaller panel: panels overlapping more make the layout unsure ...
NESTED = 0.9  # ... unless the smaller lies inside the larger's box (an inset panel, an L-shaped panel)
MAX_OUTSIDE = 0.25  # share of the text boxes outside every panel that makes the layout unsure
CROWDED = 6  # a panel holding this many text boxes is several panels seen as one: unsure


@dataclass(frozen=True)
class PanelLayout:
    """The page's panels in reading order and whether the finder is `sure` of them (when not,
    the reading order does not use them); `dark`: the gutters are black."""

    panels: tuple[Box, ...]
    sure: bool
    dark: bool = False
    crowded: tuple[int, ...] = ()  # panels holding CROWDED text boxes or more (maybe several seen as one)
    loose: tuple[int, ...] = ()  # not panels: text boxes in no panel, each read as a unit where it lies


def _area(b: Box) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def _inter(a: Box, b: Box) -> float:
    return _area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def _ring(gray: np.ndarray) -> np.ndarray:
    r = RING_PX
    return np.concatenate([gray[:r].ravel(), gray[-r:].ravel(), gray[:, :r].ravel(), gray[:, -r:].ravel()])


def dark_gutters(gray: np.ndarray) -> bool:
    """Is the page's outer ring mostly black (a dark page: its gutters are black)?"""
    ring = _ring(gray)
    return bool((ring <= DARK_LEVEL).mean() > (ring >= PAPER_FRACTION * paper_level(gray)).mean())


def grey_gutters(gray: np.ndarray) -> float | None:
    """The gutters' grey level on a page whose outer ring is one grey, neither paper nor black
    (GREY_SHARE of it within GREY_TOL of its median); None on other pages."""
    ring = _ring(gray).astype(np.int16)
    g = float(np.median(ring))
    if g <= DARK_LEVEL or g >= PAPER_FRACTION * paper_level(gray):
        return None
    return g if float((np.abs(ring - g) <= GREY_TOL).mean()) >= GREY_SHARE else None


def _grey_as_paper(gray: np.ndarray, grey: float) -> np.ndarray:
    """The page with its gutters' grey as paper (255) and everything else as ink (0)."""
    return np.where(np.abs(gray.astype(np.int16) - grey) <= GREY_TOL, 255, 0).astype(np.uint8)


def region_panels(gray: np.ndarray, ignore: Sequence[Box] = (), bubbles: Sequence = (),
                  dark: bool | None = None) -> list[Box]:
    """Rule 2: boxes of the regions the gutter (paper or black, connected to the page's edge)
    does not reach, unordered. `ignore`: boxes painted as gutter colour (text); `bubbles`:
    polygons ((x, y), ...) painted likewise (a bubble over a gutter)."""
    return list(_regions(gray, ignore, bubbles, dark))


def _regions(gray: np.ndarray, ignore: Sequence[Box] = (), bubbles: Sequence = (),
             dark: bool | None = None, grey: float | None = None) -> dict[Box, float]:
    """region_panels' boxes, each with the share of its box the region fills; `grey`: the
    gutters' grey level (grey_gutters) on a grey page."""
    import cv2

    h, w = gray.shape
    dark = dark_gutters(gray) if dark is None else dark
    if dark:
        colour = gray <= DARK_LEVEL
    elif grey is not None:
        colour = _grey_as_paper(gray, grey) > 0
    else:
        colour = gray >= PAPER_FRACTION * paper_level(gray)
    colour = colour.astype(np.uint8)
    for poly in bubbles:
        if poly is not None and len(poly) >= 3:
            pts = np.round(np.asarray(poly)).astype(np.int32)
            cv2.fillPoly(colour, [pts], 1)
            cv2.polylines(colour, [pts], True, 1, thickness=BUBBLE_OUTLINE)
    for x0, y0, x1, y1 in ignore:
        colour[max(0, int(y0)):min(h, int(np.ceil(y1))), max(0, int(x0)):min(w, int(np.ceil(x1)))] = 1
    _, labels = cv2.connectedComponents(colour, connectivity=4)
    edge = np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]])
    gutter = np.isin(labels, np.unique(edge[edge > 0]))
    n, _, stats, _ = cv2.connectedComponentsWithStats((~gutter).astype(np.uint8), connectivity=4)
    out: dict[Box, float] = {}
    for i in range(1, n):
        x, y, bw, bh, count = (int(v) for v in stats[i])
        if (count >= MIN_REGION_AREA * h * w and bw >= MIN_REGION_SIDE * w and bh >= MIN_REGION_SIDE * h
                and ((not dark and grey is None) or count >= MIN_REGION_FILL * bw * bh)):
            out[(float(x), float(y), float(x + bw), float(y + bh))] = count / max(1, bw * bh)
    return out


def order_panels(panels: Sequence[Box], order: str = "rtl", page_height: float | None = None,
                 units: Sequence[Box] = ()) -> list[Box]:
    """`panels` in reading order: tiers top to bottom, the panels of a tier (or the columns of
    stacked panels) right to left for "rtl", left to right for "ltr", recursively, each time cut
    at the widest gutter first. Where the panels fall both into tiers and into columns (a grid),
    the columns come first when the gutter between them is WIDER than the tiers' (two strips of
    4-koma, the two pages of a spread, are read one after the other; an ordinary grid, whose
    tiers are parted by gutters as wide or wider, tier by tier). `units`: boxes read among the
    panels that do not shape the cuts (text in no panel: a strip's title, a caption in a
    margin): each goes to the side of a cut where its centre lies, and beside a single panel it
    comes first when it lies above that panel or beside it on the side read first. Returns the
    panels and the units in reading order."""
    boxes = [*panels, *units]
    if not boxes:
        return []
    height = page_height or max(b[3] for b in boxes)
    slack = PANEL_SLACK * height
    rtl = order == "rtl"

    def across(i: int) -> float:
        return -boxes[i][2] if rtl else boxes[i][0]

    def groups(idx: list[int], lo: int, hi: int) -> tuple[list[list[int]], list[float], list[float]]:
        """(groups along the axis, in order; the gaps between consecutive groups; the middle of each gap)."""
        ranked = sorted(idx, key=lambda i: (boxes[i][lo], boxes[i][hi], i))
        out, reach, gaps, mids = [[ranked[0]]], boxes[ranked[0]][hi], [], []
        for i in ranked[1:]:
            # a new group when it overlaps the ones before by little: PANEL_SLACK of the page,
            # or SLANT of its own extent (the boxes of panels parted by a slanted gutter overlap)
            if boxes[i][lo] >= reach - max(slack, SLANT * (boxes[i][hi] - boxes[i][lo])):
                out.append([i])
                gaps.append(boxes[i][lo] - reach)
                mids.append((boxes[i][lo] + reach) / 2)
            else:
                out[-1].append(i)
            reach = max(reach, boxes[i][hi])
        return out, gaps, mids

    def first_beside(u: int, p: int) -> bool:
        """Is unit `u` read before the single panel `p`: above it, or beside it on the side read first?"""
        above = boxes[u][3] <= boxes[p][1] + slack
        beside = boxes[u][1] < boxes[p][3] and (boxes[u][0] >= boxes[p][2] - slack if rtl else boxes[u][2] <= boxes[p][0] + slack)
        return above or beside

    def rec(idx: list[int], extra: list[int]) -> list[int]:
        key = lambda i: (boxes[i][1], across(i), i)  # noqa: E731
        if len(idx) <= 1:
            if not idx:
                return sorted(extra, key=key)
            before = [u for u in extra if first_beside(u, idx[0])]
            return [*sorted(before, key=key), idx[0], *sorted((u for u in extra if u not in before), key=key)]
        tiers, tier_gaps, tier_mids = groups(idx, 1, 3)
        cols, col_gaps, col_mids = groups(idx, 0, 2)
        # tiers whose boxes overlap (a slanted gutter) are parted by a gutter of unknown width: the slack
        tier_gutter = max(tier_gaps) if tiers and max(tier_gaps, default=0.0) > 0 else slack
        by_cols = len(cols) > 1 and (len(tiers) == 1 or max(col_gaps) >= WIDER * tier_gutter)
        parts, gaps, mids = (cols, col_gaps, col_mids) if by_cols else (tiers, tier_gaps, tier_mids)
        if len(parts) == 1:
            return sorted([*idx, *extra], key=key)
        k = gaps.index(max(gaps))  # cut at the widest gutter first, then each side
        axis = 0 if by_cols else 1
        first, second = [j for g in parts[:k + 1] for j in g], [j for g in parts[k + 1:] for j in g]
        near = [u for u in extra if (boxes[u][axis] + boxes[u][axis + 2]) / 2 < mids[k]]
        far = [u for u in extra if u not in near]
        if by_cols and rtl:
            return rec(second, far) + rec(first, near)
        return rec(first, near) + rec(second, far)

    n = len(panels)
    return [boxes[i] for i in rec(list(range(n)), list(range(n, len(boxes))))]


def panel_layout(gray: np.ndarray, order: str = "rtl", ignore: Sequence[Box] = (),
                 bubbles: Sequence = ()) -> PanelLayout:
    """The panels of the grayscale page in reading order, with the finder's confidence.
    `ignore`: the page's text and bubble boxes (paper for the gutter search, and the boxes
    whose place decides the confidence); `bubbles`: bubble outlines (polygons) found around
    text boxes (paper too; their boxes count as paper for the straight cuts)."""
    dark = dark_gutters(gray)
    grey = None if dark else grey_gutters(gray)
    page = 255 - gray if dark else gray if grey is None else _grey_as_paper(gray, grey)
    outlines = [np.asarray(p, dtype=np.float64) for p in bubbles if p is not None and len(p) >= 3]
    boxes = [(float(p[:, 0].min()), float(p[:, 1].min()), float(p[:, 0].max()), float(p[:, 1].max())) for p in outlines]
    straight = find_gutter_panels(page, order, [*ignore, *boxes])
    regions = _regions(gray, ignore, bubbles, dark, grey)
    panels: list[Box] = []
    for p in straight:
        panels.extend(split_by_regions(p, list(regions), regions))
    h, w = gray.shape
    panels = order_panels(drop_slivers(panels, ignore, (w, h)), order, float(h))
    settled, sure = settle_overlaps(panels, ignore, order, float(h))
    # text in no panel (a strip's title, a caption in a gutter or margin) is a unit of its own,
    # read where it lies among the panels (the panels set last by settle_overlaps stay last)
    loose = loose_texts(ignore, settled)
    if not (loose and sure):
        return PanelLayout(tuple(settled), sure, dark, _crowded(settled, ignore))
    head = [p for p in settled if p not in _set_last(panels, ignore)]
    units = [*order_panels(head, order, float(h), loose), *(p for p in settled if p not in head)]
    return PanelLayout(tuple(units), sure, dark, _crowded(units, ignore), tuple(k for k, p in enumerate(units) if p in loose))


def loose_texts(texts: Sequence[Box], panels: Sequence[Box]) -> list[Box]:
    """The text boxes that lie in no panel (each once), in their order."""
    return list(dict.fromkeys(t for t in texts if not any(_inter(t, p) > 0 for p in panels)))


def settle_overlaps(panels: Sequence[Box], texts: Sequence[Box], order: str, height: float) -> tuple[list[Box], bool]:
    """(panels, sure): `panels` (in reading order) and the finder's confidence. Panels that hold
    no text and overlap another (a sound effect or a figure breaking out of its frame, found as
    a region) decide nothing of the order: when the layout is unsure only because of them, it is
    sure without them; they stay panels, last."""
    panels = list(panels)
    if _sure(panels, texts):
        return panels, True
    if not texts:
        return panels, False
    last = _set_last(panels, texts)
    kept = [p for p in panels if p not in last]
    if last and _sure(kept, texts):
        return [*order_panels(kept, order, height), *last], True
    return panels, False


def _set_last(panels: Sequence[Box], texts: Sequence[Box]) -> list[Box]:
    """The panels settle_overlaps may set aside: holding no text and overlapping another."""
    if not texts:
        return []
    from app.detect.order import panel_of

    holding = {panel_of(t, panels) for t in texts}
    return [p for k, p in enumerate(panels) if k not in holding and _overlaps(p, panels)]


def split_by_regions(piece: Box, regions: Sequence[Box], fills: dict[Box, float] | None = None) -> list[Box]:
    """The panels of a straight-cut `piece`: the regions lying in it (REGION_INSIDE of each, cut
    to it) when there are two or more, else the piece. A ragged region (filling less than
    PANEL_FILL of its box, `fills`) in a corner of the piece whose box lies inside another
    region's is a figure in an open frame, not a panel (a framed panel fills its box)."""
    fills = fills or {}
    inside = [r for r in regions if _inter(r, piece) >= REGION_INSIDE * _area(r)]
    inside = [r for r in inside if not (fills.get(r, 0.0) < PANEL_FILL and _edges_shared(r, piece) >= 2
                                        and any(q is not r and _inter(r, q) >= NESTED * _area(r) for q in inside))]
    if len(inside) < 2:
        return [piece]
    return [(max(r[0], piece[0]), max(r[1], piece[1]), min(r[2], piece[2]), min(r[3], piece[3])) for r in inside]


def _edges_shared(r: Box, p: Box, slack: float = 6.0) -> int:
    """How many of `p`'s sides `r` reaches (within `slack` px)."""
    return sum(abs(a - b) <= slack for a, b in zip(r, p))


def _overlaps(p: Box, panels: Sequence[Box]) -> bool:
    """Does `p` overlap another of `panels` more than MAX_OVERLAP of the smaller (not nested)?"""
    for q in panels:
        if q is p:
            continue
        inter, smaller = _inter(p, q), max(1.0, min(_area(p), _area(q)))
        if MAX_OVERLAP * smaller < inter < NESTED * smaller:
            return True
    return False


def drop_slivers(panels: Sequence[Box], texts: Sequence[Box], size: tuple[int, int]) -> list[Box]:
    """`panels` without the slivers of a cut: narrower or shorter than MIN_PANEL_SIDE of the
    page (`size`: width, height) and holding no text box (half of one or more)."""
    w, h = size
    kept = [p for p in panels if (p[2] - p[0] >= MIN_PANEL_SIDE * w and p[3] - p[1] >= MIN_PANEL_SIDE * h)
            or any(_inter(t, p) >= 0.5 * _area(t) for t in texts)]
    return kept or list(panels)


def _crowded(panels: Sequence[Box], boxes: Sequence[Box]) -> tuple[int, ...]:
    """Indices of the panels holding CROWDED text boxes or more: real panels hold a few bubbles,
    so many are likely several panels seen as one; their boxes are read by the page-wide rule."""
    if not panels or not boxes:
        return ()
    from app.detect.order import panel_of

    held = [0] * len(panels)
    for t in boxes:
        held[panel_of(t, panels)] += 1
    return tuple(k for k, n in enumerate(held) if n >= CROWDED)


def _sure(panels: Sequence[Box], boxes: Sequence[Box]) -> bool:
    for i, a in enumerate(panels):
        for b in panels[i + 1:]:
            inter, smaller = _inter(a, b), max(1.0, min(_area(a), _area(b)))
            if MAX_OVERLAP * smaller < inter < NESTED * smaller:  # an inset panel (or an L-shaped one's box) is fine
                return False
    if boxes:
        outside = sum(sum(_inter(t, p) for p in panels) < 0.5 * max(1.0, _area(t)) for t in boxes)
        if outside > MAX_OUTSIDE * len(boxes):
            return False
        for k in _crowded(panels, boxes):  # a crowded panel around another: the order between them is unknown
            if any(_inter(panels[k], q) > MAX_OVERLAP * max(1.0, _area(q)) for j, q in enumerate(panels) if j != k):
                return False
    return True


def find_panels(gray: np.ndarray, order: str = "rtl", ignore: Sequence[Box] = (),
                bubbles: Sequence = ()) -> list[Box]:
    """Panel boxes (x0, y0, x1, y1) of the grayscale page `gray` (H, W uint8) in reading order
    (`panel_layout`'s panels, without the loose text units; [] when the finder is not sure of them)."""
    layout = panel_layout(gray, order, ignore, bubbles)
    return [p for k, p in enumerate(layout.panels) if k not in layout.loose] if layout.sure else []
