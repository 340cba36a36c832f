"""Manga-like artwork for a panel: screentones, hatching, gradients, focus lines, simple shapes.

Everything works on a panel-sized grayscale image ("L", 0 = black ink, 255 = paper) and draws
from a numpy Generator, so the same generator state always gives the same pixels.
"""
from __future__ import annotations

import math

import numpy as np
from PIL import Image, ImageDraw


def _coords(w: int, h: int, angle: float) -> tuple[np.ndarray, np.ndarray]:
    """Pixel coordinates rotated by `angle` radians: (u, v), each (h, w) float32."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    c, s = math.cos(angle), math.sin(angle)
    return x * c + y * s, -x * s + y * c


def screentone(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """A tone pattern, (h, w) uint8: dots, parallel lines, cross-hatching or a gradient."""
    kind = rng.choice(["dots", "dots", "lines", "cross", "gradient", "gradient_dots"])
    angle = float(rng.choice([math.pi / 4, 0.0, math.pi / 6, rng.uniform(0, math.pi)]))
    period = float(rng.uniform(4, 11))
    if kind in ("dots", "gradient_dots"):
        u, v = _coords(w, h, angle)
        du = (u % period) - period / 2
        dv = (v % period) - period / 2
        if kind == "dots":
            radius = np.full((h, w), rng.uniform(0.18, 0.42) * period, np.float32)
        else:
            t = np.linspace(0.1, 0.5, h if rng.random() < 0.5 else w, dtype=np.float32)
            radius = (t[:, None] if t.shape[0] == h else t[None, :]) * period * np.ones((h, w), np.float32)
        ink = du * du + dv * dv < radius * radius
        return np.where(ink, 0, 255).astype(np.uint8)
    if kind in ("lines", "cross"):
        u, v = _coords(w, h, angle)
        width = rng.uniform(0.15, 0.45) * period
        ink = (u % period) < width
        if kind == "cross":
            ink |= (v % period) < width
        return np.where(ink, 0, 255).astype(np.uint8)
    lo, hi = sorted(rng.uniform(60, 250, size=2))
    g = np.linspace(lo, hi, h, dtype=np.float32)[:, None] * np.ones((1, w), np.float32)
    if rng.random() < 0.5:
        g = g[::-1]
    return g.astype(np.uint8)


def _random_point(rng: np.random.Generator, w: int, h: int) -> tuple[float, float]:
    return float(rng.uniform(0, w)), float(rng.uniform(0, h))


def _shape_mask(rng: np.random.Generator, w: int, h: int) -> Image.Image:
    """A random region (ellipse, polygon, band or the whole panel) as a mask (255 = inside)."""
    mask = Image.new("L", (w, h), 0)
    d = ImageDraw.Draw(mask)
    kind = rng.integers(0, 4)
    if kind == 0:
        d.rectangle((0, 0, w, h), fill=255)
    elif kind == 1:
        x, y = _random_point(rng, w, h)
        rx, ry = rng.uniform(0.1, 0.5) * w, rng.uniform(0.1, 0.5) * h
        d.ellipse((x - rx, y - ry, x + rx, y + ry), fill=255)
    elif kind == 2:
        d.polygon([_random_point(rng, w, h) for _ in range(int(rng.integers(3, 7)))], fill=255)
    else:
        y0 = rng.uniform(0, h)
        d.rectangle((0, y0, w, y0 + rng.uniform(0.1, 0.5) * h), fill=255)
    return mask


def focus_lines(rng: np.random.Generator, draw: ImageDraw.ImageDraw, w: int, h: int) -> None:
    """Radial speed lines converging on a point (the manga 'focus lines')."""
    cx, cy = _random_point(rng, w, h)
    r_out = math.hypot(w, h)
    r_in = rng.uniform(0.2, 0.45) * min(w, h)
    for a in rng.uniform(0, 2 * math.pi, size=int(rng.integers(30, 90))):
        r0 = r_in * rng.uniform(0.8, 1.5)
        width = int(rng.integers(1, 4))
        draw.line((cx + r0 * math.cos(a), cy + r0 * math.sin(a), cx + r_out * math.cos(a),
                   cy + r_out * math.sin(a)), fill=0, width=width)


def doodles(rng: np.random.Generator, draw: ImageDraw.ImageDraw, w: int, h: int) -> None:
    """Simple line art: strokes, curves, circles, boxes and filled gray shapes."""
    for _ in range(int(rng.integers(2, 10))):
        kind = rng.integers(0, 6)
        width = int(rng.integers(1, 6))
        if kind == 0:
            draw.line([_random_point(rng, w, h) for _ in range(2)], fill=0, width=width)
        elif kind == 1:
            x, y = _random_point(rng, w, h)
            pts = []
            for _ in range(int(rng.integers(3, 9))):
                x += rng.normal(0, 0.12 * w)
                y += rng.normal(0, 0.12 * h)
                pts.append((x, y))
            draw.line(pts, fill=0, width=width, joint="curve")
        elif kind == 2:
            x, y = _random_point(rng, w, h)
            r = rng.uniform(0.03, 0.25) * min(w, h)
            fill = int(rng.integers(120, 256)) if rng.random() < 0.5 else None
            draw.ellipse((x - r, y - r * rng.uniform(0.5, 1.5), x + r, y + r), outline=0, width=width, fill=fill)
        elif kind == 3:
            (x0, y0), (x1, y1) = _random_point(rng, w, h), _random_point(rng, w, h)
            draw.rectangle((min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)), outline=0, width=width)
        elif kind == 4:
            pts = [_random_point(rng, w, h) for _ in range(int(rng.integers(3, 6)))]
            draw.polygon(pts, fill=int(rng.integers(0, 230)), outline=0)
        else:
            x, y = _random_point(rng, w, h)
            for _ in range(int(rng.integers(3, 12))):  # a hatched patch
                dx, dy = rng.normal(0, 4, size=2)
                draw.line((x + dx, y + dy, x + dx + 25, y + dy - 18), fill=0, width=1)
                x += 5


def panel_art(rng: np.random.Generator, w: int, h: int) -> Image.Image:
    """A panel's artwork, "L" (w, h): paper, a few tone regions, line art, maybe focus lines."""
    img = Image.new("L", (w, h), 255)
    for _ in range(int(rng.integers(0, 3))):
        tone = Image.fromarray(screentone(rng, w, h), "L")
        img.paste(tone, (0, 0), _shape_mask(rng, w, h))
    draw = ImageDraw.Draw(img)
    if rng.random() < 0.2:
        focus_lines(rng, draw, w, h)
    doodles(rng, draw, w, h)
    return img
