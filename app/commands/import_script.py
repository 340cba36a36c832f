"""`hayai-desktop import-script`: bring a script edited in a spreadsheet back into the project.

    hayai-desktop import-script INPUT SCRIPT.csv [--format csv|tsv] [--dry-run]

INPUT is the folder / CBZ archive / image with its saved project, or a project file. SCRIPT is
a CSV / TSV file in the layout `hayai-desktop export INPUT --out SCRIPT.csv` writes (File >
Export > Script as CSV in the app). Each row is matched by page and block id; its source and
translation cells replace the block's, nothing else changes. Rows that match no block are listed.
The project is saved under its lock (not while the app or another command holds it).

Exit status: 0 when every row was placed, 1 when some were not (the others are imported), 2 for
an error.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.errors import UserError


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("import-script", help="import a script (CSV / TSV) edited in a spreadsheet",
                              description=__doc__.split("\n\n", 1)[1],
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", metavar="INPUT", help="a folder / archive / image with its saved project, or a project file")
    p.add_argument("script", metavar="SCRIPT", help="the CSV / TSV file")
    p.add_argument("--format", choices=("csv", "tsv"), help="default: from SCRIPT's suffix (.tsv -> tsv), else csv")
    p.add_argument("--dry-run", action="store_true", help="report what would change; save nothing")
    p.set_defaults(run=run)
    return p


def run(args) -> int:
    from app.core.exports.script_table import import_script
    from app.core.project.codec import FORMAT
    from app.core.project.files import load_project, save_project
    from app.core.project.lock import ProjectLock
    from app.core.project.paths import find_project_file
    from app.core.sources.source import resolve_source_path

    p = Path(args.input).expanduser()
    if not p.exists():
        raise UserError(f"{args.input}: no such folder, archive, image or project file")
    if p.is_file() and p.suffix.lower() == ".json":
        from app.core.exports.json_read import read_json

        if read_json(p).get("format") != FORMAT:
            raise UserError(f"{p}: a JSON export, not a project. Give the folder or archive whose project "
                            "the script belongs to.")
        saved, source = p, load_project(p).source
    else:
        source = resolve_source_path(p)
        saved = find_project_file(source)
        if saved is None:
            raise UserError(f"{p}: no saved project (nothing read yet). Open it in the app or run "
                            "`hayai-desktop ocr` first.")
    lock = ProjectLock(source, "hayai-desktop import-script")
    if not args.dry_run and not lock.acquire():
        raise UserError(f"{lock.message()} Close it there, then import again.")
    try:
        project = load_project(saved)
        result = import_script(project, args.script, args.format)
        for line in result.warnings:
            print(f"hayai-desktop: {line}", file=sys.stderr)
        if project.read_only and result.updated:
            raise UserError(project.read_only)
        if result.updated and not args.dry_run:
            save_project(result.project, saved)
        verb = "would change" if args.dry_run else "changed"
        print(f"{verb} {result.updated} block(s) from {args.script}"
              + (f"; {len(result.warnings)} row(s) not placed" if result.warnings else ""), file=sys.stderr)
    finally:
        if not args.dry_run:
            lock.release()
    return 1 if result.warnings else 0
