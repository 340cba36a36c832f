"""Panels of a page, in reading order, from its gutters: straight cuts, then regions.

Two rules, the second refining the first (`panel_layout`):

1. Straight gutters (recursive XY cut, app.detect.gutters.find_gutter_panels): exact on pages
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
shape of the artwork (a splash page's hair, a shadow), not a panel. A panel holding no text
that lies more than MAX_OVERLAP of itself in a larger panel's box is that panel's artwork
(`drop_figures`): panels tile the page, they do not lie over each other.

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

Rule 1 lives in app.detect.gutters (its docstring says how a gutter and a shared border line
are found). No Qt; numpy, and OpenCV for rule 2.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.detect import gutters
from app.detect.bubbles import paper_level

Box = tuple[float, float, float, float]

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
    return bool((ring <= DARK_LEVEL).mean() > (ring >= gutters.PAPER_FRACTION * paper_level(gray)).mean())


def grey_gutters(gray: np.ndarray) -> float | None:
    """The gutters' grey level on a page whose outer ring is one grey, neither paper nor black
    (GREY_SHARE of it within GREY_TOL of its median); None on other pages."""
    ring = _ring(gray).astype(np.int16)
    g = float(np.median(ring))
    if g <= DARK_LEVEL or g >= gutters.PAPER_FRACTION * paper_level(gray):
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
        colour = gray >= gutters.PAPER_FRACTION * paper_level(gray)
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
    straight = gutters.find_gutter_panels(page, order, [*ignore, *boxes])
    regions = _regions(gray, ignore, bubbles, dark, grey)
    panels: list[Box] = []
    for p in straight:
        panels.extend(split_by_regions(p, list(regions), regions))
    h, w = gray.shape
    panels = order_panels(drop_figures(drop_slivers(panels, ignore, (w, h)), ignore), order, float(h))
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


def drop_figures(panels: Sequence[Box], texts: Sequence[Box]) -> list[Box]:
    """`panels` without the figures found as panels: a panel that holds no text box (half of
    one) and lies more than MAX_OVERLAP of itself in a larger panel's box is a part of that
    panel's artwork (a shape its gutter-coloured areas cut off, a figure breaking out of the
    frame), not a panel of its own: panels tile the page, they do not lie over each other."""
    if not texts:
        return list(panels)
    kept = list(panels)
    for p in sorted(panels, key=_area):
        if any(_inter(t, p) >= 0.5 * _area(t) for t in texts):
            continue
        if any(q is not p and _area(q) >= _area(p) and _inter(p, q) > MAX_OVERLAP * _area(p) for q in kept):
            kept.remove(p)
    return kept


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
