"""Helpers shared by the subcommands."""
from __future__ import annotations

import sys

from app.errors import UserError


def add_model_options(parser) -> None:
    parser.add_argument("--model", default="nova",
                        help="OCR model folder or model-store name (default: nova, Hayai v2.5 Nova)")
    parser.add_argument("--patches", type=int, default=384, help="patch budget per crop (256 / 384 / 512 ...)")
    parser.add_argument("--max-new-tokens", type=int, default=128, help="most tokens generated per crop")
    parser.add_argument("--device", default="auto", choices=["auto", "cuda", "mps", "cpu"])
    parser.add_argument("--batch-size", type=int, default=None, help="crops decoded together")


def check_model_options(args) -> None:
    if args.patches < 1:
        raise UserError(f"--patches must be a positive number of patches, got {args.patches}")
    if args.max_new_tokens < 1:
        raise UserError(f"--max-new-tokens must be positive, got {args.max_new_tokens}")
    if args.batch_size is not None and args.batch_size < 1:
        raise UserError(f"--batch-size must be positive, got {args.batch_size}")


class ProgressLine:
    """A one-line progress bar on stderr when it is a terminal; silent otherwise."""

    def __init__(self, label: str, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.label = label

    def __call__(self, done: int, total: int, extra: str = "") -> None:
        if not self.enabled or total <= 0:
            return
        width = 30
        filled = int(width * done / total)
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {extra}")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()


def load_recognizer_for(args):
    from app.ocr.recognizer import load_recognizer

    return load_recognizer(args.model, device=args.device)
