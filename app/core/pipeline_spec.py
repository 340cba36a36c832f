"""What a page pipeline loads, as plain data: one set-up for `ocr`, `eval` and `batch`.

A `PipelineSpec` is small, frozen and picklable, so the library batch can send it to Ray
workers on other machines, where `load_pipeline(spec)` resolves the models in that machine's
own model store (app.models) and loads them on its device, exactly as `ocr` does here.

    spec = PipelineSpec(model="nova", detector="comic-speech-bubble-detector", patches=384)
    pipeline = load_pipeline(spec)       # app.core.pipeline.Pipeline
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from app.core.pipeline import Pipeline, PipelineSettings
from app.models.manifest import DEFAULTS

DEFAULT_DETECTOR = DEFAULTS["detector"]


@dataclass(frozen=True)
class PipelineSpec:
    """model / detector: a model-store name or a path; device: auto | cpu | cuda | mps;
    batch_size: crops per recognizer batch (None: the recognizer's default for its device);
    the rest as in `PipelineSettings`."""

    model: str = DEFAULTS["ocr"]
    detector: str = DEFAULT_DETECTOR
    device: str = "auto"
    patches: int = 384
    max_new_tokens: int = 128
    order: str = "rtl"
    batch_size: int | None = None
    imgsz: int | None = None
    conf: float = 0.25

    def portable(self) -> PipelineSpec:
        """This spec with model and detector paths made absolute (store names as their manifest
        name), for workers whose working folder is not this one."""
        return replace(self, model=_model_identity(self.model), detector=_model_identity(self.detector))

    def output_settings(self) -> dict:
        """The settings that decide what the pipeline writes (not where or how fast it runs):
        models as store names or absolute paths, patches, tokens, order, imgsz, conf."""
        data = asdict(self)
        for key in ("device", "batch_size"):
            data.pop(key)
        data["model"] = _model_identity(self.model)
        data["detector"] = _model_identity(self.detector)
        return data


def _model_identity(name_or_path: str) -> str:
    """A manifest name for a store name or alias ("nova" -> "hayai-ocr-v2.5-nova"), else the
    absolute path."""
    from app.errors import ModelError
    from app.models.store import get_entry

    try:
        return get_entry(name_or_path).name
    except ModelError:  # not a name: a folder or file
        return str(Path(os.path.abspath(os.path.expanduser(name_or_path))))


def load_pipeline(spec: PipelineSpec) -> Pipeline:
    """Load the detector and the recognizer of `spec` on its device -> Pipeline.

    Raises ModelError (a UserError) naming a missing model and the command that downloads it.
    """
    from app.detect import load_detector
    from app.ocr.recognizer import load_recognizer

    detector = load_detector(spec.detector, device=spec.device)
    recognizer = load_recognizer(spec.model, device=spec.device)
    settings = PipelineSettings(patches=spec.patches, max_new_tokens=spec.max_new_tokens, order=spec.order,
                                batch_size=spec.batch_size,  # None: the recognizer's policy, as in the GUI
                                imgsz=spec.imgsz, conf=spec.conf)
    return Pipeline(detector, recognizer, settings)
