"""Fixtures for detection and pipeline tests: tiny random-weight YOLO files, built once."""
from __future__ import annotations

import os

import numpy as np
import pytest
from PIL import Image

# ultralytics must never reach the network or pip in tests (the loader sets these too).
os.environ.setdefault("YOLO_OFFLINE", "1")
os.environ.setdefault("YOLO_AUTOINSTALL", "false")
os.environ.setdefault("YOLO_VERBOSE", "false")


@pytest.fixture(scope="session")
def yolo_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("yolo")


@pytest.fixture(scope="session")
def tiny_yolo_path(yolo_dir):
    """A yolov8n-architecture detection model with classes {0: bubble, 1: text}, random weights."""
    from app.detect.testing import write_tiny_detector

    return write_tiny_detector(yolo_dir / "tiny-detect.pt", "yolov8n.yaml", {0: "bubble", 1: "text"})


@pytest.fixture(scope="session")
def tiny_seg_path(yolo_dir):
    """A yolov8n-seg segmentation model with unusual class names, random weights."""
    from app.detect.testing import write_tiny_detector

    return write_tiny_detector(yolo_dir / "tiny-seg.pt", "yolov8n-seg.yaml",
                               {0: "Speech Balloon", 1: "frame_text", 2: "panel"}, seed=1)


@pytest.fixture(scope="session")
def tiny_detector(tiny_yolo_path):
    from app.detect import load_detector

    return load_detector(tiny_yolo_path, device="cpu")


@pytest.fixture(scope="session")
def make_page():
    """page(width, height, seed) -> a noisy white RGB page (PIL), deterministic per seed."""

    def page(width=320, height=400, seed=0) -> Image.Image:
        rng = np.random.RandomState(seed)
        arr = np.full((height, width, 3), 245, np.uint8)
        arr[rng.rand(height, width) < 0.05] = 20
        return Image.fromarray(arr)

    return page
