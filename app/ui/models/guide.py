"""What each detector is for and which to pick, for the model manager.

The detectors' file sizes are not in the manifest (their hashes and sizes are not published);
what can be said without downloading them is their architecture's usual size.
"""
from __future__ import annotations

RECOMMENDED_DETECTOR = "comic-speech-bubble-detector"

# name -> (what it finds, when to choose it, usual size of its architecture)
DETECTORS = {
    "comic-speech-bubble-detector": (
        "speech bubbles",
        "one block per bubble, the whole bubble read in one pass, which is what Hayai reads best; "
        "misses narration and sound effects outside bubbles. Recommended for manga.",
        "about 50 MB (YOLOv8m)"),
    "manga-text-detector": (
        "text blocks, in and outside bubbles",
        "also finds narration boxes and free text; smaller and faster (trained at 640 px). Choose it "
        "for pages with much text outside bubbles.",
        "about 22 MB (YOLOv8s)"),
    "comic-text-segmenter": (
        "text regions, with their outlines",
        "text anywhere, sound effects included, as outlined regions; slower (1024 px).",
        "about 55 MB (YOLOv8m-seg)"),
    "yolov8m-seg-speech-bubble": (
        "speech bubbles, with their outlines",
        "bubbles like the recommended one, with outlines; licensed GPL-3.0.",
        "about 55 MB (YOLOv8m-seg)"),
}

CHOOSING = ("Which detector? <b>comic-speech-bubble-detector</b> (recommended) finds speech bubbles: "
            "each bubble is read in one pass. <b>manga-text-detector</b> also finds text outside "
            "bubbles (narration, free text) and is smaller. Detector sizes are not published: the "
            "sizes shown are their architectures' usual sizes.")


def finds(name: str) -> str:
    """What the detector `name` finds ("" for other models)."""
    return DETECTORS[name][0] if name in DETECTORS else ""


def advice(name: str) -> str:
    """When to choose the detector `name` ("" for other models)."""
    return DETECTORS[name][1] if name in DETECTORS else ""


def size_text(name: str) -> str:
    """The usual size of the detector `name`'s architecture ("" for other models)."""
    return DETECTORS[name][2] if name in DETECTORS else ""
