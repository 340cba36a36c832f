"""Text detection: the ultralytics YOLO wrapper, class mapping, merging, reading order, crops.

No Qt here. ultralytics is imported lazily (inside `load_detector`), so importing this package
is cheap.
"""
from app.detect.blocks import Region, build_regions, crop, is_vertical, pad_box
from app.detect.detection import Detection, build_class_map, detections_from_result, kind_for_label
from app.detect.detector import Detector, import_ultralytics, load_detector, resolve_device
from app.detect.order import reading_order

__all__ = [
    "Detection", "Detector", "Region", "build_regions", "build_class_map", "crop", "detections_from_result",
    "import_ultralytics", "is_vertical", "kind_for_label", "load_detector", "pad_box", "reading_order", "resolve_device",
]
