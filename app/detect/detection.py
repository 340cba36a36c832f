"""Raw detections: the `Detection` value and the conversion from ultralytics results.

A detector class name ("speech bubble", "text", "frame text", ...) maps to one of the app's
kinds by name, with an explicit override (`class_map`) that wins over the name rules.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

Box = tuple[float, float, float, float]  # (x0, y0, x1, y1) in image pixels, origin top-left

DETECTION_KINDS = ("bubble", "text", "other")

# Name rules, checked in this order on the lower-cased class name: the first hit wins.
_BUBBLE_WORDS = ("bubble", "balloon", "speech")
_TEXT_WORDS = ("text", "free", "caption", "narration", "dialog")


@dataclass(frozen=True)
class Detection:
    """One box found by the detector.

    box: (x0, y0, x1, y1) in pixels of the image given to the detector.
    kind: "bubble" | "text" | "other".
    score: detector confidence in [0, 1].
    polygon: the segmentation outline as ((x, y), ...) in the same pixels, None for box models.
    label: the model's own class name.
    """

    box: Box
    kind: str
    score: float
    polygon: tuple[tuple[float, float], ...] | None = None
    label: str = ""

    @property
    def width(self) -> float:
        return self.box[2] - self.box[0]

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]


def kind_for_label(label: str) -> str:
    """The app's kind for a detector class name by the name rules (no override)."""
    name = label.lower().replace("_", " ").replace("-", " ")
    if any(word in name for word in _BUBBLE_WORDS):
        return "bubble"
    if any(word in name for word in _TEXT_WORDS):
        return "text"
    return "other"


def build_class_map(names: Mapping[int, str], overrides: Mapping | None = None) -> dict[int, str]:
    """Class id -> kind for a model's `names` ({id: class name}).

    `overrides` maps a class name (case-insensitive) or a class id to a kind and wins over the
    name rules. When no class maps to bubble or text by name and no override is given, the model
    is a single-purpose text detector with uninformative names ("0", "item"): every class reads
    as "text".
    """
    overrides = dict(overrides or {})
    for key, kind in overrides.items():
        if kind not in DETECTION_KINDS:
            raise ValueError(f"class map: kind {kind!r} for {key!r} is not one of {', '.join(DETECTION_KINDS)}")
    by_name = {str(k).lower(): v for k, v in overrides.items() if isinstance(k, str)}
    mapping: dict[int, str] = {}
    for class_id, label in names.items():
        class_id = int(class_id)
        if class_id in overrides:
            mapping[class_id] = overrides[class_id]
        elif str(label).lower() in by_name:
            mapping[class_id] = by_name[str(label).lower()]
        else:
            mapping[class_id] = kind_for_label(str(label))
    if not overrides and mapping and all(kind == "other" for kind in mapping.values()):
        mapping = dict.fromkeys(mapping, "text")
    return mapping


def detections_from_result(result, class_map: Mapping[int, str]) -> list[Detection]:
    """Convert one `ultralytics.engine.results.Results` into detections, best score first.

    Boxes come from `result.boxes.xyxy` (pixels of `result.orig_img`); polygons from
    `result.masks.xy` when the model segments (one (K, 2) array per box, may be empty).
    """
    boxes = result.boxes
    if boxes is None or len(boxes) == 0:
        return []
    xyxy = boxes.xyxy.detach().cpu().numpy()  # (N, 4)
    conf = boxes.conf.detach().cpu().numpy()  # (N,)
    cls = boxes.cls.detach().cpu().numpy().astype(int)  # (N,)
    polygons = result.masks.xy if result.masks is not None else None  # list of (K, 2) arrays
    names = result.names or {}
    out = []
    for i in range(len(xyxy)):
        x0, y0, x1, y1 = (float(v) for v in xyxy[i])
        polygon = None
        if polygons is not None and i < len(polygons) and len(polygons[i]) >= 3:
            polygon = tuple((round(float(x), 1), round(float(y), 1)) for x, y in polygons[i])
        label = str(names.get(int(cls[i]), cls[i]))
        kind = class_map.get(int(cls[i]), kind_for_label(label))
        out.append(Detection((x0, y0, x1, y1), kind, float(conf[i]), polygon, label))
    out.sort(key=lambda d: (-d.score, d.box))
    return out
