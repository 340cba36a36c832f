"""Page layouts that real books have beyond the plain grid of framed panels, each with the
reading order manga readers give it (docs/synthetic-pages.md says how each is drawn and read).

`generate_page(seed, index, layout=KIND)` (tools.synth.pages) draws a page of one of `LAYOUTS`
("mixed": page `index` gets LAYOUTS[index % len(LAYOUTS)], so any ten pages in a row hold every
kind). The truth has the classic page's format, plus "layout": the kind, and "panel_polygons":
each panel's outline (a slanted panel is a quadrilateral; its box in "panels" is the outline's
bounding box). Blocks come in the readers' order; "panel" is the index of the panel a block is
read with.

Each kind is a function drawing on the page's layers (tools.synth.pages._Layers) and returning
(panels as polygons in reading order, blocks in reading order). They share pages.py's bubble
and text drawing (`draw_block`), so a bubble here looks like a bubble there; inside a panel the
blocks lie along its reading path (`_path_blocks`), so what a page of these kinds tests is how
its panels are read.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PIL import Image, ImageDraw

from tools.synth.art import doodles, panel_art, screentone
from tools.synth.pages import Box, _Layers, _place, _split, _text_mask, _Twin, draw_block

PATH_STEP = 0.04  # of the panel's width: how much less far right each next block on the path reaches
LAYOUTS = ("overlap", "borderless", "inset", "slanted", "splash", "across", "over_art", "spread", "yonkoma", "dark")
Point = tuple[float, float]
Polygon = list[Point]


def layout_for(layout: str, index: int) -> str:
    """The kind page `index` gets for `layout` (a kind, or "mixed")."""
    if layout == "mixed":
        return LAYOUTS[index % len(LAYOUTS)]
    if layout not in LAYOUTS:
        raise ValueError(f"layout {layout!r}: use one of {', '.join(LAYOUTS)} or mixed")
    return layout


def page_size(kind: str, size: tuple[int, int]) -> tuple[int, int]:
    """A two-page spread is two pages wide; every other kind is one page of `size`."""
    return (2 * size[0], size[1]) if kind == "spread" else size


def background(kind: str) -> int:
    return 12 if kind == "dark" else 255


def _rect(box: Box) -> Polygon:
    x0, y0, x1, y1 = box
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def _bbox(poly: Polygon) -> Box:
    xs, ys = [p[0] for p in poly], [p[1] for p in poly]
    return (int(np.floor(min(xs))), int(np.floor(min(ys))), int(np.ceil(max(xs))), int(np.ceil(max(ys))))


def _margins(rng: np.random.Generator, width: int, height: int) -> tuple[int, int, int]:
    """(margin x, margin y, gutter), drawn like the classic page's."""
    return (int(width * rng.uniform(0.03, 0.06)), int(height * rng.uniform(0.03, 0.05)),
            int(width * rng.uniform(0.01, 0.025)))


def _grid(rng: np.random.Generator, area: Box, gutter: int, rows: int | None = None,
          page_height: int | None = None) -> list[Box]:
    """Panel boxes of `area` in manga order: rows of panels top to bottom, right to left in a row."""
    x0, y0, x1, y1 = area
    height = page_height or (y1 - y0)
    rows = rows or int(rng.choice([2, 3, 3, 4]))
    panels: list[Box] = []
    for a, b in _split(rng, y0, y1 - y0, rows, gutter):
        cols = int(rng.choice([1, 2, 2, 3])) if (b - a) > 0.15 * height else int(rng.choice([1, 2]))
        spans = _split(rng, x0, x1 - x0, cols, gutter)
        panels.extend((c, a, d, b) for c, d in reversed(spans))
    return panels


def _mask(size: tuple[int, int], poly: Polygon, offset: tuple[int, int]) -> Image.Image:
    mask = Image.new("L", size, 0)
    ImageDraw.Draw(mask).polygon([(x - offset[0], y - offset[1]) for x, y in poly], fill=255)
    return mask


def _art(rng: np.random.Generator, w: int, h: int, style: str) -> Image.Image:
    """A panel's artwork: "plain" (the classic panel's), "dense" (a tone over all of it, then
    line art: a borderless panel's extent shows), "dark" (a dark tone and line art)."""
    if style == "plain":
        return panel_art(rng, w, h)
    tone = screentone(rng, w, h).astype(np.float32)
    if style == "dark":
        lo = rng.uniform(35, 80)
        tone = lo + tone * (rng.uniform(100, 150) - lo) / 255.0
    else:
        tone = 150 + tone * (105 / 255.0)
    img = Image.fromarray(tone.astype(np.uint8), "L")
    doodles(rng, ImageDraw.Draw(img), w, h)
    return img


def _draw_panel(rng: np.random.Generator, layers: _Layers, poly: Polygon, border: int, style: str = "plain",
                colour: int = 0) -> None:
    """The panel's art inside `poly`, and its frame (`border` px of `colour`; 0: no frame)."""
    x0, y0, x1, y1 = _bbox(poly)
    w, h = max(1, x1 - x0), max(1, y1 - y0)
    layers.paste(_art(rng, w, h, style), (x0, y0), _mask((w, h), poly, (x0, y0)))
    if border > 0:
        _Twin(*layers.all()).polygon(poly, outline=colour, width=border)


def _inner(poly: Polygon, inset: int = 0) -> Box:
    """The largest axis-aligned box inside a convex quadrilateral (x0 y0, x1 y0, x1 y1, x0 y1
    order), less `inset` px on each side."""
    (ax, ay), (bx, by), (cx, cy), (dx, dy) = poly
    return (int(max(ax, dx)) + inset, int(max(ay, by)) + inset, int(min(bx, cx)) - inset, int(min(cy, dy)) - inset)


def _path_blocks(rng: np.random.Generator, layers: _Layers, panel: Box, pi: int, border: int,
                 taken: list[Box] | None = None, on_art: int = 0) -> list[dict]:
    """The blocks of one panel (as many as a classic panel gets, plus `on_art` texts drawn straight
    on the art) laid along the panel's reading path, as an artist composes them: each next block
    reaches less far right than the one before (by PATH_STEP of the panel's width) and starts no
    higher, and lies wholly below it where the two share a column. The readers' order is then
    the path's, whatever rule a reader applies; the layout of the page is what is left to read."""
    page = layers.page
    area = (panel[2] - panel[0]) * (panel[3] - panel[1]) / (page.width * page.height)
    n_bubbles = int(rng.integers(0 if area < 0.05 else 1, 3 + int(area * 10)))
    n_free = int(rng.random() < 0.35) + int(rng.random() < 0.1)
    kinds = ["bubble"] * min(n_bubbles, 4) + ["text"] * n_free + ["art"] * on_art
    kinds = [kinds[i] for i in rng.permutation(len(kinds))]
    taken = [] if taken is None else taken
    step = PATH_STEP * (panel[2] - panel[0])
    blocks: list[dict] = []
    last: Box | None = None

    def place(w: int, h: int) -> Box | None:
        x0, y0, x1, y1 = panel
        if last is not None:
            x1, y0 = min(x1, int(last[2] - step) + border + 4), max(y0, last[1] - border - 4)
        for _ in range(4):
            spot = _place(rng, (x0, y0, x1, y1), w, h, border + 4, taken)
            if spot is None:
                return None
            if last is None or spot[2] <= last[0] or spot[1] >= last[3] + 4:  # left of it, or below it
                return spot
        return None

    for kind in kinds:
        if kind == "art":
            made = _text_on_art(rng, layers, place, pi)
        else:
            made = draw_block(rng, layers, kind, pi, place)
        if made is None:
            continue
        block, spot = made
        taken.append(spot)
        blocks.append(block)
        last = tuple(block["box"])
    return blocks


def _classic_panels(rng, layers, polys: list[Polygon], style: str = "plain", frames: bool = True,
                    colour: int = 0) -> list[dict]:
    """Draw `polys` (in reading order) as panels, then their blocks; the blocks in reading order."""
    borders = []
    for poly in polys:
        border = int(rng.integers(2, 6)) if frames else 0
        _draw_panel(rng, layers, poly, border, style, colour)
        borders.append(border)
    blocks: list[dict] = []
    for pi, (poly, border) in enumerate(zip(polys, borders, strict=True)):
        blocks.extend(_path_blocks(rng, layers, _inner(poly), pi, border))
    return blocks


# --- the kinds ------------------------------------------------------------------------------

def overlap(rng, layers) -> tuple[list[Polygon], list[dict]]:
    """A grid whose panels break their frames: one panel grown over its neighbour (drawn on top
    of it, a white band around it), a figure of the art drawn across a border, a bubble pushed
    over its panel's frame into the margin. Read as the grid: the panel drawn on top keeps its
    place, a bubble breaking out is read with its own panel."""
    w, h = layers.page.size
    mx, my, g = _margins(rng, w, h)
    boxes = _grid(rng, (mx, my, w - mx, h - my), g)
    # the panel grown over a neighbour: the next one on its left in the row (read after it) or just below
    candidates = [(k, j) for k, a in enumerate(boxes) for j, b in enumerate(boxes)
                  if j != k and ((b[1] == a[1] and 0 < a[0] - b[2] <= 2 * g)
                                 or (0 < b[1] - a[3] <= 2 * g and b[0] < a[2] and a[0] < b[2]))]
    grown = list(boxes)
    top = under = None
    if candidates:
        k, j = candidates[int(rng.integers(len(candidates)))]
        a, b = boxes[k], boxes[j]
        if b[1] == a[1]:  # left neighbour: grow left into it
            reach = int((b[2] - b[0]) * rng.uniform(0.1, 0.2))
            grown[k] = (b[2] - reach, a[1], a[2], a[3])
        else:  # the panel below: grow down into it
            reach = int((b[3] - b[1]) * rng.uniform(0.1, 0.2))
            grown[k] = (a[0], a[1], a[2], b[1] + reach)
        top, under = k, j
    borders = [int(rng.integers(2, 6)) for _ in boxes]
    draw = _Twin(*layers.all())
    for k in [i for i in range(len(boxes)) if i != top] + ([top] if top is not None else []):
        if k == top:  # a white band around the panel on top, as printed
            x0, y0, x1, y1 = grown[k]
            draw.rectangle((x0 - 6, y0 - 6, x1 + 5, y1 + 5), fill=255)
        _draw_panel(rng, layers, _rect(grown[k]), borders[k])
    # a figure of the art across a border of another panel (into the gutter, or the margin)
    others = [i for i in range(len(boxes)) if i not in (top, under)] or list(range(len(boxes)))
    k = others[int(rng.integers(len(others)))]
    x0, y0, x1, y1 = grown[k]
    side = int(rng.integers(4))
    r = int(rng.uniform(0.04, 0.08) * min(w, h))
    cx, cy = ((x0, (y0 + y1) / 2), ((x0 + x1) / 2, y0), (x1, (y0 + y1) / 2), ((x0 + x1) / 2, y1))[side]
    draw.ellipse((cx - r, cy - r * 1.3, cx + r, cy + r * 1.3), fill=int(rng.integers(60, 170)), outline=0, width=3)
    # the blocks; one panel at the page's edge lets its bubbles out over the frame, into the margin
    edge = [i for i, b in enumerate(grown) if b[0] == mx or b[2] == w - mx]
    out = edge[int(rng.integers(len(edge)))] if edge else None
    covered = {j: [grown[top]] for j in range(len(boxes))} if top is not None else {}
    blocks: list[dict] = []
    for pi, box in enumerate(grown):
        taken = [] if pi == top else list(covered.get(pi, []))
        if pi == out:
            x0, y0, x1, y1 = box
            reach = int(mx * rng.uniform(0.5, 0.9))
            box = (x0 - reach, y0, x1, y1) if x0 == mx else (x0, y0, x1 + reach, y1)
        blocks.extend(_path_blocks(rng, layers, box, pi, borders[pi], taken))
    return [_rect(b) for b in grown], blocks


def borderless(rng, layers) -> tuple[list[Polygon], list[dict]]:
    """A grid whose panels mostly have no frame: art (a tone, line art) up to the panel's edges,
    paper between them. Read as the grid."""
    w, h = layers.page.size
    mx, my, g = _margins(rng, w, h)
    g = int(g * rng.uniform(1.0, 1.6))
    boxes = _grid(rng, (mx, my, w - mx, h - my), g)
    borders = [0 if rng.random() < 0.75 else int(rng.integers(2, 5)) for _ in boxes]
    for box, border in zip(boxes, borders, strict=True):
        _draw_panel(rng, layers, _rect(box), border, "dense")
    blocks: list[dict] = []
    for pi, box in enumerate(boxes):
        blocks.extend(_path_blocks(rng, layers, box, pi, borders[pi]))
    return [_rect(b) for b in boxes], blocks


def inset(rng, layers) -> tuple[list[Polygon], list[dict]]:
    """A grid with a small framed panel inset in a large one, with a white band around it: in the
    large panel's upper right corner, where its reading starts (the inset is read first), or in
    its lower left corner, where it ends (read last)."""
    w, h = layers.page.size
    mx, my, g = _margins(rng, w, h)
    boxes = _grid(rng, (mx, my, w - mx, h - my), g, rows=int(rng.choice([1, 2, 2, 3])))
    big = max(range(len(boxes)), key=lambda k: (boxes[k][2] - boxes[k][0]) * (boxes[k][3] - boxes[k][1]))
    x0, y0, x1, y1 = boxes[big]
    iw, ih = int((x1 - x0) * rng.uniform(0.35, 0.5)), int((y1 - y0) * rng.uniform(0.3, 0.45))
    pad = int(rng.integers(10, 24))
    first = bool(rng.random() < 0.5)  # upper right (read first) or lower left (read last)
    ibox = (x1 - pad - iw, y0 + pad, x1 - pad, y0 + pad + ih) if first else (x0 + pad, y1 - pad - ih, x0 + pad + iw, y1 - pad)
    borders = [int(rng.integers(2, 6)) for _ in boxes]
    for box, border in zip(boxes, borders, strict=True):
        _draw_panel(rng, layers, _rect(box), border)
    band = int(rng.integers(5, 10))
    _Twin(*layers.all()).rectangle((ibox[0] - band, ibox[1] - band, ibox[2] + band, ibox[3] + band), fill=255)
    iborder = int(rng.integers(2, 5))
    _draw_panel(rng, layers, _rect(ibox), iborder)
    order = list(range(len(boxes)))
    order.insert(order.index(big) + (0 if first else 1), -1)  # -1: the inset
    panels = [_rect(ibox if k == -1 else boxes[k]) for k in order]
    blocks: list[dict] = []
    for pi, k in enumerate(order):
        if k == -1:
            blocks.extend(_path_blocks(rng, layers, ibox, pi, iborder))
        else:
            taken = [(ibox[0] - band, ibox[1] - band, ibox[2] + band, ibox[3] + band)] if k == big else []
            blocks.extend(_path_blocks(rng, layers, boxes[k], pi, borders[k], taken))
    return panels, blocks


def _cross(top: tuple[Point, Point], side: tuple[Point, Point]) -> Point:
    """Where the line through `top` crosses the line through `side`."""
    (x1, y1), (x2, y2) = top
    (x3, y3), (x4, y4) = side
    d = (x1 - x2) * (y3 - y4) - (y1 - y2) * (x3 - x4)
    t = ((x1 - x3) * (y3 - y4) - (y1 - y3) * (x3 - x4)) / d
    return (x1 + t * (x2 - x1), y1 + t * (y2 - y1))


def slanted(rng, layers) -> tuple[list[Polygon], list[dict]]:
    """Tiers and panels parted by slanted gutters (each gutter a straight band at an angle): the
    panels are quadrilaterals whose boxes overlap. Read as the grid: tiers top to bottom, right to
    left in a tier."""
    w, h = layers.page.size
    mx, my, g = _margins(rng, w, h)
    tiers = int(rng.choice([2, 3, 3, 4]))
    # tier boundaries: lines from the left margin to the right one, tilted
    spans = _split(rng, my, h - 2 * my, tiers, 0)
    # each tilt at most 0.4 of the thinner tier beside it, so no tier narrows to a sliver
    cuts = []
    for t in range(1, tiers):
        most = 0.4 * min(spans[t - 1][1] - spans[t - 1][0], spans[t][1] - spans[t][0])
        y = spans[t][0]
        cuts.append((y, y + float(np.clip(rng.uniform(-0.07, 0.07) * h, -most, most))))
    lines = [((mx, my), (w - mx, my))]
    for yl, yr in cuts:
        lines.append(((mx, yl), (w - mx, yr)))
    lines.append(((mx, h - my), (w - mx, h - my)))
    polys: list[Polygon] = []
    for t in range(tiers):
        (a0, a1), (b0, b1) = lines[t], lines[t + 1]
        top = ((a0[0], a0[1] + (g / 2 if t else 0)), (a1[0], a1[1] + (g / 2 if t else 0)))
        bottom = ((b0[0], b0[1] - (g / 2 if t < tiers - 1 else 0)), (b1[0], b1[1] - (g / 2 if t < tiers - 1 else 0)))
        cols = int(rng.choice([1, 2, 2, 3]))
        xs = [x for x, _ in _split(rng, mx, w - 2 * mx, cols, 0)[1:]]
        sides = [((mx, 0.0), (mx, float(h)))]
        for x in xs:
            lean = rng.uniform(-0.06, 0.06) * w
            sides.append(((x + lean / 2, 0.0), (x - lean / 2, float(h))))
        sides.append(((w - mx, 0.0), (w - mx, float(h))))
        row = []
        for c in range(cols):
            left, right = sides[c], sides[c + 1]
            shift_l = g / 2 if c else 0
            shift_r = g / 2 if c < cols - 1 else 0
            left = ((left[0][0] + shift_l, left[0][1]), (left[1][0] + shift_l, left[1][1]))
            right = ((right[0][0] - shift_r, right[0][1]), (right[1][0] - shift_r, right[1][1]))
            row.append([_cross(top, left), _cross(top, right), _cross(bottom, right), _cross(bottom, left)])
        polys.extend(reversed(row))
    return polys, _classic_panels(rng, layers, polys)


def splash(rng, layers) -> tuple[list[Polygon], list[dict]]:
    """One panel over the page (bled to its edges, or framed), maybe with a small inset in the
    lower left corner; its bubbles laid along the reading path the artist composes, from the
    upper right down to the lower left, sometimes two side by side (the right one first). Read
    along that path, the inset last."""
    w, h = layers.page.size
    mx, my, _ = _margins(rng, w, h)
    bleed = bool(rng.random() < 0.5)
    box = (0, 0, w, h) if bleed else (mx, my, w - mx, h - my)
    border = 0 if bleed else int(rng.integers(2, 6))
    _draw_panel(rng, layers, _rect(box), border, "plain" if rng.random() < 0.5 else "dense")
    x0, y0, x1, y1 = box[0] + 20, box[1] + 20, box[2] - 20, box[3] - 20
    ibox = None
    if rng.random() < 0.4:
        iw, ih = int((x1 - x0) * rng.uniform(0.3, 0.4)), int((y1 - y0) * rng.uniform(0.18, 0.25))
        ibox = (x0 + 10, y1 - 10 - ih, x0 + 10 + iw, y1 - 10)
        _Twin(*layers.all()).rectangle((ibox[0] - 7, ibox[1] - 7, ibox[2] + 7, ibox[3] + 7), fill=255)
        _draw_panel(rng, layers, _rect(ibox), int(rng.integers(2, 5)))
    taken: list[Box] = [(ibox[0] - 7, ibox[1] - 7, ibox[2] + 7, ibox[3] + 7)] if ibox else []
    steps = int(rng.integers(3, 6))
    blocks: list[dict] = []
    for s in range(steps):
        t = s / (steps - 1)
        cy = y0 + (0.1 + 0.78 * t) * (y1 - y0)
        cx = x1 - (0.22 + 0.56 * t) * (x1 - x0)
        half = 0.42 * 0.78 * (y1 - y0) / (steps - 1)
        pair = rng.random() < 0.25
        for side in ((0.12, -0.02), (-0.22, -0.12)) if pair else ((0.14, -0.14),):
            # a window around the path's point (the right one of a pair first)
            win = (int(cx + side[1] * (x1 - x0)) - 60, int(cy - half), int(cx + side[0] * (x1 - x0)) + 60, int(cy + half))
            win = (max(x0, win[0]), max(y0, win[1]), min(x1, win[2]), min(y1, win[3]))
            kind = "bubble" if rng.random() < 0.85 else "text"
            made = draw_block(rng, layers, kind, 0, lambda bw, bh, win=win: _place(rng, win, bw, bh, 0, taken))
            if made is not None:
                blocks.append(made[0])
                taken.append(made[1])
    panels = [_rect(box)]
    if ibox is not None:
        panels.append(_rect(ibox))
        blocks.extend(_path_blocks(rng, layers, ibox, 1, 3))
    return panels, blocks


def across(rng, layers) -> tuple[list[Polygon], list[dict]]:
    """A grid with bubbles across the gutter between two panels of a tier (drawn over both
    frames): read between the two, after the right panel's other blocks, before the left's."""
    w, h = layers.page.size
    mx, my, g = _margins(rng, w, h)
    boxes = _grid(rng, (mx, my, w - mx, h - my), g)
    pairs = [(k, k + 1) for k in range(len(boxes) - 1) if boxes[k][1] == boxes[k + 1][1]]
    if not pairs:  # no tier of two panels: split the tallest tier's first panel in two
        k = max(range(len(boxes)), key=lambda i: boxes[i][2] - boxes[i][0])
        x0, y0, x1, y1 = boxes[k]
        mid = (x0 + x1) // 2
        boxes[k:k + 1] = [(mid + g // 2, y0, x1, y1), (x0, y0, mid - g // 2, y1)]
        pairs = [(k, k + 1)]
    chosen = [pairs[i] for i in sorted(rng.choice(len(pairs), size=min(len(pairs), int(rng.integers(1, 3))),
                                                  replace=False))]
    borders = [int(rng.integers(2, 6)) for _ in boxes]
    for box, border in zip(boxes, borders, strict=True):
        _draw_panel(rng, layers, _rect(box), border)
    straddlers: dict[int, dict] = {}
    taken: dict[int, list[Box]] = {k: [] for k in range(len(boxes))}
    for r, left in chosen:
        ry0, ry1 = boxes[r][1], boxes[r][3]
        gx = (boxes[r][0] + boxes[left][2]) / 2

        def spot(bw: int, bh: int, gx=gx, ry0=ry0, ry1=ry1):
            if ry1 - ry0 - 30 < bh:
                return None
            y = int(rng.integers(ry0 + 15, ry1 - 15 - bh + 1))
            return (int(gx - bw / 2), y, int(gx - bw / 2) + bw, y + bh)

        made = draw_block(rng, layers, "bubble", r, spot)
        if made is None:
            continue
        block, sb = made
        straddlers[r] = block
        band = (sb[0] - 8, ry0, sb[2] + 8, ry1)  # the rest of both panels keeps clear of its column
        taken[r].append(band)
        taken[left].append(band)
    blocks: list[dict] = []
    for pi, box in enumerate(boxes):
        blocks.extend(_path_blocks(rng, layers, box, pi, borders[pi], taken[pi]))
        if pi in straddlers:
            blocks.append(straddlers[pi])
    return [_rect(b) for b in boxes], blocks


def _text_on_art(rng, layers, place: Callable[[int, int], Box | None], pi: int) -> tuple[dict, Box] | None:
    """Free text drawn straight on the art, no halo, where the art leaves it legible: white on a
    ground dark all over, black on a ground light all over (a spot of both is tried again)."""
    text, lines, style, vertical, mask = _text_mask(rng, layers.page.width, "text")
    tw, th = mask.size
    for _ in range(6):
        spot = place(tw + 6, th + 6)
        if spot is None:
            return None
        ground = np.asarray(layers.page.crop(spot), dtype=np.float32)
        if np.percentile(ground, 90) < 130:
            colour = 255
        elif np.percentile(ground, 10) > 120:
            colour = 0
        else:
            continue
        tx, ty = spot[0] + 3, spot[1] + 3
        layers.text(colour, (tx, ty), mask)
        ix0, iy0, ix1, iy1 = mask.getbbox()
        text_box = (tx + ix0, ty + iy0, tx + ix1, ty + iy1)
        m = max(2, style.size // 8)
        return ({"kind": "text", "box": [text_box[0] - m, text_box[1] - m, text_box[2] + m, text_box[3] + m],
                 "text_box": list(text_box), "text": text, "lines": lines, "vertical": vertical, "panel": pi,
                 "shape": None, "font": style.face.name, "font_size": style.size}, spot)
    return None


def over_art(rng, layers) -> tuple[list[Polygon], list[dict]]:
    """A grid whose panels are covered with art (light tone, or dark: a night, a shadow), with
    text straight on it (narration, thoughts), no bubble and no halo, beside a bubble or two.
    Read as the grid, the text with the bubbles of its panel."""
    w, h = layers.page.size
    mx, my, g = _margins(rng, w, h)
    boxes = _grid(rng, (mx, my, w - mx, h - my), g)
    borders = [int(rng.integers(2, 6)) for _ in boxes]
    for box, border in zip(boxes, borders, strict=True):
        _draw_panel(rng, layers, _rect(box), border, "dark" if rng.random() < 0.35 else "dense")
    blocks: list[dict] = []
    for pi, box in enumerate(boxes):
        blocks.extend(_path_blocks(rng, layers, box, pi, borders[pi], on_art=int(rng.integers(1, 3))))
    return [_rect(b) for b in boxes], blocks


def spread(rng, layers) -> tuple[list[Polygon], list[dict]]:
    """Two pages side by side in one image (twice a page's width), the binding in the middle:
    the right page is read first, then the left; a panel spanning both pages (a tier across the
    spread, at its top or bottom) is read first, or last."""
    w, h = layers.page.size
    half = w // 2
    mx, my, g = _margins(rng, half, h)
    bind = int(half * rng.uniform(0.04, 0.08))  # each page's inner margin, beside the binding
    span = str(rng.choice(["none", "top", "bottom"]))
    sh = int(h * rng.uniform(0.25, 0.38)) if span != "none" else 0
    top, bottom = my + (sh + g if span == "top" else 0), h - my - (sh + g if span == "bottom" else 0)
    right = _grid(rng, (half + bind, top, w - mx, bottom), g, rows=int(rng.choice([1, 2, 3])) if sh else None, page_height=h)
    left = _grid(rng, (mx, top, half - bind, bottom), g, rows=int(rng.choice([1, 2, 3])) if sh else None, page_height=h)
    spanning = [(mx, my, w - mx, my + sh)] if span == "top" else [(mx, h - my - sh, w - mx, h - my)] if span == "bottom" else []
    boxes = (spanning if span == "top" else []) + right + left + (spanning if span == "bottom" else [])
    return [_rect(b) for b in boxes], _classic_panels(rng, layers, [_rect(b) for b in boxes])


def yonkoma(rng, layers) -> tuple[list[Polygon], list[dict]]:
    """4-koma: two strips of four panels of one size stacked, a wide gutter between the strips
    (3.5 to 6 times the gutter between its panels), a title above each strip. The right strip is read
    first, its title then its panels top to bottom; then the left one."""
    w, h = layers.page.size
    mx, my, g = _margins(rng, w, h)
    wide = int(g * rng.uniform(3.5, 6.0))  # strips stand apart: far wider than the gutters between panels
    title_h = int(h * rng.uniform(0.05, 0.08))
    strip_w = (w - 2 * mx - wide) // 2
    strips = [(w - mx - strip_w, w - mx), (mx, mx + strip_w)]
    polys, titles = [], []
    for sx0, sx1 in strips:
        titles.append((sx0, my, sx1, my + title_h))
        for a, b in _split(rng, my + title_h + g, h - 2 * my - title_h - g, 4, g):
            polys.append(_rect((sx0, a, sx1, b)))
    # equal panels: the split's random weights evened out
    for s in range(2):
        ys = [p[0][1] for p in polys[4 * s:4 * s + 4]]
        y_end = polys[4 * s + 3][2][1]
        step = (y_end - ys[0] + g) / 4
        for i in range(4):
            a, b = int(ys[0] + i * step), int(ys[0] + (i + 1) * step - g)
            x0, x1 = polys[4 * s + i][0][0], polys[4 * s + i][1][0]
            polys[4 * s + i] = _rect((x0, a, x1, b))
    borders = [int(rng.integers(2, 5)) for _ in polys]
    for poly, border in zip(polys, borders, strict=True):
        _draw_panel(rng, layers, poly, border)
    panels: list[Polygon] = []
    blocks: list[dict] = []
    for s in range(2):
        title = titles[s]
        panels.append(_rect(title))
        made = draw_block(rng, layers, "text", len(panels) - 1,
                          lambda bw, bh, t=title: _place(rng, t, bw, bh, 0, []) or _place(rng, (t[0], t[1], t[2], t[3] + g), bw, bh, 0, []))
        if made is not None:
            blocks.append(made[0])
        for i in range(4):
            panels.append(polys[4 * s + i])
            blocks.extend(_path_blocks(rng, layers, _bbox(polys[4 * s + i]), len(panels) - 1, borders[4 * s + i]))
    return panels, blocks


def dark(rng, layers) -> tuple[list[Polygon], list[dict]]:
    """A dark page: black paper, the gutters black, the panels' art dark, framed by thin white
    lines or unframed; white bubbles. Read as the grid."""
    w, h = layers.page.size
    mx, my, g = _margins(rng, w, h)
    boxes = _grid(rng, (mx, my, w - mx, h - my), g)
    colour = int(rng.integers(200, 256))
    frames = bool(rng.random() < 0.6)
    return [_rect(b) for b in boxes], _classic_panels(rng, layers, [_rect(b) for b in boxes], "dark", frames, colour)


KINDS: dict[str, Callable] = {"overlap": overlap, "borderless": borderless, "inset": inset, "slanted": slanted,
                              "splash": splash, "across": across, "over_art": over_art, "spread": spread,
                              "yonkoma": yonkoma, "dark": dark}
assert tuple(KINDS) == LAYOUTS


def draw_layout(rng: np.random.Generator, layers: _Layers, kind: str) -> tuple[list[Polygon], list[dict]]:
    """Draw a page of `kind` on `layers`: (panel outlines in reading order, blocks in reading order)."""
    polys, blocks = KINDS[kind](rng, layers)
    w, h = layers.page.size
    for b in blocks:  # boxes inside the page (a bubble let out into the margin stays on the page)
        b["box"] = [max(0, b["box"][0]), max(0, b["box"][1]), min(w, b["box"][2]), min(h, b["box"][3])]
    return polys, blocks

