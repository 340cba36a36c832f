"""Speech bubbles: ellipses, rounded boxes and jagged shout bubbles, with an optional tail.

A bubble is sized from the text it must hold: `bubble_size(shape, tw, th)` gives the body size
that holds a (tw, th) text box; `draw_bubble` paints it on the page and returns the body box.
"""
from __future__ import annotations

import math

import numpy as np
from PIL import ImageDraw

SHAPES = ("ellipse", "ellipse", "rounded", "jagged")


def bubble_size(shape: str, tw: int, th: int, pad: float) -> tuple[int, int]:
    """Body (width, height) in pixels that holds a text box (tw, th) with `pad` pixels around it."""
    if shape == "ellipse":
        return int(math.ceil(tw * 1.42 + 2 * pad)), int(math.ceil(th * 1.42 + 2 * pad))
    if shape == "jagged":
        return int(math.ceil(tw * 1.6 + 2 * pad)), int(math.ceil(th * 1.6 + 2 * pad))
    return int(math.ceil(tw + 2.4 * pad)), int(math.ceil(th + 2.4 * pad))


def _jagged_points(rng: np.random.Generator, box: tuple[float, float, float, float]) -> list[tuple[float, float]]:
    x0, y0, x1, y1 = box
    cx, cy, rx, ry = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2
    n = int(rng.integers(10, 22)) * 2
    depth = rng.uniform(0.12, 0.25)
    phase = rng.uniform(0, 2 * math.pi)
    pts = []
    for i in range(n):
        a = phase + 2 * math.pi * i / n
        r = 1.0 if i % 2 == 0 else 1.0 - depth * rng.uniform(0.7, 1.3)
        pts.append((cx + rx * r * math.cos(a), cy + ry * r * math.sin(a)))
    return pts


def _tail(rng: np.random.Generator, box: tuple[float, float, float, float]) -> tuple[list, list]:
    """A short tail: (outline triangle, fill triangle), its base inside the body."""
    x0, y0, x1, y1 = box
    cx, cy, rx, ry = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2
    a = rng.uniform(0, 2 * math.pi)
    length = rng.uniform(0.12, 0.3) * min(rx, ry) + 8
    ex, ey = cx + rx * math.cos(a), cy + ry * math.sin(a)  # on the body edge
    tip = (ex + length * math.cos(a + rng.uniform(-0.5, 0.5)), ey + length * math.sin(a + rng.uniform(-0.5, 0.5)))
    half = rng.uniform(0.08, 0.2) * min(rx, ry) + 4
    nx, ny = -math.sin(a), math.cos(a)
    bx, by = cx + 0.8 * rx * math.cos(a), cy + 0.8 * ry * math.sin(a)  # base, inside the body
    base = [(bx + half * nx, by + half * ny), (bx - half * nx, by - half * ny)]
    fill = [base[0], tip, base[1]]
    gx, gy = sum(p[0] for p in fill) / 3, sum(p[1] for p in fill) / 3
    outline = [(gx + (px - gx) * 1.25, gy + (py - gy) * 1.25) for px, py in fill]
    return outline, fill


def draw_bubble(rng: np.random.Generator, draw: ImageDraw.ImageDraw, shape: str,
                box: tuple[int, int, int, int]) -> None:
    """Paint a white bubble with a black outline whose body fills `box` (x0, y0, x1, y1, inclusive)."""
    x0, y0, x1, y1 = box
    width = int(rng.integers(2, 5))
    tail = _tail(rng, box) if shape != "jagged" and rng.random() < 0.5 else None
    if shape == "jagged":
        draw.polygon(_jagged_points(rng, box), fill=255, outline=0, width=width)
        return
    if tail:
        draw.polygon(tail[0], fill=0)
    if shape == "ellipse":
        draw.ellipse(box, fill=0)
        draw.ellipse((x0 + width, y0 + width, x1 - width, y1 - width), fill=255)
    else:
        radius = int(min(x1 - x0, y1 - y0) * rng.uniform(0.1, 0.35))
        draw.rounded_rectangle(box, radius=radius, fill=0)
        draw.rounded_rectangle((x0 + width, y0 + width, x1 - width, y1 - width),
                               radius=max(radius - width, 0), fill=255)
    if tail:
        draw.polygon(tail[1], fill=255)
