"""Text removal: inpainting engines behind one interface, and the page cleaner.

An engine fills the masked pixels of an RGB window:

    engine.inpaint(window (h, w, 3) uint8, mask (h, w) bool) -> (h, w, 3) uint8
    engine.context(w, h) -> pixels of surrounding page it wants around a block's box
    engine.name -> "opencv" | "lama"

Engines: `OpenCVInpainter` (cv2.inpaint, Telea; built in) and `app.render.lama.LamaInpainter`
(the LaMa ONNX model, through onnxruntime). `clean_page` runs one on every block: when the
pixels around a block's mask are uniform (a plain bubble), the mask is filled with their median
colour instead (exact and fast). Each block is cleaned from the original page, independently of
the others, so cleaning a subset of blocks gives the same pixels for those blocks as cleaning
all of them (the GUI's views and the exports agree). Only mask pixels are written, plus, for a
model engine, a `blend` margin around them inside the block's region; every other pixel of the
page is returned byte-identical.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from app.errors import Cancelled
from app.render.masks import BlockMask, dilate

UNIFORM_STD = 12.0  # grey levels: the surround of a mask this flat is "plain paper"
RING = 4  # pixels around a mask that decide whether it is uniform


class OpenCVInpainter:
    """cv2.inpaint (Alexandru Telea's fast marching method): no model, no download."""

    name = "opencv"

    def __init__(self, radius: int = 3):
        self.radius = radius

    def context(self, w: int, h: int) -> int:
        return self.radius + 6

    def inpaint(self, window: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if not mask.any():
            return window.copy()
        return cv2.inpaint(window, mask.astype(np.uint8) * 255, self.radius, cv2.INPAINT_TELEA)


def uniform_fill(image: np.ndarray, bm: BlockMask) -> np.ndarray | None:
    """The median colour (3,) of the ring around the block's mask when that ring is flat, else None.

    In a bubble the ring is taken inside its body: where the text comes near the outline the
    ring would reach the outline's ink, and the inpainting then drew that ink into the cleaned
    place (a grey smear where a glyph had been)."""
    x0, y0, x1, y1 = bm.page_box()
    ring = dilate(bm.mask, RING) & ~bm.mask & bm.region
    if bm.body is not None and int((ring & bm.body).sum()) >= 12:
        ring &= bm.body
    if ring.sum() < 12:
        return None
    pixels = image[y0:y1, x0:x1][ring].astype(np.float32)  # (n, 3)
    if float(pixels.std(axis=0).max()) > UNIFORM_STD:
        return None
    return np.median(pixels, axis=0).round().astype(np.uint8)


def _context_window(bm: BlockMask, margin: int, width: int, height: int) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = bm.page_box()
    return max(0, x0 - margin), max(0, y0 - margin), min(width, x1 + margin), min(height, y1 + margin)


@dataclass(eq=False)
class CleanPatch:
    """What cleaning one block writes: `pixels` (n, 3) uint8 at the True cells of `write`
    ((h, w) bool, the block's window at (x0, y0)); `method` is "fill" (uniform surround), the
    engine's name, or "none" (an empty mask)."""

    x0: int
    y0: int
    write: np.ndarray
    pixels: np.ndarray
    method: str

    def apply(self, page: np.ndarray) -> None:
        """Write the pixels into an RGB page (H, W, 3) in place."""
        if self.method == "none":
            return
        h, w = self.write.shape
        page[self.y0:self.y0 + h, self.x0:self.x0 + w][self.write] = self.pixels


def clean_block(image: np.ndarray, bm: BlockMask, engine, blend: int = 1) -> CleanPatch:
    """The patch that cleans one block of the RGB page `image` (not changed).

    The write mask is the block's mask, plus for a model engine a `blend` margin (inside the
    block's region) where the result is mixed half and half with the original.
    """
    x0, y0, x1, y1 = bm.page_box()
    if not bm.mask.any():
        return CleanPatch(x0, y0, bm.mask, np.zeros((0, 3), np.uint8), "none")
    colour = uniform_fill(image, bm)
    if colour is not None:
        return CleanPatch(x0, y0, bm.mask, np.broadcast_to(colour, (int(bm.mask.sum()), 3)).copy(), "fill")
    height, width = image.shape[:2]
    cx0, cy0, cx1, cy1 = _context_window(bm, engine.context(x1 - x0, y1 - y0), width, height)
    ctx = image[cy0:cy1, cx0:cx1]
    ctx_mask = np.zeros(ctx.shape[:2], bool)
    ctx_mask[y0 - cy0:y1 - cy0, x0 - cx0:x1 - cx0] = bm.mask
    result = engine.inpaint(np.ascontiguousarray(ctx), ctx_mask)
    out = result[y0 - cy0:y1 - cy0, x0 - cx0:x1 - cx0]
    write = bm.mask
    if blend > 0 and engine.name != "opencv":
        margin = dilate(bm.mask, blend) & ~bm.mask & bm.region
        original = image[y0:y1, x0:x1]
        mixed = out.copy()
        mixed[margin] = ((original[margin].astype(np.uint16) + out[margin]) // 2).astype(np.uint8)
        out, write = mixed, bm.mask | margin
    return CleanPatch(x0, y0, write, out[write], engine.name)


def clean_page(image: np.ndarray, masks: Sequence[BlockMask], engine, blend: int = 1,
               cancel: Callable[[], bool] | None = None) -> tuple[np.ndarray, list[str]]:
    """(cleaned copy of the RGB page (H, W, 3) uint8, method per block) for these block masks.

    Blocks are cleaned one by one from the original `image` and written in order (a later block
    wins where two masks overlap). Pixels outside the masks (and blend margins) are not touched.
    `cancel()` -> True raises Cancelled between blocks.
    """
    out = image.copy()
    methods = []
    for bm in masks:
        if cancel is not None and cancel():
            raise Cancelled()
        patch = clean_block(image, bm, engine, blend)
        methods.append(patch.method)
        patch.apply(out)
    return out, methods


def load_inpainter(name: str = "auto", device: str = "auto", model: str | None = None):
    """The engine called `name`: "opencv"; "lama" (the model store's LaMa, or the ONNX file
    `model`; ModelError with the download command when it is missing); "auto" = LaMa when it
    is installed, else OpenCV."""
    if name == "opencv":
        return OpenCVInpainter()
    if name not in ("auto", "lama"):
        from app.errors import UserError

        raise UserError(f"unknown inpainting engine {name!r}: use auto, opencv or lama")
    from app.render.lama import LAMA_MODEL, LamaInpainter

    if name == "auto" and model is None:
        from app.models.store import locate

        if locate(LAMA_MODEL) is None:
            return OpenCVInpainter()
    from app.models.store import resolve_model

    path = resolve_model(model or LAMA_MODEL)
    return LamaInpainter(path, device=device)
