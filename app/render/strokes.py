"""Mask edits: the user's brush strokes on a block's text mask (plain data, no dependencies)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MaskStroke:
    """One brush stroke: a polyline of `points` (page pixels) of `radius` pixels; `erase`
    removes mask pixels, otherwise the stroke adds them. Strokes apply in order."""

    erase: bool
    radius: float
    points: tuple[tuple[float, float], ...]


def stroke_to_dict(stroke: MaskStroke) -> dict:
    return {"erase": stroke.erase, "radius": stroke.radius, "points": [[x, y] for x, y in stroke.points]}


def stroke_from_dict(data) -> MaskStroke:
    """ValueError naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError("expected an object {erase, radius, points}")
    erase, radius, points = data.get("erase"), data.get("radius"), data.get("points")
    if not isinstance(erase, bool):
        raise ValueError("erase: expected true or false")
    if not isinstance(radius, (int, float)) or isinstance(radius, bool) or not 0 < radius <= 500:
        raise ValueError("radius: expected a number of pixels in (0, 500]")
    if not isinstance(points, list) or not points or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                         for v in p) for p in points):
        raise ValueError("points: expected a non-empty list of [x, y]")
    return MaskStroke(erase, float(radius), tuple((float(x), float(y)) for x, y in points))
