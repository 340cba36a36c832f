"""`hayai-desktop render`: translated (or cleaned) pages without the GUI.

    hayai-desktop render INPUT --out OUT [--format png|jpg|webp|cbz|pdf|psd]
        [--text translation|source|none] [--inpaint auto|opencv|lama] [--font NAME_OR_FILE]
        [--device auto|cpu|cuda] [--lang LANG] [--sizes each|one|few]
        [--captions POLICY] [--sfx POLICY]

INPUT is a JSON export (`hayai-desktop ocr`, or the app's File > Export), a project file, or
the folder / CBZ archive / image itself with its saved project. The page images are read from
the project's source. png, jpg, webp and psd write one file per page into the folder OUT, named
after the page (001.png -> 001.png, 001.psd); cbz and pdf write the file OUT. The format
defaults to OUT's suffix (.cbz, .pdf), else png.

--text translation (default) cleans and letters the blocks that have a translation and leaves
the others as they are; --text source letters the transcription instead; --text none cleans
every block and letters nothing. --inpaint auto uses LaMa when it is installed (`hayai-desktop
models download lama-manga`) and OpenCV otherwise; a plain bubble is filled with its own colour
either way. --font replaces every block's font (a name such as "comic" or "DejaVu Sans", or a
font file). --sizes sets the project's size harmonisation for this run (each: every bubble at
the largest size that fits it; one: a page's bubbles at one size, the largest that most of them
take; few: up to three sizes a page); a page's own setting still wins. Text outside bubbles is
lettered as the project says (View > Text outside bubbles in the app); --captions and --sfx set
it for this run: translate (cleaned and lettered in place), keep (left as it is) or beside (left
as it is, a small translation lettered beside it). Blocks set below their
minimum size are named (page: block numbers) on stderr. Exit status: 0 when every page was written, 1 when a page was skipped, 2 for an
error.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.errors import UserError

FORMATS = ("png", "jpg", "webp", "cbz", "pdf", "psd")
OUTSIDE_POLICIES = ("translate", "keep", "beside")  # app.core.document.types.OUTSIDE_POLICIES (not imported: --help stays light)


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("render", help="clean the pages and letter the translations; export images, CBZ, PDF, PSD",
                              description=__doc__.split("\n\n", 1)[1],
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", metavar="INPUT", help="a JSON export, a project file, or a folder / archive with its project")
    p.add_argument("--out", required=True, help="output folder (png, jpg, webp, psd) or file (cbz, pdf)")
    p.add_argument("--format", choices=FORMATS, help="output format (default: from --out's suffix, else png)")
    p.add_argument("--text", choices=("translation", "source", "none"), default="translation",
                   help="what to letter (default: translation)")
    p.add_argument("--inpaint", choices=("auto", "opencv", "lama"), default="auto",
                   help="text removal engine (default: auto = LaMa when installed, else OpenCV)")
    p.add_argument("--font", default=None, help="font for every block: a name or a font file")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"), help="where LaMa runs")
    p.add_argument("--lang", default="en", help="hyphenation language of the translation (default: en)")
    p.add_argument("--sizes", choices=("each", "one", "few"), default=None,
                   help="size harmonisation of each page's bubbles (default: the project's, else each)")
    for flag, what in (("--captions", "captions (free text outside bubbles)"), ("--sfx", "sound effects")):
        p.add_argument(flag, choices=OUTSIDE_POLICIES, default=None,
                       help=f"how {what} are lettered: translate, keep or beside (default: the project's, "
                            "else translate)")
    p.set_defaults(run=run)
    return p


def load_input(path: str):
    """The Project that INPUT names (export, project file, source with its saved project, or a
    mokuro volume: a .mokuro file or the folder holding it)."""
    from app.core.exports.json_read import project_from_export, read_json
    from app.core.project.codec import FORMAT, project_from_dict
    from app.core.project.files import open_project
    from app.core.project.paths import find_project_file

    p = Path(path).expanduser()
    if not p.exists():
        raise UserError(f"{path}: no such export, project file, folder or archive")
    if p.is_file() and p.suffix.lower() == ".json":
        data = read_json(p)
        if data.get("format") == FORMAT:
            return project_from_dict(data, p)
        return project_from_export(data, p)
    from app.core.sources.mokuro_volume import mokuro_file_in
    from app.core.sources.source import resolve_source_path

    if find_project_file(resolve_source_path(p)) is None and mokuro_file_in(p.resolve()) is None:
        raise UserError(f"{p}: no saved project (nothing read or translated yet). Open it in the app, or run "
                        "`hayai-desktop ocr` and add translations, then render the project or its JSON export.")
    return open_project(p)


def _format_for(args) -> str:
    if args.format:
        return args.format
    suffix = Path(args.out).suffix.lower().lstrip(".")
    return suffix if suffix in ("cbz", "pdf") else "png"


def run(args) -> int:
    from app.commands.common import ProgressLine
    from app.core.exports.translated_pages import RenderOptions, export_translated, plan_output
    from app.render.fontfind import resolve_font
    from app.render.inpaint import load_inpainter

    fmt = _format_for(args)
    plan_output(fmt, args.out)
    if args.font:
        resolve_font(args.font)  # a bad name fails before any work
    project = load_input(args.input)
    if args.sizes:
        from dataclasses import replace

        project = replace(project, sizes=args.sizes)
    if args.captions or args.sfx:
        from dataclasses import replace

        outside = dict(project.outside)
        outside.update({k: v for k, v in (("caption", args.captions), ("sfx", args.sfx)) if v})
        project = replace(project, outside=outside)
    options = RenderOptions(text=args.text, font=args.font, lang=args.lang)
    engine = load_inpainter(args.inpaint, args.device)
    bar = ProgressLine(f"render ({engine.name})")
    report = export_translated(project, fmt, args.out, engine, options,
                               progress=lambda done, total, _name: bar(done, total))
    for name, why in report.skipped:
        print(f"hayai-desktop: page {name} skipped: {why}", file=sys.stderr)
    if report.below_min or report.overflow:
        print(f"hayai-desktop: {report.below_min} of {report.blocks} lettered block(s) needed a size below their "
              f"minimum ({report.overflow} did not fit at all and were cut to the bubble): "
              f"{report.below_min_text(limit=50)}", file=sys.stderr)
    where = args.out if fmt in ("cbz", "pdf") else f"{len(report.written)} file(s) in {args.out}"
    print(f"wrote {where} ({fmt}, {engine.name})", file=sys.stderr)
    return 1 if report.skipped else 0
