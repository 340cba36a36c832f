"""The one long-lived background worker: loads models once, runs the page pipeline.

`Worker` lives on a QThread owned by the main window (`ReadingHost` sets that up). Requests
arrive as queued signals; every result carries the request id so the window drops stale ones.
Each request has its own `threading.Event`; setting it stops the work between crops and decode
steps (app.errors.Cancelled). Heavy imports (torch, ultralytics, app.ocr model code) happen
here, on first use, never on the GUI thread.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Qt, Signal, Slot

from app.errors import Cancelled, UserError
from app.logs import SHOWN
from app.ui.common.worker_host import WorkerHost

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkerConfig:
    """What the worker needs to build its pipeline (plain values, from the toolbar)."""

    model: str = ""  # OCR model name or folder
    detector: str = ""  # detector name or .pt path; "" = the default
    device: str = "auto"
    precision: str = "auto"  # OCR precision (app.ocr.PRECISIONS)
    patches: int = 384
    order: str = "rtl"
    overrides: dict = field(default_factory=dict)  # other PipelineSettings fields (conf, imgsz, ...)
    adapter: str = ""  # an OCR adapter file (app.ocr.adapt) for the model, "" = none
    adapted: bool = True  # read with the adapter (False: the model as published)


@dataclass(frozen=True)
class Request:
    """One unit of work; `kind` is pages | read_again | region | blocks | adapt | look_ahead
    (source_path: what is adapted; read_again: `pages`, the Pages whose boxes are read again)."""

    req_id: int
    kind: str
    source_path: str
    names: tuple[str, ...] = ()
    box: tuple | None = None
    blocks: tuple = ()
    pages: tuple = ()
    cancel: threading.Event | None = None
    stop: threading.Event | None = None  # adapt: end the training and keep the best epoch so far


class Worker(QObject):
    models_loading = Signal(str)  # what is being loaded, for the status bar
    models_ready = Signal(dict)  # model, detector, device, gpu, precision, fallback
    device_fell_back = Signal(str)  # why a model left the GPU for the CPU (once per event)
    capabilities = Signal(dict)  # what this machine offers: cuda, mps (bool), auto_precision
    preloaded = Signal(str)  # "" when the models are loaded, else why not (a request will retry)
    page_read = Signal(int, object)  # request id, Page
    region_read = Signal(int, str, object, object)  # request id, page name, Block, the page's panels
    blocks_read = Signal(int, str, object)  # request id, page name, list[Block]
    progressed = Signal(int, object)  # request id, PipelineProgress
    finished = Signal(int, str)  # request id, "done" | "cancelled" | "failed"
    failed = Signal(int, str)  # request id, message for the user
    adapt_progressed = Signal(int, str, int, int)  # request id, stage, done, total
    adapt_done = Signal(int, object, str)  # request id, app.ocr.adapt.AdaptResult, the adapter's path ("" = none)

    def __init__(self):
        super().__init__()
        self.config = WorkerConfig()
        self._loaded_key: tuple | None = None
        self._recognizer = None
        self._detector = None
        self._detector_key: tuple | None = None
        self._source = None
        self._last_progress = 0.0

    @Slot(object)
    def configure(self, config: WorkerConfig) -> None:
        self.config = config

    @Slot()
    def preload(self) -> None:
        """Import torch and ultralytics and load the configured models now, before the user asks
        for a page (called once the window is up). A model that cannot load now is left for the
        first request, which reports why."""
        import torch

        from app.detect.detector import import_ultralytics
        from app.models.device import available_devices
        from app.ocr.precision import auto_precision

        import_ultralytics()
        self.capabilities.emit({**available_devices(), "auto_precision": auto_precision(torch.device("cpu"))})
        try:
            self._recognizer_for()
            self._detector_for()
        except Exception as exc:  # noqa: BLE001 - thread boundary: the GUI says why; a request retries
            self.preloaded.emit(str(exc) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}")
            return
        self.preloaded.emit("")

    @Slot(object)
    def handle(self, request: Request) -> None:
        """Run one request; always ends with `finished(req_id, status)`."""
        cancel = request.cancel or threading.Event()
        status = "done"
        try:
            if cancel.is_set():
                raise Cancelled()
            if request.kind == "pages":
                self._run_pages(request, cancel)
            elif request.kind == "read_again":
                self._run_read_again(request, cancel)
            elif request.kind == "region":
                self._run_region(request, cancel)
            elif request.kind == "blocks":
                self._run_blocks(request, cancel)
            elif request.kind == "adapt":
                self._run_adapt(request, cancel)
            elif request.kind == "look_ahead":
                self._run_look_ahead(request, cancel)
            else:
                raise ValueError(f"unknown request kind {request.kind!r}")
        except Cancelled:
            status = "cancelled"
        except UserError as exc:
            status = "failed"
            self.failed.emit(request.req_id, str(exc))
        except Exception as exc:  # noqa: BLE001 - thread boundary: the user gets a message, not a crash
            status = "failed"
            log.error("request %d (%s) failed", request.req_id, request.kind, exc_info=True, extra={SHOWN: True})
            self.failed.emit(request.req_id, f"Unexpected error: {type(exc).__name__}: {exc}")
        self.finished.emit(request.req_id, status)

    # --- models -----------------------------------------------------------------------------
    def _recognizer_for(self):
        c = self.config
        key = (c.model, c.device, c.precision, c.adapter, _stamp(c.adapter))  # taught again: the new file
        if self._recognizer is None or self._loaded_key != key:
            if not c.model:
                raise UserError("No OCR model chosen: download Hayai v2.5 Nova or choose a model "
                                "folder (Models > Model manager).")
            self.models_loading.emit(f"Loading OCR model {c.model}…")
            from app.ocr import load_recognizer

            self._recognizer = None
            self._recognizer = load_recognizer(c.model, device=c.device, precision=c.precision,
                                               adapter=c.adapter or None)
            self._recognizer.on_fallback = self._on_ocr_fallback
            self._loaded_key = key
            if self._recognizer.fallback_reason:  # it did not fit on the GPU at load time
                self._on_ocr_fallback(self._recognizer.fallback_reason)
            self._recognizer.set_adapted(c.adapted)
            self._announce()
        elif self._recognizer.adapter is not None and self._recognizer.adapted != c.adapted:
            self._recognizer.set_adapted(c.adapted)  # the toggle: no reload
            self._announce()
        return self._recognizer

    def _detector_for(self):
        c = self.config
        key = (c.detector, c.device)
        if self._detector is None or self._detector_key != key:
            self.models_loading.emit(f"Loading detector {c.detector or '(default)'}…")
            from app.detect import load_detector

            if not c.detector:
                raise UserError("No text detector chosen: pick a detector .pt file (Models > Choose "
                                "detector file) or download one in the model manager.")
            self._detector = None
            ocr_left_gpu = self._recognizer is not None and self._recognizer.fallback_reason
            self._detector = load_detector(c.detector, device="cpu" if ocr_left_gpu else c.device)
            self._detector.on_fallback = self._on_detector_fallback
            self._detector_key = key
            self._announce()
        return self._detector

    # --- device failures (app.models.device policy) ---------------------------------------------
    def _on_ocr_fallback(self, reason: str) -> None:
        """The OCR model left the GPU: the detector goes with it, the user is told once."""
        if self._detector is not None:
            self._detector.on_fallback = None  # one message for the pair
            self._detector.move_to_cpu(f"it follows the OCR model ({reason})")
            self._detector.on_fallback = self._on_detector_fallback
        self.device_fell_back.emit(f"The OCR model now runs on the CPU: {reason}. Reading goes on, more slowly; "
                                   "choose the device again (toolbar) to retry the GPU.")
        self._announce()

    def _on_detector_fallback(self, reason: str) -> None:
        self.device_fell_back.emit(f"The text detector now runs on the CPU: {reason}. Detection goes on, "
                                   "more slowly.")
        self._announce()

    def _announce(self) -> None:
        rec, det = self._recognizer, self._detector
        device = str(getattr(rec, "device", "") or getattr(det, "device", "") or "cpu")
        gpu = ""
        if device.startswith("cuda"):
            import torch

            gpu = torch.cuda.get_device_name(torch.device(device))
        self.models_ready.emit({
            "model": getattr(rec, "name", "") if rec else "",
            "detector": getattr(det, "name", self.config.detector) if det else "",
            "device": device,
            "detector_device": getattr(det, "device", "") if det else "",
            "gpu": gpu,
            "precision": getattr(rec, "precision", "") if rec else "",
            "fallback": (getattr(rec, "fallback_reason", "") if rec else "")
                        or (getattr(det, "fallback_reason", "") if det else ""),
        })

    def _pipeline(self, need_detector: bool):
        from app.core.reading.pipeline import Pipeline, PipelineSettings

        c = self.config
        settings = PipelineSettings(patches=c.patches, order=c.order, **c.overrides)
        recognizer = self._recognizer_for()
        detector = self._detector_for() if need_detector else self._detector
        return Pipeline(detector, recognizer, settings)

    def _source_for(self, path: str):
        if self._source is None or str(self._source.path) != str(path):
            from pathlib import Path

            from app.core.sources.source import open_source

            self.close_source()
            self._source = open_source(Path(path))
        return self._source

    @Slot()
    def close_source(self) -> None:
        if self._source is not None:
            self._source.close()
            self._source = None

    # --- work -------------------------------------------------------------------------------
    def _run_pages(self, req: Request, cancel: threading.Event) -> None:
        pipeline = self._pipeline(need_detector=True)
        source = self._source_for(req.source_path)
        for page in pipeline.process(source, list(req.names), progress=self._progress_of(req),
                                     cancel=cancel.is_set):
            self.page_read.emit(req.req_id, page)
            if cancel.is_set():
                raise Cancelled()

    def _run_read_again(self, req: Request, cancel: threading.Event) -> None:
        """The boxes of req.pages read again with the OCR in use (the detector neither loaded nor
        run): `blocks_read` for each page read, `page_read` (with its error) for one that could
        not be."""
        pipeline = self._pipeline(need_detector=False)
        source = self._source_for(req.source_path)
        for page in pipeline.read_again(source, list(req.pages), progress=self._progress_of(req),
                                        cancel=cancel.is_set):
            if page.error:
                self.page_read.emit(req.req_id, page)
            else:
                self.blocks_read.emit(req.req_id, page.name, list(page.blocks))
            if cancel.is_set():
                raise Cancelled()

    def _progress_of(self, req: Request):
        """A pipeline progress callback for `req`: at most every 50 ms, and the last of a page."""
        def progress(p) -> None:
            now = time.monotonic()
            if now - self._last_progress > 0.05 or p.blocks_done == p.blocks_total:
                self._last_progress = now
                self.progressed.emit(req.req_id, p)
        return progress

    def _run_region(self, req: Request, cancel: threading.Event) -> None:
        pipeline = self._pipeline(need_detector=False)
        image = self._source_for(req.source_path).load(req.names[0])
        if cancel.is_set():
            raise Cancelled()
        block = pipeline.recognize_region(image, tuple(req.box))
        panels = tuple(pipeline.panels(image, ignore=[tuple(req.box)]))  # to number the block in reading order
        self.region_read.emit(req.req_id, req.names[0], block, panels)

    def _run_blocks(self, req: Request, cancel: threading.Event) -> None:
        pipeline = self._pipeline(need_detector=False)
        image = self._source_for(req.source_path).load(req.names[0])
        if cancel.is_set():
            raise Cancelled()
        blocks = pipeline.read_blocks(image, list(req.blocks), cancel=cancel.is_set)
        self.blocks_read.emit(req.req_id, req.names[0], list(blocks))


    def _run_adapt(self, req: Request, cancel: threading.Event) -> None:
        """Adapt the model (as published, in FP32) to the corrections of the series or volume at
        req.source_path (app.core.reading.corrections.run_adapt); the recognizer in use is left
        as it is."""
        from app.core.reading.corrections import run_adapt
        from app.ocr import load_recognizer

        c = self.config
        if not c.model:
            raise UserError("No OCR model chosen: choose one before teaching it (Models > Model manager).")
        self.adapt_progressed.emit(req.req_id, "loading", 0, 0)
        base = load_recognizer(c.model, device=c.device, precision="fp32")

        def progress(stage, done, total):
            now = time.monotonic()
            if now - self._last_progress > 0.05 or done == total:
                self._last_progress = now
                self.adapt_progressed.emit(req.req_id, stage, done, total)

        result, path = run_adapt(req.source_path, base, progress=progress, cancel=cancel.is_set,
                                 stop=req.stop.is_set if req.stop is not None else None)
        self.adapt_done.emit(req.req_id, result, str(path) if path else "")

    def _run_look_ahead(self, req: Request, cancel: threading.Event) -> None:
        """Look at the crops teaching req.source_path would look at, ahead of it (app.core.reading.
        corrections.look_ahead), with the model as teaching loads it. Work nobody asked for: what
        goes wrong is logged, not shown (the teaching itself reports it), and Cancelled ends it."""
        from app.core.reading.corrections import look_ahead
        from app.ocr import load_recognizer

        c = self.config
        if not c.model:
            return
        try:
            base = load_recognizer(c.model, device=c.device, precision="fp32")
            if cancel.is_set():
                raise Cancelled()
            looked = look_ahead(req.source_path, base, cancel=cancel.is_set)
        except Cancelled:
            raise
        except Exception as exc:  # noqa: BLE001 - background work: logged, the teaching reports it
            log.info("looking ahead of teaching %s: %s", req.source_path, exc)  # not a warning: not asked for
            return
        log.info("looked at %d crops ahead of teaching %s", looked, req.source_path)


def _stamp(path: str) -> tuple[int, int, int] | None:
    """An adapter file's identity on disk (file, modified, size): teaching again rewrites the same
    path, going back puts another file there."""
    try:
        st = os.stat(path) if path else None
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size) if st else None


class ReadingHost(WorkerHost):
    """The reading worker's host (app.ui.common.worker_host): its thread `hayai-worker`, the one
    registry of live requests, plus the worker's configuration and preload."""

    submit_config = Signal(object)
    submit_preload = Signal()

    def __init__(self, parent=None):
        worker = Worker()
        super().__init__(worker, "hayai-worker", worker.close_source, parent)
        self.submit_config.connect(worker.configure, Qt.ConnectionType.QueuedConnection)
        self.submit_preload.connect(worker.preload, Qt.ConnectionType.QueuedConnection)
        self.start()

    def configure(self, config: WorkerConfig) -> None:
        self.submit_config.emit(config)

    def preload(self) -> None:
        """Heavy imports and the configured models, in the worker, now (queued after configure)."""
        self.submit_preload.emit()

    def submit(self, kind: str, source_path: str, context: dict | None = None, **fields) -> int:
        """Queue a request; returns its id. `context` is the caller's, handed back when it finishes.
        A request the user asked for first cancels the background ones (`context["background"]`:
        looking ahead of a teaching), so it waits at most for the batch of crops they are in."""
        if not (context or {}).get("background"):
            self.cancel_background()
        return self.submit_built(lambda rid, cancel: Request(rid, kind, source_path, cancel=cancel, **fields),
                                 context)
