"""hayai-desktop eval: how well the models read data with known text.

    hayai-desktop eval [--model ...] [--patches N] DATA.jsonl
        crops: CER and exact match (model card style). Each line of DATA.jsonl:
        {"image": "path/relative/to/the/file.png", "text": "reference"}.

    hayai-desktop eval [--model ...] [--detector ...] [--imgsz PX] [--conf S] PAGES_FOLDER
        whole pages through the app's pipeline (detect -> order -> crop -> read): block recall
        and precision at IoU >= --iou (0.5), CER of the matched blocks, and the end-to-end CER
        that counts missed blocks as unread (app/core/reading/evaluation.py). Each page has a truth file
        beside it: {"image": "page.png", "blocks": [{"box": [x0, y0, x1, y1], "text": ...,
        "kind": "bubble" | "text"}]}, the format tools/synth writes.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.commands.common import (
    ProgressLine,
    add_detector_options,
    add_model_options,
    check_detector_options,
    check_model_options,
    load_pipeline_for,
    load_recognizer_for,
)
from app.errors import UserError


def add_parser(sub) -> None:
    p = sub.add_parser("eval", help="CER of crops (DATA.jsonl), or block recall + CER of pages with truth (a folder)",
                       description=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_options(p)
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--errors", type=int, default=0, metavar="N", help="also list the first N mismatches")
    pages = p.add_argument_group("pages (DATA is a folder)")
    add_detector_options(pages)  # --detector --imgsz --conf --order
    pages.add_argument("--iou", type=float, default=0.5, help="IoU a found block needs to match a truth block")
    p.add_argument("data", metavar="DATA", help="a JSONL of crops and texts, or a folder of pages with truth files")
    p.set_defaults(run=run)


def read_jsonl(path: Path) -> list[tuple[Path, str]]:
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    items = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            image, text = row["image"], row["text"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise UserError(f"{path}:{n}: expected a JSON object with \"image\" and \"text\"") from None
        items.append(((path.parent / image), str(text)))
    if not items:
        raise UserError(f"{path}: no samples")
    return items


def run(args) -> int:
    check_model_options(args)
    if Path(args.data).is_dir():
        return run_pages(args)
    return run_crops(args)


def run_crops(args) -> int:
    from app.core.sources.images import load_image
    from app.ocr.text import normalize, score

    items = read_jsonl(Path(args.data))
    images = [load_image(p) for p, _ in items]
    recognizer = load_recognizer_for(args)
    results = recognizer.recognize(images, max_num_patches=args.patches, max_new_tokens=args.max_new_tokens,
                                   batch_size=args.batch_size, progress=ProgressLine("evaluating"))
    preds = [r.text for r in results]
    refs = [t for _, t in items]
    s = score(preds, refs)
    if args.json:
        json.dump({"model": recognizer.name, "patches": args.patches, "samples": s.count,
                   "cer": s.cer, "exact_match": s.exact_match}, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(f"model {recognizer.name}  patches {args.patches}  samples {s.count}")
        print(f"CER {100 * s.cer:.2f} %  exact match {100 * s.exact_match:.2f} %")
    shown = 0
    for (path, ref), pred in zip(items, preds):
        if shown >= args.errors:
            break
        if normalize(pred) != normalize(ref):
            print(f"  {path.name}: {normalize(ref)!r} -> {normalize(pred)!r}")
            shown += 1
    return 0


def _percent(value: float) -> str:
    return f"{100 * value:.1f} %"


def run_pages(args) -> int:
    from app.core.reading.evaluation import evaluate_pages, read_truth_folder
    from app.ocr.text import normalize

    check_detector_options(args)
    if not 0.0 < args.iou <= 1.0:
        raise UserError(f"--iou must be above 0 and at most 1, got {args.iou}")
    folder = Path(args.data)
    truth = read_truth_folder(folder)  # before loading models: a wrong folder fails fast
    pipeline = load_pipeline_for(args)
    detector, recognizer = pipeline.detector, pipeline.recognizer
    bar = ProgressLine("evaluating")
    result = evaluate_pages(pipeline, folder, truth, args.iou, progress=lambda p: bar(p.pages_done, p.pages_total))
    f = result.figures()
    if args.json:
        json.dump({"model": recognizer.name, "detector": detector.name, "patches": args.patches,
                   "imgsz": args.imgsz or detector.imgsz, "conf": args.conf, "iou": args.iou, **f},
                  sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        kinds = ", ".join(f"{k} {_percent(v)}" for k, v in f["recall_by_kind"].items())
        print(f"model {recognizer.name}  detector {detector.name} at {args.imgsz or detector.imgsz} px  "
              f"patches {args.patches}  pages {f['pages']}")
        print(f"blocks: {f['truth_blocks']} in the truth, {f['found_blocks']} found, {f['matched_blocks']} matched "
              f"at IoU >= {args.iou:g}")
        print(f"recall {_percent(f['recall'])} ({kinds})  precision {_percent(f['precision'])}")
        print(f"CER {_percent(f['cer'])} on matched blocks (exact match {_percent(f['exact_match'])}); "
              f"end-to-end CER {_percent(f['end_to_end_cer'])} counting missed blocks as unread")
        for name, error in result.errors:
            print(f"  page {name}: {error}")
        shown = 0
        for pred, ref in result.matched_texts:
            if shown >= args.errors:
                break
            if normalize(pred) != normalize(ref):
                print(f"  {normalize(ref)!r} -> {normalize(pred)!r}")
                shown += 1
    return 1 if result.errors else 0
