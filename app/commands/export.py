"""`hayai-desktop export`: a project's text in another format, without the GUI (File > Export).

    hayai-desktop export INPUT --out OUT [--format mokuro|reader|json|txt] [--title NAME]
        [--volume NAME] [--no-reader-page] [--translations]
    hayai-desktop export INPUT --out SCRIPT.csv [--format csv|tsv]

INPUT is a JSON export, a project file, the folder / CBZ archive / image with its saved project,
or a mokuro volume (a .mokuro file, or the folder holding it).

- mokuro: OUT is a folder (the series' folder). It receives VOLUME.mokuro, the page images in
  VOLUME/ and the reader page VOLUME.html (not with --no-reader-page): the layout mokuro writes,
  which mokuro's readers open. VOLUME defaults to the source's name, the title to its parent
  folder's name. The series' UUID is kept in the saved project, so exporting again keeps a
  reader's progress.
- reader: OUT is one HTML file holding the pages (images inside it) with the text selectable over
  them and the translations on hover or with a toggle; opens in a browser with no network.
- json, txt: the JSON / TXT exports (--translations: the TXT variant with translations).
- csv, tsv: the script, one row per block (page, page_name, block, block_id, kind, source,
  translation, notes), for a spreadsheet; `hayai-desktop import-script` brings it back.

The format defaults to OUT's suffix (.html -> reader, .json, .txt, .csv, .tsv), else mokuro. Exit status: 0
when every page was written, 1 when a page was skipped (its image could not be read), 2 for an
error.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.errors import UserError

FORMATS = ("mokuro", "reader", "json", "txt", "csv", "tsv")


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("export", help="export a project: a mokuro volume, a reader page, JSON, TXT, or the script as CSV / TSV",
                              description=__doc__.split("\n\n", 1)[1],
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", metavar="INPUT",
                   help="a JSON export, a project file, a folder / archive with its project, or a .mokuro volume")
    p.add_argument("--out", required=True, help="output folder (mokuro) or file (reader, json, txt)")
    p.add_argument("--format", choices=FORMATS, help="output format (default: from --out's suffix, else mokuro)")
    p.add_argument("--title", help="mokuro: the series' name (default: the source's parent folder)")
    p.add_argument("--volume", help="mokuro: the volume's name, VOLUME.mokuro (default: the source's name)")
    p.add_argument("--no-reader-page", action="store_true", help="mokuro: do not write VOLUME.html")
    p.add_argument("--translations", action="store_true", help="txt: the variant with translations")
    p.set_defaults(run=run)
    return p


def _format_for(args) -> str:
    if args.format:
        return args.format
    suffix = Path(args.out).suffix.lower()
    return {".html": "reader", ".htm": "reader", ".json": "json", ".txt": "txt", ".csv": "csv",
            ".tsv": "tsv"}.get(suffix, "mokuro")


def _save_back(input_path: str, series_uuid: str) -> None:
    """Keep the series' UUID in the input's saved project (a source's project, a project file),
    under the project's lock and read again just before, so that no one's edits are written over."""
    from app.core.exports.json_read import read_json
    from app.core.project.codec import FORMAT
    from app.core.project.files import load_project, save_project
    from app.core.project.lock import ProjectLock
    from app.core.project.paths import find_project_file
    from app.core.sources.source import resolve_source_path

    p = Path(input_path).expanduser()
    if p.is_file() and p.suffix.lower() == ".json":
        if read_json(p).get("format") != FORMAT:
            return  # a JSON export: exporting again over the same .mokuro keeps its UUIDs
        saved, source = p, load_project(p).source
    else:
        source = resolve_source_path(p)
        saved = find_project_file(source)
        if saved is None:
            return  # a .mokuro volume never saved as a project: its own UUIDs are kept
    lock = ProjectLock(source, "hayai-desktop export")
    if not lock.acquire():
        print(f"hayai-desktop: {lock.message()} The series' UUID is not saved in the project; exporting "
              "again into the same folder keeps it all the same.", file=sys.stderr)
        return
    try:
        project = load_project(saved)
        if project.read_only or project.series_uuid:
            return
        project.series_uuid = series_uuid
        save_project(project, saved)
    finally:
        lock.release()


def run(args) -> int:
    from app.commands.common import ProgressLine
    from app.commands.render import load_input
    from app.core.exports import json_txt, mokuro

    fmt = _format_for(args)
    project = load_input(args.input)
    bar = ProgressLine(f"export ({fmt})")
    progress = lambda done, total, _name: bar(done, total)  # noqa: E731
    if fmt == "json":
        json_txt.export_json(project, args.out)
        print(f"wrote {args.out} (json)", file=sys.stderr)
        return 0
    if fmt == "txt":
        json_txt.export_txt(project, args.out, translations=args.translations)
        print(f"wrote {args.out} (txt)", file=sys.stderr)
        return 0
    if fmt in ("csv", "tsv"):
        from app.core.exports.script_table import export_script

        export_script(project, args.out, fmt)
        print(f"wrote {args.out} ({fmt})", file=sys.stderr)
        return 0
    if fmt == "reader":
        result = mokuro.export_reader(project, args.out, title=args.title, volume=args.volume, progress=progress)
        where = str(result.html)
    else:
        if Path(args.out).suffix.lower() == mokuro.MOKURO_SUFFIX:
            raise UserError(f"--out {args.out}: give the folder to write the volume into; the .mokuro is "
                            "named after the volume (--volume)")
        result = mokuro.export_mokuro(project, args.out, title=args.title, volume=args.volume,
                                      reader_page=not args.no_reader_page, progress=progress)
        if result.project.series_uuid != project.series_uuid:
            _save_back(args.input, result.project.series_uuid)
        where = f"{result.mokuro}, {result.pages} page image(s) in {result.images}" + (
            f", {result.html}" if result.html else "")
    for name, why in result.skipped:
        print(f"hayai-desktop: page {name} skipped: {why}", file=sys.stderr)
    print(f"wrote {where}", file=sys.stderr)
    return 1 if result.skipped else 0
