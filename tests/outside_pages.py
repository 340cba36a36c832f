"""A small page with text in and outside bubbles, drawn here (tests of text outside bubbles)."""
from __future__ import annotations

from PIL import Image, ImageDraw

SIZE = (600, 500)
BUBBLE = (40, 40, 260, 240)  # an ellipse
DIALOGUE = (110, 80, 190, 200)  # the text inside it: two columns of small glyphs
CAPTION = (330, 40, 410, 160)  # small glyphs on the page's paper, in no bubble
SFX = (300, 300, 560, 470)  # two large brush strokes on artwork


def glyphs(draw, box, size=14) -> None:
    """Columns of small glyph-like marks (日, thin strokes) filling `box`."""
    x0, y0, x1, y1 = box
    for x in range(int(x1) - size - 4, int(x0), -(size + 8)):
        for y in range(int(y0) + 4, int(y1) - size, size + 4):
            draw.rectangle((x, y, x + size, y + size), outline=0, width=2)
            draw.line((x, y + size // 2, x + size, y + size // 2), fill=0, width=2)


def outside_page() -> Image.Image:
    page = Image.new("L", SIZE, 255)
    draw = ImageDraw.Draw(page)
    draw.rectangle((8, 8, SIZE[0] - 8, SIZE[1] - 8), outline=0, width=4)  # one panel
    for x in range(290, 580, 9):  # artwork (hatching) behind the sound effect
        draw.line((x, 290, x - 40, 490), fill=110, width=2)
    draw.ellipse(BUBBLE, fill=255, outline=0, width=4)
    glyphs(draw, DIALOGUE)
    glyphs(draw, CAPTION)
    # the sound effect: two big glyphs drawn with a thick brush, outlined in white over the art
    for fill, grow in ((255, 6), (0, 0)):
        draw.line((330, 320, 400, 450), fill=fill, width=18 + 2 * grow)
        draw.line((330, 450, 420, 330), fill=fill, width=18 + 2 * grow)
        draw.ellipse((450 - grow, 320 - grow, 540 + grow, 450 + grow), outline=fill, width=18 + 2 * grow)
    return page.convert("RGB")
