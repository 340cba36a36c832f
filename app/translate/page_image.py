"""The page image that goes with a request to a model that takes images: the page scaled so its
longest side is at most `max_side` pixels, each segment's box drawn and labelled with the id the
request uses for it (the numbered-bubbles variant that did best in Lippmann et al., COLING
2025), as a JPEG data URL for an OpenAI-compatible `image_url` content part. No Qt."""
from __future__ import annotations

import base64
import io
from collections.abc import Sequence

from PIL import Image, ImageDraw, ImageFont

DEFAULT_MAX_SIDE = 1568  # what the main providers accept without scaling it down again
COLOURS = ((220, 20, 60), (0, 110, 220), (0, 150, 70), (200, 110, 0), (140, 40, 180))

Box = tuple[float, float, float, float]


def annotated(image: Image.Image, boxes: Sequence[tuple[str, Box | None]], max_side: int = DEFAULT_MAX_SIDE
              ) -> Image.Image:
    """An RGB copy of `image` scaled to `max_side`, each (label, box) drawn and labelled."""
    page = image.convert("RGB")
    scale = min(1.0, max_side / max(page.size)) if max(page.size) > 0 else 1.0
    if scale < 1.0:
        page = page.resize((max(1, round(page.width * scale)), max(1, round(page.height * scale))),
                           Image.Resampling.LANCZOS)
    draw = ImageDraw.Draw(page)
    line = max(2, round(max(page.size) / 500))
    size = max(12, round(max(page.size) / 55))
    font = ImageFont.load_default(size=size)
    for i, (label, box) in enumerate(boxes):
        if box is None:
            continue
        colour = COLOURS[i % len(COLOURS)]
        x0, y0, x1, y1 = (v * scale for v in box)
        draw.rectangle((x0, y0, x1, y1), outline=colour, width=line)
        tx0, ty0, tx1, ty1 = draw.textbbox((0, 0), label, font=font)
        w, h = tx1 - tx0 + 2 * line, ty1 - ty0 + 2 * line
        lx = min(max(0.0, x0), page.width - w)
        ly = y0 - h if y0 - h >= 0 else min(y0, page.height - h)
        draw.rectangle((lx, ly, lx + w, ly + h), fill=colour)
        draw.text((lx + line - tx0, ly + line - ty0), label, fill=(255, 255, 255), font=font)
    return page


def data_url(image: Image.Image, quality: int = 85) -> str:
    buf = io.BytesIO()
    image.save(buf, "JPEG", quality=quality, optimize=True)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def page_data_url(image: Image.Image, boxes: Sequence[tuple[str, Box | None]],
                  max_side: int = DEFAULT_MAX_SIDE) -> str:
    return data_url(annotated(image, boxes, max_side))
