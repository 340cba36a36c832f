"""Typesetting one block: the bubble's usable shape, the layout in it, the text layer.

The usable area is the bubble's shape, never the box corners outside it:
- the detector's segmentation polygon when there is one;
- for a bubble: the ellipse inscribed in the box, or the rectangle when the bubble's body fills
  the box (a rounded box), cut to the body found by the mask (so a jagged bubble's spikes and
  its outline are left alone);
- for other blocks (free text): the convex hull of the text mask, else the box.
The text is laid out inside that area shrunk by a padding (6 % of the short side plus the
outline width), drawn by app.render.draw, and clipped to the area: `spill` counts the pixels
the layout would have drawn outside it before that clip (0 when the layout is right).
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from app.render.draw import render_rgba
from app.render.fontfind import resolve_font
from app.render.glyphs import FontChain
from app.render.layout import Layout, layout_text, wants_cjk_face, wants_vertical
from app.render.masks import BlockMask, erode, polygon_region, window
from app.render.style import TextStyle

RECT_FILL = 0.86  # a body filling this much of its box is a rectangle (an ellipse fills 0.785)


@dataclass(eq=False)
class Shape:
    """The usable area of a block: (h, w) bool `area` at (x0, y0) on the page; `kind` says
    where it came from: polygon, ellipse, rectangle, hull or box."""

    x0: int
    y0: int
    area: np.ndarray
    kind: str

    def key(self) -> bytes:
        return bytes(np.packbits(self.area)) + f"{self.x0},{self.y0},{self.area.shape}".encode()


@dataclass(eq=False)
class TextLayer:
    """A typeset block: (h, w, 4) RGBA `rgba` at (x0, y0), its layout, and the pixels of the
    unclipped text that fell outside the shape (`spill`)."""

    x0: int
    y0: int
    rgba: np.ndarray
    layout: Layout
    spill: int


def bubble_shape(box, polygon, kind: str, mask: BlockMask | None, width: int, height: int) -> Shape:
    """The usable area of a block on a width x height page (see the module doc)."""
    x0, y0, x1, y1 = window(box, width, height)
    w, h = max(1, x1 - x0), max(1, y1 - y0)
    if polygon:
        return Shape(x0, y0, polygon_region(polygon, x0, y0, w, h), "polygon")
    body = mask.body if mask is not None and mask.body is not None and mask.body.shape == (h, w) else None
    if kind == "bubble":
        if body is not None and body.mean() >= RECT_FILL:
            area, name = np.ones((h, w), bool), "rectangle"
        else:
            canvas = np.zeros((h, w), np.uint8)
            cv2.ellipse(canvas, (w // 2, h // 2), (max(1, w // 2), max(1, h // 2)), 0, 0, 360, 1, -1)
            area, name = canvas.astype(bool), "ellipse"
        if body is not None:
            area = area & body
        return Shape(x0, y0, area, name)
    if mask is not None and mask.mask.shape == (h, w) and mask.mask.any():
        points = cv2.findNonZero(mask.mask.astype(np.uint8))
        hull = cv2.convexHull(points)
        canvas = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(canvas, hull, 1)
        return Shape(x0, y0, canvas.astype(bool), "hull")
    return Shape(x0, y0, np.ones((h, w), bool), "box")


def prepare_text(text: str, style: TextStyle) -> str:
    text = "\n".join(line.strip() for line in text.strip().split("\n"))
    return text.upper() if style.uppercase else text


def typeset(text: str, style: TextStyle, shape: Shape, lang: str | None = "en",
            target_lang: str | None = None) -> TextLayer | None:
    """The text layer of `text` in `shape`, or None for empty text."""
    text = prepare_text(text, style)
    if not text:
        return None
    vertical = wants_vertical(text, style.direction, target_lang)
    font = FontChain.for_font(resolve_font(style.font, cjk=wants_cjk_face(text, target_lang)))
    h, w = shape.area.shape
    pad = max(2, int(round(0.06 * min(h, w)))) + style.outline_width
    usable = erode(shape.area, pad)
    if not usable.any():
        usable = shape.area
    layout = layout_text(text, usable, font, style.min_size, style.max_size, style.line_spacing,
                         style.align, vertical, lang if style.hyphenate else None)
    rgba = render_rgba(layout, (w, h), style.color, style.outline_width, style.outline_color)
    inked = rgba[..., 3] > 0
    spill = int((inked & ~shape.area).sum())
    rgba[~shape.area] = 0
    return TextLayer(shape.x0, shape.y0, rgba, layout, spill)
