"""`hayai-desktop eval-translation`: how good a translation backend and its settings are on
volumes whose reference translations are known.

    hayai-desktop eval-translation REFERENCES [--to en|zh] [--book TITLE ...] [--pages N]
        [--provider ... --base-url ... --model ... (the translate options)]
        [--page-image auto|on|off] [--context-pages N] [--memory on|off]
        [--translations DIR] [--save DIR] [--json FILE]

REFERENCES is an annotation file in the OpenMantra format (or the folder holding
annotation.json and images/). Each book is translated page by page through the same stage as
`translate` (page images from the annotation's images/ folder when the backend takes them),
then scored: corpus chrF and BLEU (sacrebleu) and name accuracy, per book and overall.
--translations DIR scores translations made before instead (DIR/<book>.json, JSON exports as
--save writes them), so that nothing is sent. Exit status 0, 2 for a usage or setup error.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.errors import UserError


def add_parser(subparsers) -> argparse.ArgumentParser:
    from app.commands.translate import add_translation_options

    p = subparsers.add_parser("eval-translation", help="score translations against reference translations",
                              description=__doc__.split("\n\n", 2)[2],
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("references", metavar="REFERENCES", help="OpenMantra-format annotation.json (or its folder)")
    p.add_argument("--book", action="append", default=[], metavar="TITLE", help="only this book (repeatable)")
    p.add_argument("--pages", type=int, default=0, metavar="N", help="only the first N pages of each book")
    p.add_argument("--translations", metavar="DIR", help="score the JSON exports in DIR (<book>.json) instead")
    p.add_argument("--save", metavar="DIR", help="write each book's translation as DIR/<book>.json")
    p.add_argument("--json", metavar="FILE", help="write the scores as JSON too")
    add_translation_options(p, model_flag="--model")
    p.set_defaults(run=run)
    return p


def run(args) -> int:
    from app.core.exports import json_txt
    from app.core.exports.json_read import read_json_export
    from app.core.translation.evaluation import evaluate, load_references

    target = args.target or "en"
    if args.pages < 0:
        raise UserError("--pages must be at least 0")
    books = load_references(args.references, target, args.book, args.pages)
    if not books:
        raise UserError(f"{args.references}: no books")
    args.target = target
    if args.source_lang is None:
        args.source_lang = "ja"

    if args.translations:
        folder = Path(args.translations)

        def translate(book):
            path = folder / f"{book.title}.json"
            if not path.is_file():
                raise UserError(f"{path}: no translation of {book.title} (write them with --save DIR)")
            done = read_json_export(path)
            by_name = {p.name: p for p in done.pages}
            project = book.project()
            project.pages = [by_name.get(p.name, p) for p in project.pages]
            return project
        translator = None
    else:
        from app.commands.translate import (
            key_flags,
            make_translator_for,
            translate_project,
            translator_settings,
        )

        settings = translator_settings(args)
        translator = make_translator_for(settings, args.trust_unpinned, **key_flags(args))

        def translate(book):
            project = book.project()
            print(f"hayai-desktop: {book.title}: {len(project.pages)} page(s), "
                  f"{sum(len(p.blocks) for p in project.pages)} block(s)", file=sys.stderr)
            translate_project(project, args, translator=translator)
            if args.save:
                Path(args.save).mkdir(parents=True, exist_ok=True)
                json_txt.export_json(project, Path(args.save) / f"{book.title}.json")
            return project
    try:
        rows = evaluate(books, translate, target)
    finally:
        if translator is not None:
            translator.close()
    print(f"{'book':<24} {'segments':>8} {'translated':>10} {'chrF':>7} {'BLEU':>7} {'names':>12}")
    for r in rows:
        names = "n/a" if r.name_accuracy is None else f"{r.name_accuracy:.1%} ({r.names_hit}/{r.names_total})"
        print(f"{r.book:<24} {r.segments:>8} {r.translated:>10} {r.chrf:>7.2f} {r.bleu:>7.2f} {names:>12}")
    if args.json:
        settings_note = {"page_image": args.page_image, "context_pages": args.context_pages, "memory": args.memory,
                         "provider": args.provider, "model": args.translation_model}
        Path(args.json).write_text(json.dumps({"settings": settings_note, "scores": [r.as_dict() for r in rows]},
                                              indent=2, ensure_ascii=False), encoding="utf-8")
    return 0
