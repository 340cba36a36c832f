"""hayai-desktop eval --model ... --patches N DATA.jsonl: CER and exact match (model card style).

Each line of DATA.jsonl: {"image": "path/relative/to/the/file.png", "text": "reference"}.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from app.commands.common import ProgressLine, add_model_options, check_model_options, load_recognizer_for
from app.errors import UserError


def add_parser(sub) -> None:
    p = sub.add_parser("eval", help="CER and exact match on a JSONL of crops and references")
    add_model_options(p)
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--errors", type=int, default=0, metavar="N", help="also list the first N mismatches")
    p.add_argument("data", metavar="DATA.jsonl")
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
    from app.core.images import load_image
    from app.ocr.text import normalize, score

    check_model_options(args)
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
