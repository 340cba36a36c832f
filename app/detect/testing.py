"""Random-weight YOLO detectors for tests and benchmarks, built from ultralytics' model yamls.

Nothing is downloaded: the architecture comes from the yaml files shipped inside ultralytics and
the weights are random, so the boxes are arbitrary but the file, the loader and the result
objects are the real ones.
"""
from __future__ import annotations

from pathlib import Path

DEFAULT_NAMES = {0: "bubble", 1: "text"}


def write_tiny_detector(path: str | Path, yaml: str = "yolov8n.yaml", names: dict[int, str] | None = None,
                        seed: int = 0) -> Path:
    """Write a random-weight YOLO `.pt` to `path` and return it.

    yaml: an ultralytics model yaml ("yolov8n.yaml" detects, "yolov8n-seg.yaml" segments;
    "yolov8m.yaml" is the size of the default detectors). names: {class id: class name}.
    """
    import torch

    from app.detect.detector import import_ultralytics

    import_ultralytics()
    from ultralytics import YOLO

    names = dict(names or DEFAULT_NAMES)
    torch.manual_seed(seed)
    yolo = YOLO(yaml)  # builds the 80-class default of the yaml; rebuilt below with our classes
    model = type(yolo.model)(yolo.model.yaml, nc=len(names), verbose=False)
    model.names = names
    model.args = yolo.model.args
    model.task = yolo.task
    yolo.model = model
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    yolo.save(str(path))
    return path
