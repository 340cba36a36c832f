"""`hayai-desktop check`: the consistency check of a translated volume (app.core.translation.consistency).

    hayai-desktop check INPUT [--glossary FILE] [--no-layout] [--lang LANG]

INPUT is a JSON export, a project file, or the folder / archive with its saved project (as for
`render`). One line per finding, tab-separated: page, block number, kind, detail. Kinds:
inconsistent (the same source line translated differently), name (a glossary or story-memory
name not used where its source occurs), untranslated (an answer that is not a translation, or
no translation at all), degenerate (an answer that looks degenerate: one word for a sentence,
far shorter than its source), repeated (one translation for different lines), below_min (lettered below the style's minimum size) and clipped (does not fit at all). The
layout kinds letter the pages as the export does, from the project's source images
(--no-layout skips them). Exit status: 0 when nothing was found, 1 when something was, 2 for an
error.
"""
from __future__ import annotations

import argparse
import sys


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("check", help="consistency check: names, repeated lines, untranslated and clipped blocks",
                              description=__doc__.split("\n\n", 1)[1],
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", metavar="INPUT", help="a JSON export, a project file, or a folder / archive with its project")
    p.add_argument("--glossary", metavar="FILE", help="a glossary file checked too (TSV, 'a -> b' lines or JSON)")
    p.add_argument("--no-layout", action="store_true", help="skip the lettering checks (no page images needed)")
    p.add_argument("--lang", default="en", help="hyphenation language of the translation (default: en)")
    p.set_defaults(run=run)
    return p


def run(args) -> int:
    from app.commands.render import load_input
    from app.core.exports.translated_pages import RenderOptions
    from app.core.translation.consistency import check_project
    from app.translate.glossary import load_glossary

    project = load_input(args.input)
    glossary = load_glossary(args.glossary) if args.glossary else []
    findings, skipped = check_project(project, glossary, layout=not args.no_layout,
                                      options=RenderOptions(lang=args.lang))
    for name, why in skipped:
        print(f"hayai-desktop: page {name}: {why}", file=sys.stderr)
    if findings:
        print("page\tblock\tkind\tdetail")
    for f in findings:
        print(f.line())
    print(f"hayai-desktop: {len(findings)} finding(s)" + (" " + _counts(findings) if findings else ""), file=sys.stderr)
    return 1 if findings else 0


def _counts(findings) -> str:
    from collections import Counter

    counts = Counter(f.kind for f in findings)
    return "(" + ", ".join(f"{k}: {n}" for k, n in sorted(counts.items())) + ")"
