"""The renderer: a Layout drawn into an RGBA patch with Pillow (FreeType + raqm), and patches
composited onto a page. The GUI preview and every export use these functions, so they are the
same pixels.

Fill and outline are drawn as two coverage masks and combined (fill over outline), so the
patch's colours stay exact at antialiased edges; `composite` blends a patch over the page only
where the patch's alpha is non-zero.
"""
from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from app.render.glyphs import pieces
from app.render.layout import VERTICAL_FEATURES, Layout, font_at


def hex_rgb(color: str) -> tuple[int, int, int]:
    c = color.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def _coverage(layout: Layout, size: tuple[int, int], offset: tuple[int, int], stroke: int) -> np.ndarray:
    """(h, w) uint8 coverage of the layout's glyphs (with a stroke of `stroke` px) in a w x h canvas
    whose origin is `offset` in the layout's coordinates. Each line is drawn piece by piece, each
    piece with the face that has its characters (app.render.glyphs)."""
    canvas = Image.new("L", size, 0)
    draw = ImageDraw.Draw(canvas)
    ox, oy = offset
    for kind, xy, text, font, direction in draw_calls(layout):
        x, y = xy
        if direction == "ttb":
            draw.text((x - ox, y - oy), text, font=font, fill=255, anchor="mt", direction="ttb",
                      features=list(VERTICAL_FEATURES), stroke_width=stroke, stroke_fill=255)
        else:
            draw.text((x - ox, y - oy), text, font=font, fill=255, anchor=kind, stroke_width=stroke, stroke_fill=255)
    return np.asarray(canvas)


def draw_calls(layout: Layout):
    """(anchor, (x, y), text, font, direction) of every piece of the layout, in layout coordinates:
    what `_coverage` draws (tests check the faces and glyphs through it)."""
    size = layout.size
    chain = layout.chain
    for line in layout.lines:
        if not line.text:
            continue
        x, y = line.x, line.y
        for piece in pieces(line.text, chain, layout.vertical):
            font = font_at(piece.font, size)
            if layout.vertical and piece.tcy:
                width = font.getlength(piece.text)
                small = font if width <= size else font_at(piece.font, max(1, int(size * size / width)))
                yield "mm", (x, y + size / 2), piece.text, small, "ltr"
                y += size
            elif layout.vertical:
                yield "mt", (x, y), piece.text, font, "ttb"
                y += font.getlength(piece.text, direction="ttb", features=list(VERTICAL_FEATURES))
            else:
                yield "ls", (x, y), piece.text, font, "ltr"
                x += font.getlength(piece.text)


def render_rgba(layout: Layout, size: tuple[int, int], color: str, outline_width: int = 0,
                outline_color: str = "#ffffff", offset: tuple[int, int] = (0, 0)) -> np.ndarray:
    """(h, w, 4) uint8 straight-alpha RGBA of the layout in a canvas of `size` (w, h)."""
    fill = _coverage(layout, size, offset, 0).astype(np.float32) / 255.0
    rgb_fill = np.asarray(hex_rgb(color), np.float32)
    if outline_width > 0:
        stroke = _coverage(layout, size, offset, outline_width).astype(np.float32) / 255.0
        stroke = np.maximum(stroke, fill)
        rgb_line = np.asarray(hex_rgb(outline_color), np.float32)
        alpha = fill + stroke * (1.0 - fill)
        with np.errstate(invalid="ignore", divide="ignore"):
            weight = np.where(alpha > 0, fill / np.maximum(alpha, 1e-6), 0.0)[..., None]
        rgb = rgb_fill * weight + rgb_line * (1.0 - weight)
    else:
        alpha = fill
        rgb = np.broadcast_to(rgb_fill, fill.shape + (3,))
    out = np.empty(fill.shape + (4,), np.uint8)
    out[..., :3] = np.clip(rgb + 0.5, 0, 255).astype(np.uint8)
    out[..., 3] = np.clip(alpha * 255.0 + 0.5, 0, 255).astype(np.uint8)
    out[out[..., 3] == 0, :3] = 0
    return out


def composite(page: np.ndarray, rgba: np.ndarray, x0: int, y0: int) -> None:
    """Blend an RGBA patch over an RGB page (H, W, 3) uint8 in place, at (x0, y0); clipped to the
    page. Pixels where the patch is fully transparent are not touched."""
    h, w = rgba.shape[:2]
    H, W = page.shape[:2]
    ax0, ay0, ax1, ay1 = max(0, x0), max(0, y0), min(W, x0 + w), min(H, y0 + h)
    if ax1 <= ax0 or ay1 <= ay0:
        return
    patch = rgba[ay0 - y0:ay1 - y0, ax0 - x0:ax1 - x0]
    alpha = patch[..., 3]
    touched = alpha > 0
    if not touched.any():
        return
    region = page[ay0:ay1, ax0:ax1]
    a = alpha[touched].astype(np.uint32)[:, None]
    under = region[touched].astype(np.uint32)
    over = patch[..., :3][touched].astype(np.uint32)
    region[touched] = ((over * a + under * (255 - a) + 127) // 255).astype(np.uint8)
