"""`hayai-desktop ocr`: pages to text without the GUI, through the same pipeline the GUI runs.

    hayai-desktop ocr SOURCE... [--out FILE|DIR] [--format json|txt] [--order rtl|ltr]
                      [--patches N] [--detector NAME_OR_PATH] [--model DIR_OR_NAME]
                      [--device auto|cpu|cuda|mps] [--batch-size N] [--max-new-tokens N]
                      [--imgsz PX] [--conf SCORE] [--translations] [--save-project]
                      [--translate --to LANG [translation options of `translate`]]

Output is what the GUI's export writes (app.core.exports.json_txt): JSON (the documented schema) or TXT.
- One source: written to --out FILE, or to stdout without --out.
- Several sources: --out names a directory (created if needed) that receives one file per
  source, `<source name>.<json|txt>`; without --out, TXT goes to stdout one source after another,
  each headed by `==> SOURCE <==`, and JSON asks for --out (one JSON document per source).
A page that cannot be read is reported on stderr and in the output (its error), the rest goes
on; the exit status is then 1 (0 when every page was read, 2 for a usage or model error).
With --translate, the pages read are then machine-translated (the `translate` command's stage and
options; the chat / offline model is --translation-model) and the output holds the translations;
blocks left untranslated also make the exit status 1.
With --save-project, the pages read also go into each source's project file (under its lock, as
the app and the local API save them), so that `translate`, `render`, `export`, `check` and
`import-script` can take the folder or archive itself.
A progress bar is drawn on stderr when stderr is a terminal.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from app.commands.common import (
    ProgressLine,
    add_detector_options,
    add_model_options,
    check_detector_options,
    check_model_options,
    load_pipeline_for,
)
from app.commands.translate import add_translation_options, translate_project, translator_settings
from app.errors import UserError


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("ocr", help="detect and read every page of folders or CBZ/ZIP archives",
                              description=__doc__.split("\n\n", 2)[2], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sources", nargs="+", metavar="SOURCE", help="a folder of pages, a CBZ/ZIP archive or an image")
    p.add_argument("--out", help="output file (one source) or directory (several); default: stdout")
    p.add_argument("--format", choices=("json", "txt"), help="output format (default: from --out's suffix, else json)")
    add_detector_options(p)  # --detector --imgsz --conf --order
    add_model_options(p)  # --model --patches --max-new-tokens --device --batch-size
    p.add_argument("--translations", action="store_true", help="TXT: the variant with translations")
    p.add_argument("--save-project", action="store_true",
                   help="also save the pages read into the source's project file (under its lock)")
    p.add_argument("--translate", action="store_true", help="machine-translate the pages read (see `translate`)")
    add_translation_options(p, model_flag="--translation-model")
    p.set_defaults(run=run)
    return p


class _ProgressBar:
    """The pipeline's progress as a tqdm bar on a terminal (common.ProgressLine); silent elsewhere."""

    def __init__(self, stream, label: str):
        self.line = ProgressLine(label, stream=stream)

    def __call__(self, p) -> None:
        self.line(p.pages_done, p.pages_total, f"{p.blocks_done}/{p.blocks_total} blocks")

    def close(self) -> None:
        self.line.close()


def _format_for(args, out: Path | None) -> str:
    if args.format:
        return args.format
    if out is not None and out.suffix.lower() == ".txt":
        return "txt"
    return "json"


def _plan_outputs(args) -> tuple[str, list[Path | None]]:
    """The format and, per source, the output file (None = stdout)."""
    sources = [Path(s) for s in args.sources]
    out = Path(args.out) if args.out else None
    if len(sources) == 1:
        if out is not None and out.is_dir():
            out = out / f"{sources[0].stem or sources[0].name}.{_format_for(args, None)}"
        return _format_for(args, out), [out]
    fmt = args.format or "json"
    if out is None:
        if fmt == "json":
            raise UserError("several sources in JSON need --out DIR (one file per source); or use --format txt")
        return fmt, [None] * len(sources)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: is a file; several sources need a directory (one output per source)")
    out.mkdir(parents=True, exist_ok=True)
    names = [f"{s.stem or s.name}.{fmt}" for s in sources]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise UserError(f"sources would write the same output file(s) {', '.join(sorted(dupes))}; run them separately")
    return fmt, [out / n for n in names]


def _export(project, fmt: str, path: Path, translations: bool) -> None:
    from app.core.exports import json_txt

    if fmt == "json":
        json_txt.export_json(project, path)
    else:
        json_txt.export_txt(project, path, translations=translations)


def _write(project, fmt: str, out: Path | None, translations: bool, header: str | None) -> None:
    if out is not None:
        _export(project, fmt, out, translations)
        return
    with tempfile.TemporaryDirectory(prefix="hayai-ocr-") as tmp:
        path = Path(tmp) / f"out.{fmt}"
        _export(project, fmt, path, translations)
        text = path.read_text(encoding="utf-8")
    if header:
        sys.stdout.write(f"==> {header} <==\n")
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def apply_read(project, page) -> None:
    """Put a page as the pipeline read it into `project` (in place), in the place of the page of
    the same name; a reading order set by hand is kept (edits.read_again). The app's reading
    results, `ocr --save-project` and the local API's read jobs all go through here."""
    from app.core.document.edits import read_again

    for i, old in enumerate(project.pages):
        if old.name == page.name:
            project.pages[i] = read_again(old, page)
            return
    project.pages.append(page)


def _save_read_pages(src: str, pages) -> None:
    from app.core.project.files import open_project, save_project
    from app.core.project.lock import lock_project

    with lock_project(src, "hayai-desktop ocr"):
        project = open_project(src)
        if project.read_only:
            raise UserError(project.read_only)
        for page in pages:
            apply_read(project, page)
        save_project(project)


def run(args) -> int:
    from app.core.document.types import Project
    from app.core.sources.source import open_source

    check_model_options(args)
    check_detector_options(args)
    for s in args.sources:
        if not os.path.exists(s):
            raise UserError(f"{s}: no such folder, archive or image")
    fmt, outputs = _plan_outputs(args)
    if args.translate:
        translator_settings(args)  # a missing backend is reported before the long OCR run
    pipeline = load_pipeline_for(args)
    failed = untranslated = 0
    for src, out in zip(args.sources, outputs, strict=True):
        source = open_source(src)
        try:
            bar = _ProgressBar(sys.stderr, Path(src).name)
            pages = []
            try:
                for page in pipeline.process(source, progress=bar):
                    pages.append(page)
                    if page.error:
                        failed += 1
                        bar.close()  # end the bar's line before the message
                        print(f"hayai-desktop: {src}: page {page.name}: {page.error}", file=sys.stderr)
            finally:
                bar.close()
            project = Project(source=str(Path(source.path).resolve()), pages=pages, order=args.order)
            if args.save_project:
                _save_read_pages(src, pages)
            if args.translate:
                untranslated += translate_project(project, args)[1]
            header = src if (out is None and len(args.sources) > 1) else None
            _write(project, fmt, out, args.translations or args.translate, header)
        finally:
            source.close()
    if failed:
        print(f"hayai-desktop: {failed} page(s) could not be read (see above)", file=sys.stderr)
    return 1 if failed or untranslated else 0
