"""One page through the last stage: masks, cleaning, typesetting, compositing, with caches.

`RenderBlock` is the plain data a block needs here (app.core builds it from the document);
`PageRenderer` holds one decoded page and caches per block its mask, its clean patch and its
text layer, so that the GUI re-letters one bubble after an edit without cleaning the page again,
and the exports reuse what the preview computed. The result of `render` depends only on the
blocks given, never on what was cached before.

    renderer = PageRenderer(image, engine)
    result = renderer.render(blocks)     # RenderedPage: original, cleaned, final, layers

Sizes (`RenderBlock.page_sizes`, the same for every block of a page): "each" letters every
bubble at the largest size that fits it; "one" sets the page's bubbles to one size, the largest
that at least MOST (two thirds) of them take, and the bubbles that cannot take it at their own
largest; "few" does the same again for those, up to three sizes.

Place (`RenderBlock.place`): "in" letters a block in its own shape (the bubble, the box);
"beside" letters it as a small note next to its box (`beside_box`: below it, else above, else
beside it, inside the page), at NOTE_SCALE of the style's largest size with an outline, and
leaves the block itself as it is (the core passes clean=False): how a sound effect or a caption
gets "a small translation beside it". Notes take no part in the size harmonisation.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from PIL import Image

from app.errors import Cancelled
from app.render.draw import composite
from app.render.inpaint import CleanPatch, clean_block
from app.render.masks import BlockMask, block_mask, in_box, to_gray
from app.render.strokes import MaskStroke
from app.render.style import TextStyle
from app.render.typeset import Shape, TextLayer, bubble_shape, typeset

TEXT_MODES = ("translation", "source", "none")
SIZE_MODES = ("each", "one", "few")
MOST = 2 / 3  # "one" / "few": a size is the largest that at least this share of the bubbles take
LEVELS = {"each": 0, "one": 1, "few": 3}


@dataclass(frozen=True)
class RenderBlock:
    """A block as the renderer sees it. `text` is what to letter ("" = nothing); `clean` says
    whether its source text is removed; `strokes` are the user's mask edits."""

    id: str
    order: int
    kind: str
    box: tuple[float, float, float, float]
    polygon: tuple[tuple[float, float], ...] | None
    text: str
    clean: bool
    style: TextStyle
    strokes: tuple[MaskStroke, ...] = ()
    page_sizes: str = "each"  # the page's size harmonisation (SIZE_MODES), the same on all its blocks
    place: str = "in"  # PLACES: in its own shape, or a small note beside its box


PLACES = ("in", "beside")
NOTE_SCALE = 0.5  # a note's largest size, of the style's
NOTE_MIN_PX = 8  # ... never below this
NOTE_LINES = 3  # a note's box holds this many lines at its largest size
NOTE_GAP = 4  # px between the block and its note


def note_style(style: TextStyle) -> TextStyle:
    """The style of a note beside a block: smaller, with an outline so it reads over artwork."""
    top = max(NOTE_MIN_PX, int(round(NOTE_SCALE * style.max_size)))
    outline = max(style.outline_width, max(2, top // 8))
    return replace(style, max_size=top, min_size=min(style.min_size, top), outline_width=outline)


def beside_box(box, style: TextStyle, width: int, height: int) -> tuple[int, int, int, int]:
    """Where the note of a block at `box` goes on a width x height page (whole pixels): a band of
    NOTE_LINES lines as wide as the box (at least 8 note sizes), centred under it; above it
    when there is no room below, else left or right of it, else over the bottom of the box."""
    top = note_style(style)
    x0, y0, x1, y1 = (float(v) for v in box)
    nh = min(height, int(math.ceil(NOTE_LINES * top.max_size * top.line_spacing)) + 2 * top.outline_width + 8)
    nw = min(width, int(max(x1 - x0, 8 * top.max_size)))
    cx = (x0 + x1) / 2
    left = int(min(max(0, cx - nw / 2), width - nw))
    if y1 + NOTE_GAP + nh <= height:
        return left, int(y1 + NOTE_GAP), left + nw, int(y1 + NOTE_GAP) + nh
    if y0 - NOTE_GAP - nh >= 0:
        return left, int(y0 - NOTE_GAP) - nh, left + nw, int(y0 - NOTE_GAP)
    cy = int(min(max(0, (y0 + y1) / 2 - nh / 2), height - nh))
    side_w = min(nw, width)
    if x0 - NOTE_GAP - side_w >= 0:
        return int(x0 - NOTE_GAP) - side_w, cy, int(x0 - NOTE_GAP), cy + nh
    if x1 + NOTE_GAP + side_w <= width:
        return int(x1 + NOTE_GAP), cy, int(x1 + NOTE_GAP) + side_w, cy + nh
    return left, height - nh, left + nw, height


@dataclass(eq=False)
class RenderedPage:
    """RGB pages (H, W, 3) uint8: the original, the cleaned page (blocks with clean=True), and
    the final page (cleaned + lettered). `layers`: (block, TextLayer) in reading order;
    `methods`: block id -> how it was cleaned (fill, opencv, lama, none)."""

    original: np.ndarray
    cleaned: np.ndarray
    final: np.ndarray
    layers: list[tuple[RenderBlock, TextLayer]]
    methods: dict[str, str]

    def below_min(self) -> list[RenderBlock]:
        """The lettered blocks set below their style's minimum size (or not fitting at all), in
        reading order."""
        return [b for b, layer in self.layers if not layer.layout.fits]


class PageRenderer:
    """Masks, clean patches and text layers of one page, computed on demand and cached."""

    def __init__(self, image, engine, lang: str | None = "en", target_lang: str | None = None):
        if isinstance(image, Image.Image):
            image = np.asarray(image.convert("RGB"))
        self.original = np.ascontiguousarray(image)
        self.gray = to_gray(self.original)
        self.engine = engine
        self.lang = lang
        self.target_lang = target_lang
        self._masks: dict[tuple, BlockMask] = {}
        self._patches: dict[tuple, CleanPatch] = {}
        self._shapes: dict[tuple, Shape] = {}
        self._layers: dict[tuple, TextLayer | None] = {}
        self._cleaned: tuple[tuple, np.ndarray] | None = None  # the last cleaned page and its key

    @property
    def size(self) -> tuple[int, int]:
        return self.original.shape[1], self.original.shape[0]

    # --- per block ------------------------------------------------------------------------
    @staticmethod
    def _mask_key(b: RenderBlock) -> tuple:
        return (b.box, b.polygon, b.strokes, b.kind)

    def mask(self, b: RenderBlock) -> BlockMask:
        key = self._mask_key(b)
        hit = self._masks.get(key)
        if hit is None:
            hit = self._masks[key] = block_mask(self.gray, b.box, b.polygon, b.strokes, kind=b.kind)
        return hit

    def patch(self, b: RenderBlock) -> CleanPatch:
        key = (self._mask_key(b), self.engine.name)
        hit = self._patches.get(key)
        if hit is None:
            hit = self._patches[key] = clean_block(self.original, self.mask(b), self.engine)
        return hit

    def has_patch(self, b: RenderBlock) -> bool:
        """True when the block's clean patch is cached (rendering it again is cheap)."""
        return (self._mask_key(b), self.engine.name) in self._patches

    def shape(self, b: RenderBlock) -> Shape:
        key = (self._mask_key(b), b.kind, b.place, b.style if b.place == "beside" else None)
        hit = self._shapes.get(key)
        if hit is None and b.place == "beside":
            x0, y0, x1, y1 = beside_box(b.box, b.style, *self.size)
            hit = self._shapes[key] = Shape(x0, y0, np.ones((max(1, y1 - y0), max(1, x1 - x0)), bool), "note")
        if hit is None:
            width, height = self.size
            mask = self.mask(b)
            kind = "bubble" if b.kind == "manual" and mask.body is not None else b.kind  # a box drawn round a bubble
            hit = self._shapes[key] = bubble_shape(b.box, b.polygon, kind, in_box(mask, b.box, width, height),
                                                   width, height)
        return hit

    def layer(self, b: RenderBlock) -> TextLayer | None:
        key = (self._mask_key(b), b.kind, b.text, b.style, b.place)
        if key not in self._layers:
            style = note_style(b.style) if b.place == "beside" else b.style
            self._layers[key] = typeset(b.text, style, self.shape(b), self.lang, self.target_lang) \
                if b.text.strip() else None
        return self._layers[key]

    # --- the page ---------------------------------------------------------------------------
    def cleaned(self, blocks: Sequence[RenderBlock], cancel: Callable[[], bool] | None = None) -> np.ndarray:
        """The page with every block of `blocks` that has clean=True cleaned (read-only: the
        last one is kept, so that re-lettering after an edit does not clean the page again)."""
        key = (tuple(self._mask_key(b) for b in blocks if b.clean), self.engine.name)
        if self._cleaned is not None and self._cleaned[0] == key:
            return self._cleaned[1]
        out = self.original.copy()
        for b in blocks:
            if cancel is not None and cancel():
                raise Cancelled()
            if b.clean:
                self.patch(b).apply(out)
        out.flags.writeable = False
        self._cleaned = (key, out)
        return out

    def harmonise(self, blocks: Sequence[RenderBlock]) -> list[RenderBlock]:
        """The blocks with their sizes capped as their page's size mode says (module doc); blocks
        unchanged under "each". A block that does not fit at its minimum keeps its own layout."""
        blocks = list(blocks)
        mode = blocks[0].page_sizes if blocks else "each"
        levels = LEVELS.get(mode, 0)
        if not levels:
            return blocks
        natural = {}
        for b in blocks:
            if b.place == "beside":
                continue  # a note keeps its own small size
            layer = self.layer(b)
            if layer is not None and layer.layout.fits:
                natural[b.id] = layer.layout.size
        cap: dict[str, int] = {}
        left = dict(natural)
        for _ in range(levels):
            if len(left) < 2:
                break
            ranked = sorted(left.values(), reverse=True)
            size = ranked[max(0, math.ceil(MOST * len(ranked)) - 1)]
            for bid in [k for k, v in left.items() if v >= size]:
                cap[bid] = size
                del left[bid]
        out = []
        for b in blocks:
            size = cap.get(b.id)
            if size is not None and size < natural[b.id]:
                b = replace(b, style=replace(b.style, max_size=size, min_size=min(b.style.min_size, size)))
            out.append(b)
        return out

    def patched(self, blocks: Sequence[RenderBlock]) -> np.ndarray:
        """(H, W) bool: the pixels that cleaning `blocks` writes (the PSD's patches layer)."""
        out = np.zeros(self.original.shape[:2], bool)
        for b in blocks:
            if b.clean:
                patch = self.patch(b)
                if patch.method != "none":
                    h, w = patch.write.shape
                    out[patch.y0:patch.y0 + h, patch.x0:patch.x0 + w] |= patch.write
        return out

    def render(self, blocks: Sequence[RenderBlock], cancel: Callable[[], bool] | None = None) -> RenderedPage:
        """The page with `blocks` cleaned and lettered (sizes harmonised as the page's mode says)."""
        blocks = self.harmonise(blocks)
        cleaned = self.cleaned(blocks, cancel)
        final = cleaned.copy()
        layers = []
        for b in blocks:
            if cancel is not None and cancel():
                raise Cancelled()
            layer = self.layer(b)
            if layer is not None:
                composite(final, layer.rgba, layer.x0, layer.y0)
                layers.append((b, layer))
        methods = {b.id: self.patch(b).method for b in blocks if b.clean}
        return RenderedPage(self.original, cleaned, final, layers, methods)
