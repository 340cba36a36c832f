"""The ultralytics YOLO wrapper: load a detector `.pt`, run it on pages, return detections.

Security: an ultralytics `.pt` is a pickle (ultralytics loads it with `weights_only=False`), so
loading one can run code. Only two kinds of file reach `load_detector`: the pinned default
detectors, fetched and sha256-verified by the model store (`app.models.store.resolve_model`), and a
file the user picked explicitly (a path on the command line or in a file dialog). Nothing is
loaded from a guessed or downloaded-on-the-fly location, and ultralytics is kept offline
(`YOLO_OFFLINE`, no auto-install) so a missing file never triggers a download.

ultralytics is slow to import (about a second): it is imported inside functions only.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from app.detect.detection import Detection, build_class_map, detections_from_result
from app.errors import ModelError

log = logging.getLogger(__name__)

DEFAULT_IMGSZ = 1024  # input size for a detector that does not record the size it was trained at


def trained_imgsz(model) -> int:
    """The input size (long side, pixels) a YOLO model was trained at, from the `imgsz` its
    checkpoint records (`train_args`); DEFAULT_IMGSZ when it records none (a model built from a
    yaml). A detector reads best at the size it learned: the demo detector at 512, the default
    bubble detector at 1024, the manga text detector at 640 (docs/ocr-engine.md, detectors)."""
    value = (getattr(model, "overrides", None) or {}).get("imgsz")
    if isinstance(value, (list, tuple)) and value:
        value = max(value)
    return int(value) if isinstance(value, (int, float)) and value >= 32 else DEFAULT_IMGSZ


def import_ultralytics():
    """Import ultralytics with downloads, auto-install, telemetry and chatter switched off, and
    undo what its import does to the rest of the process.

    On import ultralytics sets OMP_NUM_THREADS=1 when unset (a training default that would slow
    the OCR model in this process), replaces `PIL.Image.open` with a wrapper that, on any
    unidentified file, tries to pip-install and import `pi-heif` (so a corrupt page reports a
    missing module instead of "not an image"), replaces `torch.save`, and changes numpy's print
    options. All of these are put back; ultralytics' own code does not need them for in-memory
    prediction. Safe to call repeatedly (the patches run once, at first import).
    """
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_AUTOINSTALL", "false")
    os.environ.setdefault("YOLO_VERBOSE", "false")
    import numpy as np
    import torch
    from PIL import Image

    threads = torch.get_num_threads()
    had_omp = "OMP_NUM_THREADS" in os.environ
    printoptions = np.get_printoptions()
    pil_open, torch_save = Image.open, torch.save  # ours, unless ultralytics was imported before
    import ultralytics
    from ultralytics import YOLO  # noqa: F401  (imports the modules that patch, so they can be undone)
    from ultralytics.utils import patches

    if not had_omp:
        os.environ.pop("OMP_NUM_THREADS", None)
    torch.set_num_threads(threads)
    np.set_printoptions(**printoptions)
    # Put back what was there before the import; when ultralytics was imported earlier (what we
    # saw is its wrapper already), take the original it keeps. Then check, loudly: a patched
    # Image.open turns a corrupt page into a pip-install attempt instead of "not an image".
    Image.open = _unwrapped(pil_open, getattr(patches, "_image_open", None), "PIL.")
    torch.save = _unwrapped(torch_save, getattr(patches, "_torch_save", None), "torch.")
    for name, fn in (("PIL.Image.open", Image.open), ("torch.save", torch.save)):
        if not fn.__module__.startswith(("PIL.", "torch.")):
            log.error("%s is still ultralytics' replacement (%s.%s) after undoing its patches: this "
                      "ultralytics version is not supported; a damaged page may not be reported clearly.",
                      name, fn.__module__, fn.__name__)
    return ultralytics


def _unwrapped(seen, kept, module_prefix: str):
    """`seen` when it is the library's own function, else ultralytics' kept original `kept`."""
    if getattr(seen, "__module__", "").startswith(module_prefix) or kept is None:
        return seen
    return kept


def resolve_device(device: str = "auto") -> str:
    """The OCR engine's policy (app.models.device): "auto" -> "cuda" when available, then "mps",
    else "cpu"; an explicit choice ("cpu", "cuda", "cuda:1", "mps") is checked (UserError)."""
    from app.models.device import resolve_device as resolve_torch_device

    return str(resolve_torch_device(device))


def resolve_detector_path(path_or_name: str | os.PathLike) -> Path:
    """An existing `.pt` file as given, else a detector name resolved through the model store."""
    path = Path(path_or_name).expanduser()
    if path.is_file():
        if path.suffix.lower() != ".pt":
            raise ModelError(f"{path}: not an ultralytics detector; pick a YOLO .pt file")
        return path.resolve()
    if path.exists():
        raise ModelError(f"{path}: is a folder; pick the detector's .pt file")
    looks_like_path = path.suffix.lower() == ".pt" or os.sep in str(path_or_name) or "/" in str(path_or_name)
    if looks_like_path:
        raise ModelError(f"{path}: detector file not found; check the path or pick another .pt file")
    return _resolve_named_detector(str(path_or_name))


def _resolve_named_detector(name: str) -> Path:
    """Hook for detectors listed in the model manifest (fetched and verified by app.models.store)."""
    try:
        from app.models.store import resolve_model
    except ImportError as exc:
        raise ModelError(f"detector {name!r}: not a file, and the model store is not available ({exc})") from exc
    path = Path(resolve_model(name))
    if path.is_dir():
        candidates = sorted(path.glob("*.pt"))
        if len(candidates) != 1:
            raise ModelError(f"detector {name!r}: expected one .pt file in {path}, found {len(candidates)}")
        path = candidates[0]
    if path.suffix.lower() != ".pt" or not path.is_file():
        raise ModelError(f"detector {name!r} resolved to {path}, which is not a .pt file")
    return path


class Detector:
    """A loaded YOLO model (detection or segmentation) and its class -> kind mapping.

    name: the file stem (e.g. "comic-speech-bubble-detector"); path: the loaded file;
    device: "cpu" | "cuda" | "mps"; names: {class id: class name}; class_map: {class id: kind};
    imgsz: the input size it was trained at, used when `detect` is given none.
    """

    def __init__(self, model, path: Path, device: str, class_map: Mapping | None = None):
        self._model = model
        self.path = path
        self.name = path.stem
        self.device = device
        self.fallback_reason = ""  # why it runs on the CPU although a GPU was asked for
        self.on_fallback = None  # called with the reason when it moves to the CPU
        self.task = getattr(model, "task", "detect")
        self.names = {int(k): str(v) for k, v in model.names.items()}
        self.class_map = build_class_map(self.names, class_map)
        self.imgsz = trained_imgsz(model)

    def __repr__(self) -> str:
        return (f"Detector({self.name!r}, task={self.task!r}, device={self.device!r}, imgsz={self.imgsz}, "
                f"classes={self.class_map})")

    def detect(self, images: Sequence, imgsz: int | None = None, conf: float = 0.25, iou: float = 0.5,
               batch: int = 4) -> list[list[Detection]]:
        """Detections for each image (PIL images, or uint8 arrays HxW / HxWx3 RGB / HxWx4 RGBA),
        best score first.

        imgsz: the long side the model sees (ultralytics letterboxes, boxes come back in the
        input image's pixels; None: `self.imgsz`, the size it was trained at); conf: minimum score; iou: NMS threshold; batch: images per call.
        """
        import numpy as np
        import torch

        imgsz = imgsz or self.imgsz
        # ultralytics letterboxes a batch of mixed sizes differently from a lone image, so only
        # pages of one size share a call: a page's boxes never depend on its neighbours.
        by_size: dict[tuple[int, int], list[int]] = {}
        arrays = []
        for i, im in enumerate(images):
            # ultralytics treats numpy input as BGR (OpenCV order): hand it BGR.
            rgb = np.asarray(im.convert("RGB") if hasattr(im, "convert") else im)
            if rgb.ndim == 2:  # a grayscale array
                rgb = np.repeat(rgb[..., None], 3, axis=2)
            rgb = rgb[..., :3]  # drop alpha
            arrays.append(np.ascontiguousarray(rgb[..., ::-1]))
            by_size.setdefault(rgb.shape[:2], []).append(i)
        out: list[list[Detection]] = [[] for _ in images]
        step = max(1, batch)
        threads = torch.get_num_threads()  # predict() on the CPU resets it to cores - 1: put it back
        try:
            for indices in by_size.values():
                start = 0
                while start < len(indices):
                    chunk = indices[start:start + step]
                    results, oom = self._predict_or_oom([arrays[i] for i in chunk], imgsz, conf, iou)
                    if results is None:
                        step = self._after_oom(oom, step)
                        continue
                    for i, result in zip(chunk, results, strict=True):
                        out[i] = detections_from_result(result, self.class_map)
                    start += len(chunk)
        finally:
            torch.set_num_threads(threads)
        return out

    def _predict_or_oom(self, arrays, imgsz, conf, iou):
        """(results, "") or, on out of memory, (None, the error's first line); other errors raise.
        The exception is not kept: its traceback would pin the failed batch's memory."""
        from app.models.device import is_out_of_memory

        try:
            return self._model.predict(arrays, imgsz=imgsz, conf=conf, iou=iou, device=self.device,
                                       half=self.device.startswith("cuda"), verbose=False), ""
        except RuntimeError as exc:  # torch.OutOfMemoryError is a RuntimeError
            if not is_out_of_memory(exc):
                raise
            return None, (str(exc).strip().splitlines() or [type(exc).__name__])[0]

    def _after_oom(self, message: str, step: int) -> int:
        """The same policy as the OCR model: halve the pages per call, then leave the GPU."""
        import torch

        from app.errors import OutOfMemory
        from app.models.device import release_memory

        release_memory(torch.device(self.device))
        if step > 1:
            log.warning("detector out of memory with %d pages at once, retrying with %d (%s)", step, step // 2, message)
            return step // 2
        if self.device == "cpu":
            raise OutOfMemory(f"Not enough memory to detect text on one page on the CPU ({message}). "
                              "Close other programs or choose a smaller detector input size.")
        self.move_to_cpu(f"the detector ran out of GPU memory on a single page ({message})")
        return 1

    def move_to_cpu(self, reason: str) -> None:
        """Run on the CPU from now on (a GPU failed, or the OCR model left it) and say why."""
        if self.device == "cpu":
            return
        import torch

        from app.models.device import release_memory

        old = self.device
        self._model.predictor = None  # ultralytics builds a new predictor, on the new device
        self._model.to("cpu")
        self.device = "cpu"
        self.fallback_reason = reason
        release_memory(torch.device(old))
        log.warning("detector moved to the CPU: %s", reason)
        if self.on_fallback is not None:
            self.on_fallback(reason)


def load_detector(path_or_name: str | os.PathLike, device: str = "auto", class_map: Mapping | None = None) -> Detector:
    """Load an ultralytics detector `.pt` (a user-picked file or a manifest name) on a device.

    class_map: override {class name or id: "bubble" | "text" | "other"} on top of the name rules.
    Raises ModelError with the file and what to do when the file is missing or not a YOLO model.
    """
    path = resolve_detector_path(path_or_name)
    device = resolve_device(device)
    import_ultralytics()
    from ultralytics import YOLO

    try:
        model = YOLO(str(path))
    except (TypeError, ValueError, RuntimeError, EOFError, OSError, ModuleNotFoundError, AttributeError,
            KeyError) as exc:
        raise ModelError(f"{path}: could not load as an ultralytics YOLO model ({exc}); "
                         "pick a detector .pt trained with ultralytics") from exc
    task = getattr(model, "task", None)
    if task not in ("detect", "segment"):
        raise ModelError(f"{path}: a YOLO {task!r} model; pick a detection or segmentation model")
    try:
        detector = Detector(model, path, device, class_map)
    except ValueError as exc:
        raise ModelError(f"{path}: {exc}") from exc
    # The first predict() builds ultralytics' predictor and fuses conv + batch-norm layers, so its
    # numbers differ from later calls in the last bits: warm up once, so the first page of a run
    # gives exactly what a re-run of that page gives.
    from PIL import Image

    detector.detect([Image.new("RGB", (32, 32), "white")], imgsz=32)
    log.info("loaded %r", detector)
    return detector
