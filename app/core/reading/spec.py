"""What a page pipeline loads, as plain data: one set-up for `ocr`, `eval` and `batch`.

A `PipelineSpec` is small, frozen and picklable, so the library batch can send it to Ray
workers on other machines, where `load_pipeline(spec)` resolves the models in that machine's
own model store (app.models) and loads them on its device, exactly as `ocr` does here.

    spec = PipelineSpec(model="nova", detector="bubbles", settings=PipelineSettings(patches=384))
    pipeline = load_pipeline(spec)       # app.core.reading.pipeline.Pipeline
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from app.core.reading.pipeline import Pipeline, PipelineSettings
from app.models.manifest import DEFAULTS

DEFAULT_DETECTOR = DEFAULTS["detector"]


@dataclass(frozen=True)
class PipelineSpec:
    """model / detector: a model-store name or a path; device: auto | cpu | cuda | mps;
    precision: the OCR model's (app.ocr.PRECISIONS; auto: per device);
    settings: the pipeline's settings (patches, tokens, order, detector size and threshold...);
    adapter: an OCR adapter file (app.ocr.adapt) the recognizer reads with ("" = none; on Ray
    workers the path must be readable where they run, as a model path must)."""

    model: str = DEFAULTS["ocr"]
    detector: str = DEFAULT_DETECTOR
    device: str = "auto"
    settings: PipelineSettings = PipelineSettings()
    precision: str = "auto"
    adapter: str = ""

    def portable(self) -> PipelineSpec:
        """This spec with model and detector paths made absolute (store names as their manifest
        name), for workers whose working folder is not this one."""
        adapter = str(Path(os.path.abspath(os.path.expanduser(self.adapter)))) if self.adapter else ""
        return replace(self, model=_model_identity(self.model), detector=_model_identity(self.detector),
                       adapter=adapter)

    def output_settings(self) -> dict:
        """The settings that decide what the pipeline writes (not where or how fast it runs):
        models as store names or absolute paths, patches, tokens, order, imgsz, conf."""
        s = self.settings
        out = {"model": _model_identity(self.model), "detector": _model_identity(self.detector),
               "patches": s.patches, "max_new_tokens": s.max_new_tokens, "order": s.order, "imgsz": s.imgsz,
               "conf": s.conf}
        if self.adapter:  # only when set: a run without one keeps the settings it always had
            out["adapter"] = self.portable().adapter
        return out


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
    recognizer = load_recognizer(spec.model, device=spec.device, precision=spec.precision,
                                 adapter=spec.adapter or None)
    return Pipeline(detector, recognizer, spec.settings)
