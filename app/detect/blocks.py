"""From raw detections to the regions to read: merge, flag vertical text, order; and crops.

Block geometry lives here, in plain data of this package (`Region`): app.core turns regions into
the document's `Block`s (ids "b1".."bn", order 1..n), so this package never imports app.core.

Rules (one place, used by the pipeline and by user-drawn boxes alike):
- Duplicates: two detections of the same kind that overlap heavily (IoU >= `DUPLICATE_IOU`, or
  the smaller lies `CONTAINED` inside the larger) become one box, their union, with the best score.
- A text box lying mostly inside a bubble (`CONTAINED` of its area) is absorbed by that bubble:
  Hayai reads a multi-line bubble in one pass, so a bubble is never split into lines. The bubble
  box grows to the union so no text is cut off.
- Only "bubble" and "text" detections become blocks; "other" classes (panels, faces, ...) are
  dropped unless a class map names them bubble or text.
- Vertical text: with the page image, the ink inside the block decides (columns or rows of text,
  app.detect.direction); without it, or when the block holds too little ink to tell, a block
  taller than `VERTICAL_RATIO` times its width (the text boxes it absorbed decide for a bubble
  that has some).
- Lines are not text: with the page image, a detection whose padded crop (what the recognizer
  would get) is mostly long straight strokes and holds no text once they are set aside (a
  panel border, a dashed line, speed lines, hatching: app.detect.ink.is_line_art) is dropped.
  Boxes the user draws are never dropped.
- Text box -> bubble: with the page image and a detector that finds text, not bubbles, a text
  detection (a box tight around the glyphs) that sits in a closed bubble becomes that bubble (kind "bubble", the bubble's box and outline
  as its polygon: cleaning and lettering use the whole bubble; app.detect.bubbles). Text on
  artwork or a background keeps its box.
- Text outside bubbles: with the page image, a text detection in no bubble (none detected
  around it, none found) is free text, of kind "caption" (narration, asides) or "sfx" (sound
  effects: drawn lettering, glyphs much larger than the page's dialogue or brush-heavy;
  app.detect.freetext). Without the page it stays "text".
- Reading order: with the page image, panel by panel (app.detect.panels finds them from the
  gutters), see app.detect.order.
- Block boxes are the detected extents; padding (`pad_box`) is applied when cropping, so a
  re-read or a user-drawn box follows the same rule and padding never accumulates.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from app.detect.detection import Detection
from app.detect.order import reading_order
from app.errors import UserError

Box = tuple[float, float, float, float]

DUPLICATE_IOU = 0.6
CONTAINED = 0.8
VERTICAL_RATIO = 1.3
DEFAULT_PAD = 0.06  # of the box's shorter side, per edge
MIN_PAD_PX = 2
READ_KINDS = ("bubble", "text")


def area(box: Box) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def intersection(a: Box, b: Box) -> float:
    return area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def iou(a: Box, b: Box) -> float:
    inter = intersection(a, b)
    union = area(a) + area(b) - inter
    return inter / union if union > 0 else 0.0


def union_box(a: Box, b: Box) -> Box:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def is_vertical(box: Box) -> bool:
    """Tall narrow text (manga's vertical writing): height > VERTICAL_RATIO * width."""
    return (box[3] - box[1]) > VERTICAL_RATIO * (box[2] - box[0])


@dataclass(frozen=True)
class Region:
    """A region to read, as `build_regions` returns it: `box` (x0, y0, x1, y1) in source-image
    pixels, `kind` ("bubble"; "caption" or "sfx": text outside bubbles, told from the page; "text"
    when no page was given), the detector's `score`, its segmentation `polygon` (None
    for a plain box) and whether the text in it runs `vertical`ly."""

    box: Box
    kind: str
    score: float
    polygon: tuple[tuple[float, float], ...] | None = None
    vertical: bool = False


@dataclass
class _Group:
    """A block under construction: the leading detection, its grown box, the text it absorbed."""

    kind: str
    box: Box
    score: float
    polygon: tuple[tuple[float, float], ...] | None
    text_box: Box | None = None  # union of absorbed text boxes (decides the vertical flag)
    found_bubble: bool = False  # a text box widened to the bubble found around it
    parts: tuple[Box, ...] = ()  # the text boxes joined in that bubble (columns found one by one)


def _merge_duplicates(dets: list[Detection]) -> list[_Group]:
    groups: list[_Group] = []
    for det in sorted(dets, key=lambda d: (-d.score, d.box)):
        for g in groups:
            if g.kind != det.kind:
                continue
            inter = intersection(g.box, det.box)
            smaller = min(area(g.box), area(det.box))
            if iou(g.box, det.box) >= DUPLICATE_IOU or (smaller > 0 and inter / smaller >= CONTAINED):
                g.box = union_box(g.box, det.box)
                break
        else:
            groups.append(_Group(det.kind, det.box, det.score, det.polygon))
    return groups


def _absorb_text_into_bubbles(groups: list[_Group]) -> list[_Group]:
    bubbles = [g for g in groups if g.kind == "bubble"]
    kept = []
    for g in groups:
        if g.kind != "text" or not bubbles or area(g.box) <= 0:
            kept.append(g)
            continue
        best = max(bubbles, key=lambda b: (intersection(b.box, g.box), -bubbles.index(b)))
        if intersection(best.box, g.box) / area(g.box) >= CONTAINED:
            best.text_box = g.box if best.text_box is None else union_box(best.text_box, g.box)
        else:
            kept.append(g)
    for b in bubbles:  # grow after all assignments, so the assignment does not depend on list order
        if b.text_box is not None:
            b.box = union_box(b.box, b.text_box)
    return kept


def _clamp(box: Box, size: tuple[int, int]) -> Box:
    w, h = size
    return (min(max(box[0], 0.0), w), min(max(box[1], 0.0), h), min(max(box[2], 0.0), w), min(max(box[3], 0.0), h))


def finds_bubbles(class_map) -> bool:
    """Does a detector with this class map ({id: kind}) find bubbles? When it does not (a text
    detector), its text boxes are widened to the bubbles around them."""
    return "bubble" in set(dict(class_map).values())


def gray_page(image) -> np.ndarray:
    """The page as a grayscale (H, W) uint8 array, what the layout rules read."""
    return np.asarray(image if image.mode == "L" else image.convert("L"))


def block_is_vertical(box: Box, page: np.ndarray | None = None, shape_box: Box | None = None) -> bool:
    """Vertical text in `box`: from the ink of the grayscale `page` when given and legible,
    else from the shape of `shape_box` (default `box`)."""
    if page is not None:
        from app.detect.direction import writing_direction

        found = writing_direction(page, box)
        if found is not None:
            return found
    return is_vertical(shape_box or box)


@dataclass(frozen=True)
class PageReading:
    """What reading one page gives: its `regions` in reading order, the `panels` the order used
    (empty: the page-wide rule), the panels read by the page-wide rule (`crowded`), and how
    sure the order is (`confidence` in [0, 1]; `doubts`: why it is less than 1, in words;
    `signs`: what it was weighed from; app.detect.confidence)."""

    regions: tuple[Region, ...]
    panels: tuple[Box, ...] = ()
    crowded: tuple[int, ...] = ()
    confidence: float = 1.0
    doubts: tuple[str, ...] = ()
    signs: dict = field(default_factory=dict)  # the signs the confidence weighs (app.detect.confidence.signs)


def build_regions(detections: Sequence[Detection], image_size: tuple[int, int], order: str = "rtl",
                  kinds: Sequence[str] = READ_KINDS, page: np.ndarray | None = None,
                  widen_text: bool | None = None) -> list[Region]:
    """The regions to read on one page, in reading order (`read_page`'s regions).

    detections: from `Detector.detect` for this page; image_size: (width, height) in pixels of
    the same image; order: "rtl" (manga) or "ltr" (comics, webtoons); page: the same image as a
    grayscale (H, W) uint8 array (`gray_page`): the ink decides the writing direction, the panels
    the order, and detections on lines are dropped (without it: the box shapes, the page-wide
    order, nothing dropped); widen_text: text boxes in a closed bubble become that bubble (True
    for a detector that finds text, not bubbles: `finds_bubbles`; None: when no detection of the
    page is a bubble). Deterministic: the same detections give the same regions in the
    same order, whatever order they came in.
    """
    return list(read_page(detections, image_size, order, kinds, page, widen_text).regions)


def read_page(detections: Sequence[Detection], image_size: tuple[int, int], order: str = "rtl",
              kinds: Sequence[str] = READ_KINDS, page: np.ndarray | None = None,
              widen_text: bool | None = None) -> PageReading:
    """`build_regions`' regions with the panels they were read by and the order's confidence
    (same arguments)."""
    from app.detect.confidence import order_confidence, signs

    dets = [d for d in detections if d.kind in kinds]
    dets = [Detection(_clamp(d.box, image_size), d.kind, d.score, d.polygon, d.label) for d in dets]
    dets = [d for d in dets if area(d.box) > 0]
    groups = _absorb_text_into_bubbles(_merge_duplicates(dets))
    panels, crowded, layout = None, (), None
    if page is not None:
        from app.detect.ink import is_line_art
        from app.detect.panels import panel_layout

        groups = [g for g in groups if not is_line_art(page, pad_box(g.box, image_size))]
        if widen_text or (widen_text is None and not any(d.kind == "bubble" for d in dets)):
            groups = _widen_to_bubbles(groups, page)
        _name_free_text(groups, page)
        layout = panel_layout(page, order, ignore=[t for g in groups for t in (g.parts if g.found_bubble else (g.box,))],
                              bubbles=[g.polygon for g in groups if g.found_bubble])
        if layout.sure:  # an unsure finder is never used: the page-wide rule
            panels, crowded = list(layout.panels), layout.crowded
    boxes = [tuple(round(v, 2) for v in g.box) for g in groups]
    ranked = reading_order(boxes, order, panels, crowded)
    regions = tuple(Region(box=boxes[i], kind=groups[i].kind, score=round(groups[i].score, 4), polygon=groups[i].polygon,
                           vertical=block_is_vertical(groups[i].text_box or boxes[i], page,
                                                      groups[i].text_box or groups[i].box))
                    for i in ranked)
    found = signs([boxes[i] for i in ranked], order, layout, page is not None)
    confidence, doubts = order_confidence(found) if len(boxes) >= 2 else (1.0, ())
    return PageReading(regions, tuple(panels or ()), tuple(crowded), confidence, doubts, found)


def _widen_to_bubbles(groups: list[_Group], page: np.ndarray) -> list[_Group]:
    """The groups with every text detection (tight around its glyphs) inside a closed bubble
    become that bubble: kind "bubble", the bubble's box and outline (app.detect.bubbles), its
    own box kept as the text's (the writing direction reads it). Text boxes in the same bubble
    (columns a text detector found one by one; a box whose own search found no bubble, its
    centre inside one found for another) become one block, their boxes joined as its text:
    one bubble, one translation. Text on artwork keeps its box."""
    from app.detect.bubbles import bubble_around, paper_level

    def same(a: Box, b: Box) -> bool:
        return intersection(a, b) > 0.5 * min(area(a), area(b))

    def join(host: _Group, g: _Group) -> None:
        host.text_box = union_box(host.text_box or host.box, g.box)
        host.parts = (*host.parts, g.box)
        host.score = max(host.score, g.score)
        joined.add(id(g))

    level = paper_level(page)
    bubbles = [g.box for g in groups if g.kind == "bubble"]  # a detected bubble is never replaced
    widened: list[_Group] = []
    joined: set[int] = set()
    for g in groups:
        if g.kind != "text":
            continue
        found = bubble_around(page, g.box, level)
        if found is None or len(found.polygon) < 3:
            continue
        if any(same(found.box, b) for b in bubbles):
            continue  # a detected bubble is there already
        host = next((w for w in widened if same(found.box, w.box)), None)
        if host is not None:  # another column of a bubble found already
            join(host, g)
            continue
        g.text_box, g.kind, g.box, g.polygon, g.found_bubble = g.box, "bubble", found.box, found.polygon, True
        g.parts = (g.text_box,)
        widened.append(g)
    for g in groups:  # a text box whose own bubble was not found, inside one found for another
        if g.kind != "text" or area(g.box) <= 0:
            continue
        host = max(widened, key=lambda w: intersection(w.box, g.box), default=None)
        if (host is not None and intersection(host.box, g.box) >= CONTAINED * area(g.box)
                and _inside(host.polygon, ((g.box[0] + g.box[2]) / 2, (g.box[1] + g.box[3]) / 2))):
            join(host, g)
    return [g for g in groups if id(g) not in joined]


def _inside(polygon, point: tuple[float, float]) -> bool:
    """Is `point` inside `polygon` ((x, y) vertices)?"""
    import cv2

    contour = np.asarray(polygon, dtype=np.float32).reshape(-1, 1, 2)
    return cv2.pointPolygonTest(contour, (float(point[0]), float(point[1])), False) >= 0


def _name_free_text(groups: list[_Group], page: np.ndarray) -> None:
    """A text detection left outside every bubble becomes a caption or a sound effect
    (app.detect.freetext), against the glyph size of the page's text in bubbles."""
    from app.detect.freetext import dialogue_glyph, outside_kind

    free = [g for g in groups if g.kind == "text"]
    if not free:
        return
    dialogue = dialogue_glyph(page, [g.text_box or g.box for g in groups if g.kind == "bubble"])
    for g in free:
        g.kind = outside_kind(page, g.box, dialogue)


def pad_box(box: Box, image_size: tuple[int, int], pad: float = DEFAULT_PAD) -> tuple[int, int, int, int]:
    """`box` grown by `pad` x its shorter side (at least MIN_PAD_PX) per edge, clamped to the
    image, rounded outwards to whole pixels: (x0, y0, x1, y1) with x0 < x1, y0 < y1.

    Raises UserError when the box does not overlap the image.
    """
    w, h = image_size
    x0, y0, x1, y1 = (float(v) for v in box)
    x0, x1 = min(x0, x1), max(x0, x1)
    y0, y1 = min(y0, y1), max(y0, y1)
    margin = max(MIN_PAD_PX, pad * min(x1 - x0, y1 - y0)) if pad > 0 else 0.0
    px0 = max(0, math.floor(x0 - margin))
    py0 = max(0, math.floor(y0 - margin))
    px1 = min(w, math.ceil(x1 + margin))
    py1 = min(h, math.ceil(y1 + margin))
    if px1 <= px0 or py1 <= py0:
        raise UserError(f"box {tuple(round(v) for v in box)} lies outside the {w}x{h} page; draw it on the page")
    return px0, py0, px1, py1


def crop(image, box: Box, pad: float = DEFAULT_PAD):
    """The padded crop of `box` from `image` (the full-resolution source page), as RGB PIL."""
    region = pad_box(box, image.size, pad)
    out = image.crop(region)
    return out if out.mode == "RGB" else out.convert("RGB")
