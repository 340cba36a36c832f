"""hayai-desktop recognize [--model ...] [--patches N] [--json] IMAGE...: each image is one crop."""
from __future__ import annotations

import json
import sys

from app.commands.common import ProgressLine, add_model_options, check_model_options, load_recognizer_for


def add_parser(sub) -> None:
    p = sub.add_parser("recognize", help="read crops (each image is one text block)")
    add_model_options(p)
    p.add_argument("--json", action="store_true", help="print a JSON array: image, text, tokens")
    p.add_argument("images", nargs="+", metavar="IMAGE")
    p.set_defaults(run=run)


def run(args) -> int:
    from app.core.sources.images import load_image

    check_model_options(args)
    images = [load_image(path) for path in args.images]  # ImageError names the file
    recognizer = load_recognizer_for(args)
    results = recognizer.recognize(images, max_num_patches=args.patches, max_new_tokens=args.max_new_tokens,
                                   batch_size=args.batch_size, progress=ProgressLine("reading"))
    if args.json:
        out = [{"image": path, "text": r.text, "tokens": r.tokens} for path, r in zip(args.images, results)]
        json.dump(out, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        for r in results:
            sys.stdout.write(r.text.replace("\n", " ") + "\n")
    return 0
