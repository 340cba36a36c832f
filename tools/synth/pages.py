"""Synthetic manga pages with ground truth.

`generate_page(seed, index)` draws one page: panels with borders and artwork, speech bubbles
holding vertical or horizontal Japanese text, and free text outside bubbles. It returns the page
("L" image) and its truth dict:

    {"version": 1, "seed", "index", "width", "height",
     "panels": [[x0, y0, x1, y1], ...],                 # in reading order
     "blocks": [{"id": "b1", "order": 1, "kind": "bubble" | "text",
                 "box": [x0, y0, x1, y1],                # bubble body, or free text ink (+ margin)
                 "text_box": [x0, y0, x1, y1],           # the text's ink
                 "text": "...", "lines": ["...", ...],   # columns right to left / lines top down
                 "vertical": bool, "panel": k, "shape": "ellipse" | "rounded" | "jagged" | None,
                 "font": "NotoSansCJK-Regular", "font_size": px}, ...]}   # blocks in reading order

Boxes are pixel edges: x0, y0 inclusive, x1, y1 exclusive (what `Image.crop` takes).
Reading order is manga order: panels by row top to bottom, right to left within a row; inside a
panel, the block furthest right first (blocks in about the same column: top first).
The page depends only on (seed, index, width, height, noise): pages can be drawn in parallel.

`generate_page_layers` draws the same page (pixel for pixel) and also returns the page without
its text (the clean truth for text removal: bubbles, art, the white halo printed under free
text, and the same wear; no glyphs) and the text mask ("L", 255 where a glyph changed the page,
antialiased edges in between).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from tools.synth.art import panel_art
from tools.synth.bubbles import SHAPES, bubble_size, draw_bubble
from tools.synth.fonts import find_faces
from tools.synth.text import TextStyle, random_text, render, split_lines

Box = tuple[int, int, int, int]
DEFAULT_SIZE = (1024, 1448)


def page_rng(seed: int, index: int, stream: int = 0) -> np.random.Generator:
    """The random stream for page `index` of run `seed` (stream 0 draws the page)."""
    return np.random.default_rng([seed, index, stream])


def _split(rng: np.random.Generator, start: int, length: int, n: int, gutter: int) -> list[tuple[int, int]]:
    """Cut [start, start + length) into n spans separated by `gutter` pixels: [(a, b), ...]."""
    weights = rng.dirichlet(np.full(n, 4.0))
    usable = length - gutter * (n - 1)
    spans, pos = [], float(start)
    for w in weights:
        a, b = int(round(pos)), int(round(pos + w * usable))
        spans.append((a, b))
        pos += w * usable + gutter
    return spans


def panel_layout(rng: np.random.Generator, width: int, height: int) -> list[Box]:
    """Panel boxes in manga reading order (rows top to bottom, right to left in a row)."""
    mx, my = int(width * rng.uniform(0.03, 0.06)), int(height * rng.uniform(0.03, 0.05))
    gutter = int(width * rng.uniform(0.01, 0.025))
    rows = int(rng.choice([1, 2, 3, 3, 4, 4]))
    panels: list[Box] = []
    for y0, y1 in _split(rng, my, height - 2 * my, rows, gutter):
        cols = int(rng.choice([1, 2, 2, 3])) if (y1 - y0) > 0.15 * height else int(rng.choice([1, 2]))
        spans = _split(rng, mx, width - 2 * mx, cols, gutter)
        panels.extend((x0, y0, x1, y1) for x0, x1 in reversed(spans))
    return panels


def _overlaps(box: Box, others: list[Box], margin: int) -> bool:
    x0, y0, x1, y1 = box
    return any(x0 < b[2] + margin and b[0] < x1 + margin and y0 < b[3] + margin and b[1] < y1 + margin
               for b in others)


def _place(rng: np.random.Generator, panel: Box, w: int, h: int, inset: int, taken: list[Box]) -> Box | None:
    """A free spot of size (w, h) inside `panel`, clear of `taken`, or None."""
    x0, y0, x1, y1 = panel
    room_x, room_y = (x1 - x0 - 2 * inset) - w, (y1 - y0 - 2 * inset) - h
    if room_x < 0 or room_y < 0:
        return None
    for _ in range(25):
        bx = x0 + inset + int(rng.integers(0, room_x + 1))
        by = y0 + inset + int(rng.integers(0, room_y + 1))
        box = (bx, by, bx + w, by + h)
        if not _overlaps(box, taken, margin=6):
            return box
    return None


def _text_mask(rng: np.random.Generator, page_width: int, kind: str):
    """(text, lines, style, vertical, ink mask) for one block."""
    faces = find_faces()
    vertical = bool(rng.random() < (0.75 if kind == "bubble" else 0.55))
    text = random_text(rng, max_len=20)
    size = int(round(page_width / 1024 * rng.uniform(17, 38 if kind == "bubble" else 44)))
    per_line = int(rng.integers(3, 9)) if vertical else int(rng.integers(4, 12))
    lines = split_lines(text, 4, per_line)
    style = TextStyle(faces[int(rng.integers(len(faces)))], size,
                      advance=float(rng.uniform(1.0, 1.08)), line_gap=float(rng.uniform(0.2, 0.55)))
    return text, lines, style, vertical, render(lines, style, vertical)


def _rtl_order(boxes: list[Box]) -> list[int]:
    """Indices of `boxes` in manga order: furthest right first; same column (x-overlap): top first."""
    left = list(range(len(boxes)))
    order = []
    while left:
        first = max(left, key=lambda i: (boxes[i][2], -boxes[i][1]))
        fx0, _, fx1, _ = boxes[first]
        same_col = [i for i in left if min(boxes[i][2], fx1) - max(boxes[i][0], fx0)
                    > 0.5 * min(fx1 - fx0, boxes[i][2] - boxes[i][0])]
        pick = min(same_col, key=lambda i: (boxes[i][1], -boxes[i][2]))
        order.append(pick)
        left.remove(pick)
    return order


class _Twin:
    """ImageDraw calls made on the page and repeated on the clean layer (when it is kept)."""

    def __init__(self, *images: Image.Image):
        self._draws = [ImageDraw.Draw(im) for im in images]

    def __getattr__(self, name: str):
        def call(*args, **kwargs):
            for draw in self._draws:
                getattr(draw, name)(*args, **kwargs)
        return call


class _Layers:
    """The page being drawn, plus (when `keep`) the same page without text and the text ink."""

    def __init__(self, page: Image.Image, keep: bool):
        self.page = page
        self.clean = page.copy() if keep else None
        self.ink = Image.new("L", page.size, 0) if keep else None

    def all(self) -> list[Image.Image]:
        return [self.page] if self.clean is None else [self.page, self.clean]

    def paste(self, value, xy, mask) -> None:
        """Paste on the page and the clean layer alike (art, halos)."""
        for im in self.all():
            im.paste(value, xy, mask)

    def text(self, value, xy, mask) -> None:
        """Glyphs: on the page only; recorded in the ink layer."""
        self.page.paste(value, xy, mask)
        if self.ink is not None:
            self.ink.paste(255, xy, mask)


def draw_block(rng: np.random.Generator, layers: _Layers, kind: str, pi: int,
               place: Callable[[int, int], Box | None]) -> tuple[dict, Box] | None:
    """Draw one block of `kind` ("bubble": a bubble with its text; "text": free text with a white
    halo, sometimes none on plain paper) at the spot `place(w, h)` finds for its size; (truth
    block, spot taken), or None when no spot was found."""
    page = layers.page
    draw = _Twin(*layers.all())
    text, lines, style, vertical, mask = _text_mask(rng, page.width, kind)
    tw, th = mask.size
    shape = None
    if kind == "bubble":
        shape = str(rng.choice(SHAPES))
        bw, bh = bubble_size(shape, tw, th, pad=style.size * rng.uniform(0.25, 0.7))
        spot = place(bw, bh)
        if spot is None:
            return None
        draw_bubble(rng, draw, shape, (spot[0], spot[1], spot[2] - 1, spot[3] - 1))
        tx, ty = spot[0] + (bw - tw) // 2, spot[1] + (bh - th) // 2
        layers.text(0, (tx, ty), mask)
        box = spot
    else:
        halo = int(rng.integers(2, 5))
        spot = place(tw + 2 * halo + 6, th + 2 * halo + 6)
        if spot is None:
            return None
        tx, ty = spot[0] + halo + 3, spot[1] + halo + 3
        # Print keeps free text readable: a white halo, except sometimes on plain paper.
        ground = np.asarray(page.crop(spot), dtype=np.float32)
        plain = ground.mean() > 235 and ground.std() < 25
        if not (plain and rng.random() < 0.5):
            padded = Image.new("L", (tw + 2 * halo, th + 2 * halo), 0)
            padded.paste(mask, (halo, halo))
            layers.paste(255, (tx - halo, ty - halo), padded.filter(ImageFilter.MaxFilter(2 * halo + 1)))
        layers.text(0, (tx, ty), mask)
        box = None
    ix0, iy0, ix1, iy1 = mask.getbbox()
    text_box = (tx + ix0, ty + iy0, tx + ix1, ty + iy1)
    if box is None:
        m = max(2, style.size // 8)
        box = (text_box[0] - m, text_box[1] - m, text_box[2] + m, text_box[3] + m)
    return ({"kind": kind, "box": list(box), "text_box": list(text_box), "text": text,
             "lines": lines, "vertical": vertical, "panel": pi, "shape": shape,
             "font": style.face.name, "font_size": style.size}, spot)


def _add_blocks(rng: np.random.Generator, layers: _Layers, panel: Box, pi: int, border: int,
                taken: list[Box] | None = None) -> list[dict]:
    """The blocks of one panel (a few bubbles, maybe free text) in manga order; `taken`: spots
    to keep clear (they are added to as blocks are placed)."""
    page = layers.page
    area = (panel[2] - panel[0]) * (panel[3] - panel[1]) / (page.width * page.height)
    n_bubbles = int(rng.integers(0 if area < 0.05 else 1, 3 + int(area * 10)))
    n_free = int(rng.random() < 0.35) + int(rng.random() < 0.1)
    kinds = ["bubble"] * min(n_bubbles, 4) + ["text"] * n_free
    blocks: list[dict] = []
    taken = [] if taken is None else taken
    for kind in kinds:
        made = draw_block(rng, layers, kind, pi, lambda w, h: _place(rng, panel, w, h, border + 4, taken))
        if made is None:
            continue
        block, spot = made
        taken.append(spot)
        blocks.append(block)
    return [blocks[i] for i in _rtl_order([tuple(b["box"]) for b in blocks])]


def _degrade(rng: np.random.Generator, pages: list[Image.Image]) -> list[Image.Image]:
    """Scanner-like wear: maybe a slight blur, a paper tone, and sensor noise; the same wear (one
    draw from `rng`) on each of `pages`."""
    if rng.random() < 0.3:
        radius = float(rng.uniform(0.4, 0.9))
        pages = [p.filter(ImageFilter.GaussianBlur(radius)) for p in pages]
    arrs = [np.asarray(p, dtype=np.float32) for p in pages]
    if rng.random() < 0.4:
        paper, ink = rng.uniform(225, 255), rng.uniform(0, 35)
        arrs = [ink + a * ((paper - ink) / 255.0) for a in arrs]
    if rng.random() < 0.5:
        noise = rng.normal(0, rng.uniform(1.5, 5.0), size=arrs[0].shape).astype(np.float32)
        arrs = [a + noise for a in arrs]
    return [Image.fromarray(np.clip(a + 0.5, 0, 255).astype(np.uint8), "L") for a in arrs]


def generate_page(seed: int, index: int = 0, size: tuple[int, int] = DEFAULT_SIZE,
                  noise: bool = True, layout: str | None = None) -> tuple[Image.Image, dict]:
    """Draw page `index` of run `seed`: ("L" image of `size` (width, height), truth dict).
    `layout`: None for the classic grid page, else a kind of tools.synth.layouts.LAYOUTS (a
    two-page spread is twice `size`'s width) or "mixed" (one kind per page, in turn)."""
    page, _clean, _mask, truth = _generate(seed, index, size, noise, keep_layers=False, layout=layout)
    return page, truth


def generate_page_layers(seed: int, index: int = 0, size: tuple[int, int] = DEFAULT_SIZE,
                         noise: bool = True, layout: str | None = None) -> tuple[Image.Image, Image.Image, Image.Image, dict]:
    """(page, clean, text mask, truth): the page of `generate_page` (the same pixels), the page
    without its glyphs (same art, bubbles, halos and wear) and the text mask ("L": 255 where a
    glyph changed the page before wear, antialiased edges in between, 0 elsewhere)."""
    return _generate(seed, index, size, noise, keep_layers=True, layout=layout)


def _generate(seed: int, index: int, size: tuple[int, int], noise: bool, keep_layers: bool,
              layout: str | None = None):
    rng = page_rng(seed, index)
    kind = None
    polygons = None
    if layout is None:
        width, height = size
        layers = _Layers(Image.new("L", (width, height), 255), keep_layers)
        draw = _Twin(*layers.all())
        panels = panel_layout(rng, width, height)
        blocks: list[dict] = []
        for pi, panel in enumerate(panels):
            x0, y0, x1, y1 = panel
            layers.paste(panel_art(rng, x1 - x0, y1 - y0), (x0, y0), None)
            border = int(rng.integers(2, 6))
            draw.rectangle((x0, y0, x1 - 1, y1 - 1), outline=0, width=border)
            blocks.extend(_add_blocks(rng, layers, panel, pi, border))
    else:
        from tools.synth import layouts

        kind = layouts.layout_for(layout, index)
        width, height = layouts.page_size(kind, size)
        layers = _Layers(Image.new("L", (width, height), layouts.background(kind)), keep_layers)
        polygons, blocks = layouts.draw_layout(rng, layers, kind)
        panels = [layouts._bbox(p) for p in polygons]
    for i, block in enumerate(blocks):
        block["id"] = f"b{i + 1}"
        block["order"] = i + 1
    mask = None
    if keep_layers:  # glyphs drawn over later by a neighbour's tail are not text any more
        changed = np.asarray(layers.page) != np.asarray(layers.clean)
        mask = Image.fromarray(np.where(changed, np.asarray(layers.ink), 0).astype(np.uint8), "L")
    images = layers.all()
    if noise:
        images = _degrade(rng, images)
    page, clean = images[0], (images[1] if keep_layers else None)
    blocks = [{"id": b.pop("id"), "order": b.pop("order"), **b} for b in blocks]
    truth = {"version": 1, "seed": seed, "index": index, "width": width, "height": height,
             "panels": [list(p) for p in panels], "blocks": blocks}
    if kind is not None:
        truth["layout"] = kind
        truth["panel_polygons"] = [[[round(x, 1), round(y, 1)] for x, y in p] for p in polygons]
    return page, clean, mask, truth
