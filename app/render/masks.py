"""Text masks: which pixels of a block are lettering (to be cleaned), and the bubble's body.

A block's mask is found in its window (the box, clipped to the page):
1. the region where the block may be cleaned: the segmentation polygon when the detector gave
   one, else the whole box;
2. "paper": the pixels on the ground's side of an Otsu threshold of the window's grey levels
   (the class made of wide areas rather than thin strokes, so dark-on-light and light-on-dark
   text both work);
3. for a bubble, the body: the paper component that covers most of the box's centre, with its
   holes filled; the text is what lies in those holes (the glyphs). For free text, or when no
   sizeable body is found (text on art), every non-paper pixel of the region counts;
4. dilated by `dilation` pixels, kept inside the body, so that the bubble's outline is never
   part of the mask.
A box the user drew (kind "manual") is cleaned like a bubble when a bubble's body is found in
it (the ink inside its paper, never the outline); else like free text. Free text takes whole
glyphs: an ink stroke the box cuts through is followed outside the box, up to a margin, so no
fragment of a glyph is left beside the cleaned box (`whole_glyphs`); strokes that run on past
that margin (art, panel lines) and specks (screentone dots) are kept to the box.
The user's brush strokes (`MaskStroke`, page coordinates) are applied on top, in order.

Arrays are numpy: grey pages (H, W) uint8; masks (h, w) bool in the window's coordinates.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from app.render.strokes import MaskStroke  # noqa: F401  (re-exported: the strokes apply_strokes takes)

Box = tuple[float, float, float, float]
DEFAULT_DILATION = 2
_MIN_CONTRAST = 24  # grey levels between paper and ink below which a window holds no text


@dataclass(eq=False)
class BlockMask:
    """A block's mask in its window: `x0, y0` the window's top-left on the page.

    mask:   (h, w) bool, the pixels to clean
    region: (h, w) bool, where cleaning may write (the polygon, or the whole box)
    body:   (h, w) bool or None, the bubble's inside (holes filled) when one was found
    """

    x0: int
    y0: int
    mask: np.ndarray
    region: np.ndarray
    body: np.ndarray | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return self.mask.shape  # type: ignore[return-value]

    def page_box(self) -> tuple[int, int, int, int]:
        h, w = self.mask.shape
        return self.x0, self.y0, self.x0 + w, self.y0 + h

    def signature(self) -> bytes:
        """Bytes that change when the mask changes (cache keys)."""
        return bytes(np.packbits(self.mask)) + f"{self.x0},{self.y0},{self.mask.shape}".encode()


def window(box: Box, width: int, height: int) -> tuple[int, int, int, int]:
    """Integer pixel window of `box` inside a width x height page (x0, y0 floor; x1, y1 ceil)."""
    x0, y0, x1, y1 = box
    x0, x1 = sorted((x0, x1))
    y0, y1 = sorted((y0, y1))
    return (max(0, int(np.floor(x0))), max(0, int(np.floor(y0))),
            min(width, int(np.ceil(x1))), min(height, int(np.ceil(y1))))


def polygon_region(polygon, x0: int, y0: int, w: int, h: int) -> np.ndarray:
    """(h, w) bool: the polygon (page coordinates) filled, in the window at (x0, y0)."""
    out = np.zeros((h, w), np.uint8)
    pts = np.round(np.asarray(polygon, np.float64) - (x0, y0)).astype(np.int32)
    cv2.fillPoly(out, [pts], 1)
    return out.astype(bool)


def central_ellipse(h: int, w: int, scale: float = 0.8) -> np.ndarray:
    """(h, w) bool: the ellipse inscribed in the window, shrunk by `scale`."""
    out = np.zeros((h, w), np.uint8)
    axes = (max(1, int(w * scale / 2)), max(1, int(h * scale / 2)))
    cv2.ellipse(out, (w // 2, h // 2), axes, 0, 0, 360, 1, -1)
    return out.astype(bool)


def _disk(radius: int) -> np.ndarray:
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))


def dilate(mask: np.ndarray, radius: int) -> np.ndarray:
    if radius <= 0:
        return mask.copy()
    return cv2.dilate(mask.astype(np.uint8), _disk(radius)).astype(bool)


def erode(mask: np.ndarray, radius: int) -> np.ndarray:
    if radius <= 0:
        return mask.copy()
    return cv2.erode(mask.astype(np.uint8), _disk(radius), borderType=cv2.BORDER_CONSTANT,
                     borderValue=0).astype(bool)


def fill_holes(component: np.ndarray) -> np.ndarray:
    """The component with every enclosed hole filled (its outer contours, filled)."""
    contours, _ = cv2.findContours(component.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    out = np.zeros(component.shape, np.uint8)
    cv2.drawContours(out, contours, -1, 1, thickness=cv2.FILLED)
    return out.astype(bool)


def _paper_split(crop: np.ndarray, region: np.ndarray):
    """(paper (h, w) bool, Otsu threshold, paper is the light side) of the window, or None
    when the window is flat.

    The ground is the class that survives an erosion best: lettering is made of thin strokes,
    the paper of a bubble (or a halo) of wide areas."""
    values = crop[region]
    if values.size < 16:
        return None
    t, _ = cv2.threshold(values.reshape(1, -1), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    light = crop > t
    lo, hi = values[values <= t], values[values > t]
    if lo.size == 0 or hi.size == 0 or float(np.median(hi)) - float(np.median(lo)) < _MIN_CONTRAST:
        return None

    def survival(cls: np.ndarray) -> float:
        cls = cls & region
        return float(erode(cls, 2).sum()) / max(1, int(cls.sum()))

    if survival(light) >= survival(~light):
        return light, float(t), True
    return ~light, float(t), False


GLYPH_PART = 0.45  # an ink stroke at least this share of a free-text box's short side across is a glyph
GLYPH_INSIDE = 0.3  # ... and this share of whose pixels lie in the box (art merely touching the box is not)
BUBBLE_LIKE = ("bubble", "manual")  # kinds whose mask is the ink inside a bubble's body, when one is found


def auto_mask(gray: np.ndarray, box: Box, polygon=None, dilation: int = DEFAULT_DILATION,
              kind: str = "bubble") -> BlockMask:
    """The text mask of one block found from the page's grey levels (see the module doc).

    For a bubble (or a drawn box around one) the text is what lies in the holes of the bubble's
    body (so art in the box's corners and the outline are never taken); for other blocks (free
    text, whose box hugs the lettering) every pixel on the ink side of the split counts, and the
    glyphs the box cuts are taken whole."""
    height, width = gray.shape
    x0, y0, x1, y1 = window(box, width, height)
    w, h = max(0, x1 - x0), max(0, y1 - y0)
    if w < 2 or h < 2:
        empty = np.zeros((h, w), bool)
        return BlockMask(x0, y0, empty, empty.copy())
    crop = gray[y0:y1, x0:x1]
    region = polygon_region(polygon, x0, y0, w, h) if polygon else np.ones((h, w), bool)
    split = _paper_split(crop, region)
    if split is None:
        return BlockMask(x0, y0, np.zeros((h, w), bool), region)
    paper, threshold, light_paper = split
    paper &= region
    body = _body(paper, region, central_ellipse(h, w)) if kind in BUBBLE_LIKE else None
    if body is not None:
        mask = dilate(body & ~paper, dilation) & body
        return BlockMask(x0, y0, mask, region, body)
    if polygon is None:
        return whole_glyphs(gray, (x0, y0, x1, y1), ~paper, threshold, light_paper, dilation)
    mask = dilate(~paper & region, dilation) & region
    return BlockMask(x0, y0, mask, region, None)


def whole_glyphs(gray: np.ndarray, win: tuple[int, int, int, int], ink: np.ndarray, threshold: float,
                 light_paper: bool, dilation: int) -> BlockMask:
    """Free text's mask: the ink of the box `win`, plus the rest of every glyph-sized ink stroke
    it cuts that ends within a margin (0.6 of the box's short side, at least 4 px) outside
    it. Glyph-sized: at least GLYPH_PART of the box's short side across (screentone dots and
    specks at the box's edge are not followed), with at least GLYPH_INSIDE of its pixels in the
    box (hatching that merely touches the box is not). Its region (where cleaning writes) is the
    box and those glyphs; its window is the box grown by that
    margin (clipped to the page)."""
    height, width = gray.shape
    x0, y0, x1, y1 = win
    short = min(x1 - x0, y1 - y0)
    m = max(4, int(round(0.6 * short)))
    ex0, ey0, ex1, ey1 = max(0, x0 - m), max(0, y0 - m), min(width, x1 + m), min(height, y1 + m)
    big = gray[ey0:ey1, ex0:ex1]
    big_ink = (big <= threshold) if light_paper else (big > threshold)
    inside = np.zeros(big.shape, bool)
    inside[y0 - ey0:y1 - ey0, x0 - ex0:x1 - ex0] = True
    big_ink[inside] = ink.ravel()
    count, labels, stats, _ = cv2.connectedComponentsWithStats(big_ink.astype(np.uint8), connectivity=8)
    share_inside = np.bincount(labels[inside], minlength=count) / np.maximum(1, stats[:, cv2.CC_STAT_AREA])
    keep = np.zeros(count, bool)
    bh, bw = big.shape
    for label in np.unique(labels[inside & big_ink]):
        if label == 0:
            continue
        left, top, cw, ch = stats[label, :4]
        at_edge = (left == 0 and ex0 > 0) or (top == 0 and ey0 > 0) or \
            (left + cw == bw and ex1 < width) or (top + ch == bh and ey1 < height)
        keep[label] = not at_edge and max(cw, ch) >= GLYPH_PART * short and share_inside[label] >= GLYPH_INSIDE
    outside = keep[labels] & ~inside
    grown = dilate(outside, dilation)
    mask = (dilate(big_ink & inside, dilation) & inside) | grown
    return BlockMask(ex0, ey0, mask, inside | grown, None)  # cleaning writes in the box and the followed glyphs


def _body(paper: np.ndarray, region: np.ndarray, centre: np.ndarray) -> np.ndarray | None:
    """The bubble's inside: a paper component over the centre, holes filled; None when it is
    small (no bubble here). Paper enclosed in the window (touching none of its sides) wins over
    paper that reaches the window's edge: in a box drawn loosely round a small bubble, the page's
    paper round the bubble covers more of the centre than the bubble's own (a one-glyph bubble is
    mostly glyph), and taking it would leave the glyph and put the lettering outside the bubble.
    The enclosed paper, holes filled, over most of the centre is the body when it is of a
    bubble's size; else the component over most of the centre, as for any box."""
    count, labels = cv2.connectedComponents(paper.astype(np.uint8), connectivity=4)
    if count <= 1:
        return None
    overlap = np.bincount(labels[centre], minlength=count)
    overlap[0] = 0
    if overlap.max() == 0:
        return None
    least = 0.15 * region.sum()
    edge = np.zeros(count, bool)
    edge[np.unique(np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]]))] = True
    edge[0] = True
    enclosed = ~edge[labels]
    if enclosed.any():
        joined = fill_holes(enclosed)
        n, parts = cv2.connectedComponents(joined.astype(np.uint8), connectivity=4)
        over = np.bincount(parts[centre], minlength=n)
        over[0] = 0
        if n > 1 and over.max() > 0:
            body = (parts == int(over.argmax())) & region
            if body.sum() >= least:
                return body
    best = int(overlap.argmax())
    filled = fill_holes(labels == best)
    return filled & region if filled.sum() >= least else None


def in_box(bm: BlockMask, box: Box, width: int, height: int) -> BlockMask:
    """The mask seen in the box's own window (free text's mask may reach past its box)."""
    x0, y0, x1, y1 = window(box, width, height)
    if (bm.x0, bm.y0, bm.x0 + bm.shape[1], bm.y0 + bm.shape[0]) == (x0, y0, x1, y1):
        return bm
    h, w = max(0, y1 - y0), max(0, x1 - x0)
    mask, region = np.zeros((h, w), bool), np.zeros((h, w), bool)
    sx0, sy0 = max(x0, bm.x0), max(y0, bm.y0)
    sx1, sy1 = min(x1, bm.x0 + bm.shape[1]), min(y1, bm.y0 + bm.shape[0])
    if sx1 > sx0 and sy1 > sy0:
        mask[sy0 - y0:sy1 - y0, sx0 - x0:sx1 - x0] = bm.mask[sy0 - bm.y0:sy1 - bm.y0, sx0 - bm.x0:sx1 - bm.x0]
        region[sy0 - y0:sy1 - y0, sx0 - x0:sx1 - x0] = bm.region[sy0 - bm.y0:sy1 - bm.y0, sx0 - bm.x0:sx1 - bm.x0]
    return BlockMask(x0, y0, mask, region, None)


def apply_strokes(block_mask: BlockMask, strokes) -> BlockMask:
    """The mask after the user's brush strokes (page coordinates), kept inside the region."""
    if not strokes:
        return block_mask
    mask = block_mask.mask.astype(np.uint8)
    for stroke in strokes:
        pts = np.round(np.asarray(stroke.points, np.float64) - (block_mask.x0, block_mask.y0)).astype(np.int32)
        value = 0 if stroke.erase else 1
        r = max(1, int(round(stroke.radius)))
        if len(pts) == 1:
            cv2.circle(mask, tuple(int(v) for v in pts[0]), r, value, -1)
        else:
            cv2.polylines(mask, [pts], False, value, thickness=2 * r, lineType=cv2.LINE_8)
            for p in (pts[0], pts[-1]):
                cv2.circle(mask, tuple(int(v) for v in p), r, value, -1)
    out = mask.astype(bool) & block_mask.region
    return BlockMask(block_mask.x0, block_mask.y0, out, block_mask.region, block_mask.body)


def block_mask(gray: np.ndarray, box: Box, polygon=None, strokes=(), dilation: int = DEFAULT_DILATION,
               kind: str = "bubble") -> BlockMask:
    """The mask the cleaner uses: found automatically, then edited by the user's strokes."""
    return apply_strokes(auto_mask(gray, box, polygon, dilation, kind), strokes)


def to_gray(image: np.ndarray) -> np.ndarray:
    """(H, W) uint8 grey of an (H, W) or (H, W, 3) RGB uint8 page."""
    if image.ndim == 2:
        return image
    return cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
