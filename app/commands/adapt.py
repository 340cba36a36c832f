"""hayai-desktop adapt PROJECT_OR_SERIES [--out FILE] [--epochs N]: teach the OCR model the
corrections of a series (its volumes' saved projects) or of one volume, and print the report.

The adapter is written (beside the series file, or the volume's project file, unless --out
says where) only when it reads the held-out corrections better and the confirmed blocks no
worse; `ocr`, `eval`, `batch` and `recognize` read with it through --adapter FILE. Taught
again, the adapter it replaces is kept as *.previous.safetensors; --step-back goes back to it.
"""
from __future__ import annotations

import json
import sys

from app.commands.common import ProgressLine, check_model_options, load_recognizer_for
from app.errors import UserError


def add_parser(sub) -> None:
    p = sub.add_parser("adapt", help="teach the OCR the corrections of a series or a volume",
                       description=__doc__.split("\n\n", 1)[1])
    p.add_argument("target", metavar="PROJECT_OR_SERIES",
                   help="a series file or folder (every volume with a saved project), a project file or a volume")
    p.add_argument("--out", metavar="FILE", help="where the adapter goes (default: beside the series file or project)")
    p.add_argument("--epochs", type=int, default=30, help="most passes over the corrections (default 30; training "
                                                           "stops earlier when the held-out corrections stop improving)")
    p.add_argument("--lr", type=float, default=1e-3, help="learning rate (default 1e-3)")
    p.add_argument("--rehearse", type=float, default=1.0,
                   help="clean crops drawn in the app's faces per training correction, so that plain print is not "
                        "forgotten (default 1; 0: none, faster)")
    p.add_argument("--augment", default="auto", metavar="N",
                   help="N varied copies of each training correction, its box's margins moved as another "
                        "detection would take it, a little blur and tone (default auto: 2 for a small model such "
                        "as the demo recognizer, where they read real pages better; none for a real-size model, "
                        "where each copy costs as much time as a correction)")
    p.add_argument("--join", default="auto", metavar="N",
                   help="N crops per training correction made of two of them in one box, one after the other in a "
                        "column or as the next column, their texts joined (default auto: 1 for a small model such as "
                        "the demo recognizer, where they read real pages better; none for a real-size model, where "
                        "each costs as much time as a correction)")
    p.add_argument("--soup", type=int, default=1, metavar="K",
                   help="train K times, each with its own held-out pages and order, and keep the average of the "
                        "trainings as one adapter (default 1; 3 read the synthetic unseen face better at K times "
                        "the time)")
    p.add_argument("--feature-dropout", type=float, default=0.1, metavar="P",
                   help="chance that a value of the cached crop features is zeroed at a training step (default 0.1; "
                        "0: every epoch sees the crops as the last did)")
    p.add_argument("--decay", type=float, default=None, metavar="EPOCHS",
                   help="halve the learning rates every EPOCHS epochs, a little at each step (default 0: the "
                        "rates stay as set, which read real pages better)")
    p.add_argument("--max-minutes", type=float, default=0.0, metavar="M",
                   help="keep the whole run within M minutes: training stops in time and keeps the best epoch so far "
                        "(default 0: no limit; it stops when the held-out corrections stop improving)")
    p.add_argument("--mixed", default="auto", choices=["auto", "bf16", "off"],
                   help="bfloat16 mixed precision (default auto: for a real-size model where the CPU or GPU computes "
                        "bf16 natively; off: float32)")
    p.add_argument("--whole", default="auto", choices=["auto", "on", "off"],
                   help="train the decoder's own weights too, beside its low-rank adapters (default auto: for a small "
                        "model such as the demo recognizer; a real-size model keeps to the adapters)")
    p.add_argument("--refit", default="auto", choices=["auto", "on", "off"],
                   help="once the held-out corrections have chosen the epochs, train again from the start on every "
                        "correction, the held-out ones too, kept when plain print and the confirmed blocks read no "
                        "worse (default auto: for a small model such as the demo recognizer; a real-size model, "
                        "where it takes as long again, does not)")
    p.add_argument("--seed", type=int, default=0, help="seed of the held-out split and the training (default 0)")
    p.add_argument("--model", default=None, help="OCR model folder or model-store name (default: the app's)")
    p.add_argument("--device", default="auto", choices=["auto", "cuda", "mps", "cpu"])
    p.add_argument("--step-back", action="store_true",
                   help="teach nothing: the adapter and the one it replaced (*.previous.safetensors beside it) change "
                        "places, so the one before is read with again (the same again goes forward)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    from pathlib import Path

    from app.core.reading.corrections import resolve_target, run_adapt, step_back
    from app.models.manifest import DEFAULTS
    from app.ocr.adapt import MAX_AUGMENT, AdaptSettings

    if args.step_back:
        adapter = Path(args.out) if args.out else resolve_target(args.target).adapter_path
        newer = step_back(adapter)
        print(f"adapter: {adapter} (the one before, read with again)")
        print(f"the newer one is kept as {newer}" if newer.is_file() else "no newer one was there")
        return 0
    if args.epochs < 1:
        raise UserError(f"--epochs must be at least 1, got {args.epochs}")
    if args.rehearse < 0:
        raise UserError(f"--rehearse must be 0 or more, got {args.rehearse}")
    if args.augment != "auto":
        if not (args.augment.isdigit() and 0 <= int(args.augment) <= MAX_AUGMENT):
            raise UserError(f"--augment must be auto or 0 to {MAX_AUGMENT}, got {args.augment}")
        args.augment = int(args.augment)
    if args.join != "auto":
        try:
            join = float(args.join)
        except ValueError:
            join = -1.0
        if not 0 <= join <= MAX_AUGMENT:
            raise UserError(f"--join must be auto or a number from 0 to {MAX_AUGMENT}, got {args.join}")
        args.join = join
    if not 1 <= args.soup <= MAX_AUGMENT:
        raise UserError(f"--soup must be a number of trainings from 1 to {MAX_AUGMENT}, got {args.soup}")
    if not 0 <= args.feature_dropout < 1:
        raise UserError(f"--feature-dropout must be at least 0 and below 1, got {args.feature_dropout}")
    if args.decay is not None and not args.decay >= 0:
        raise UserError(f"--decay must be 0 (the rates stay as set) or more epochs, got {args.decay}")
    if not args.max_minutes >= 0:
        raise UserError(f"--max-minutes must be 0 (no limit) or more, got {args.max_minutes}")
    if not args.lr > 0:
        raise UserError(f"--lr must be positive, got {args.lr}")
    args.model = args.model or DEFAULTS["ocr"]
    args.patches, args.max_new_tokens, args.batch_size, args.precision, args.adapter = 384, 128, None, "fp32", ""
    check_model_options(args)
    recognizer = load_recognizer_for(args)

    bars: dict[str, ProgressLine] = {}

    def progress(stage, done, total):  # one tqdm bar a stage: the crops' features, then the training steps
        if list(bars)[-1:] != [stage]:  # a new stage, or one again (the next training averaged, --soup)
            for bar in bars.values():
                bar.close()
            bars.pop(stage, None)
            bars[stage] = ProgressLine(stage, unit={"features": "crop", "comparing": "adapter"}.get(stage, "step"))
        bars[stage](done, total)

    result, path = run_adapt(args.target, recognizer, AdaptSettings(epochs=args.epochs, lr=args.lr, seed=args.seed,
                                                                   rehearse=args.rehearse, augment=args.augment,
                                                                   join=args.join, soup=args.soup,
                                                                   mixed=args.mixed, whole=args.whole, refit=args.refit,
                                                                   feature_dropout=args.feature_dropout,
                                                                   max_minutes=args.max_minutes,
                                                                   **({} if args.decay is None
                                                                      else {"decay": args.decay})),
                             out=args.out, progress=progress)
    for bar in bars.values():
        bar.close()
    if args.json:
        json.dump({**result.as_dict(), "adapter": str(path) if path else None}, sys.stdout, ensure_ascii=False,
                  indent=2)
        sys.stdout.write("\n")
    else:
        print(result.summary())
        print(f"adapter: {path}" if path else "no adapter written")
        if result.replaced:
            print(f"the adapter it replaced: {result.replaced}")
    return 0 if result.kept else 1
