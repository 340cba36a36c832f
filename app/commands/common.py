"""Helpers shared by the subcommands."""
from __future__ import annotations

import os
import sys

from app.core.reading.spec import DEFAULT_DETECTOR, PipelineSpec
from app.errors import UserError
from app.models.manifest import DEFAULTS
from app.ocr import PRECISIONS


def add_model_options(parser) -> None:
    parser.add_argument("--model", default=DEFAULTS["ocr"],
                        help=f"OCR model folder or model-store name (default: {DEFAULTS['ocr']})")
    parser.add_argument("--patches", type=int, default=384, help="patch budget per crop (256 / 384 / 512 ...)")
    parser.add_argument("--max-new-tokens", type=int, default=128, help="most tokens generated per crop")
    parser.add_argument("--device", default="auto", choices=["auto", "cuda", "mps", "cpu"])
    parser.add_argument("--precision", default="auto", choices=list(PRECISIONS),
                        help="auto (default: the fastest that keeps accuracy on this device), fp32 (exact), "
                             "bf16, fp16 (GPU) or int8 (CPU)")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="crops decoded together (default: the recognizer's choice for the device)")
    parser.add_argument("--adapter", default="", metavar="FILE",
                        help="read with an OCR adapter made by `hayai-desktop adapt` (for the same --model)")


def add_detector_options(parser) -> None:
    """--detector --imgsz --conf --order: the page pipeline's detection options (ocr, eval)."""
    parser.add_argument("--detector", default=DEFAULT_DETECTOR,
                        help=f"detector name from the model store or a YOLO .pt file (default: {DEFAULT_DETECTOR})")
    parser.add_argument("--imgsz", type=int, default=None,
                        help="detector input size in pixels (default: the size the detector was trained at)")
    parser.add_argument("--conf", type=float, default=0.25, help="detector minimum score (default 0.25)")
    parser.add_argument("--order", choices=("rtl", "ltr"), default="rtl",
                        help="reading order: rtl for manga (default), ltr for comics and webtoons")


def check_detector_options(args) -> None:
    if (args.imgsz is not None and args.imgsz < 32) or not 0.0 <= args.conf <= 1.0:
        raise UserError(f"--imgsz must be at least 32 (got {args.imgsz}) and --conf between 0 and 1 (got {args.conf})")


def spec_for(args) -> PipelineSpec:
    """The pipeline set-up that the options of `args` ask for (app.core.reading.spec)."""
    from app.core.reading.pipeline import PipelineSettings

    check_detector_options(args)
    settings = PipelineSettings(patches=args.patches, max_new_tokens=args.max_new_tokens, order=args.order,
                                batch_size=args.batch_size,  # None: the recognizer's policy, as in the GUI
                                imgsz=args.imgsz, conf=args.conf)
    return PipelineSpec(model=args.model, detector=args.detector, device=args.device, settings=settings,
                        precision=getattr(args, "precision", "auto"), adapter=getattr(args, "adapter", ""))


def load_pipeline_for(args):
    """Load the detector and the recognizer of `args` -> app.core.reading.pipeline.Pipeline."""
    from app.core.reading.spec import load_pipeline

    return load_pipeline(spec_for(args))


def check_model_options(args) -> None:
    if args.patches < 1:
        raise UserError(f"--patches must be a positive number of patches, got {args.patches}")
    if args.max_new_tokens < 1:
        raise UserError(f"--max-new-tokens must be positive, got {args.max_new_tokens}")
    if args.batch_size is not None and args.batch_size < 1:
        raise UserError(f"--batch-size must be positive, got {args.batch_size}")


def tqdm_size(stream) -> dict:
    """tqdm's size arguments for a bar on `stream`: the terminal's own size, 80 x 24 where it
    reports none (a pseudo-terminal whose size was never set says 0 x 0, and tqdm then draws
    nothing: it takes the bar's line to lie below the screen's last row)."""
    try:
        size = os.get_terminal_size(stream.fileno())
        cols, rows = size.columns, size.lines
    except (AttributeError, OSError, ValueError):
        cols = rows = 0
    return {"ncols": cols if cols > 0 else 80, "nrows": rows if rows > 0 else 24}


class ProgressLine:
    """A one-line progress bar (tqdm) on stderr when it is a terminal; silent otherwise. Called
    with (done, total, extra); the bar ends its line when done reaches total."""

    def __init__(self, label: str, stream=None, unit: str = "page"):
        self.stream = stream or sys.stderr
        self.label, self.unit = label, unit
        self.bar = None

    def __call__(self, done: int, total: int, extra: str = "") -> None:
        if total <= 0:
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=self.label, unit=self.unit, file=self.stream, disable=None,
                            **tqdm_size(self.stream))
        bar = self.bar
        bar.total = total
        if extra:
            bar.set_postfix_str(extra, refresh=False)
        bar.update(done - bar.n)
        if done >= total:
            self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def load_recognizer_for(args):
    from app.ocr.recognizer import load_recognizer

    return load_recognizer(args.model, device=args.device, precision=getattr(args, "precision", "auto"),
                           adapter=getattr(args, "adapter", "") or None)
