"""`hayai-desktop batch`: every volume of a library to its JSON export, resumable, here or on Ray.

    hayai-desktop batch LIBRARY... --out OUT_DIR [--ray [ADDRESS]] [--workers N]
                        [--gpus-per-worker G] [--cpus-per-worker C] [--retry-errors]
                        [--model ...] [--detector ...] [--patches N] [--order rtl|ltr] ...
                        [--translate --to LANG [translation options of `translate`]]

LIBRARY is a folder of volumes (folders of pages and CBZ/ZIP archives, found recursively), or
volumes themselves. Each volume gets OUT_DIR/<its path in the library>.json (the JSON export of
`ocr`) and a line in OUT_DIR/batch.jsonl (volume, pages, blocks, errors, seconds, model,
settings). Run it again to continue after an interruption: complete volumes with the same
settings are skipped, a volume cut off halfway goes on from the pages it had.
Without --ray the volumes are read in this process, one after another (as `ocr` reads them).
--ray starts a local Ray runtime; --ray ADDRESS joins a cluster (auto, or ray://HEAD:10001);
each worker holds the models and reads the pages sent to it (docs/cluster.md).
With --translate, each volume is machine-translated here, once its pages are read, by the stage
of the `translate` command (its options; the chat / offline model is --translation-model); a
volume read before without translation, or whose translation was cut off, is translated without
being read again.
Exit status: 0 when every page was read (and translated), 1 when some page, volume or block
could not be, 2 for a usage or model error; 130 when interrupted.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.commands.common import (
    add_detector_options,
    add_model_options,
    check_model_options,
    spec_for,
    tqdm_size,
)
from app.commands.translate import add_translation_options
from app.errors import UserError


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("batch", help="read a whole library (resumable; in this process or on a Ray cluster)",
                              description=__doc__.split("\n\n", 2)[2], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("libraries", nargs="+", metavar="LIBRARY", help="a folder of volumes, or volumes (folders, CBZ/ZIP)")
    p.add_argument("--out", required=True, metavar="OUT_DIR", help="folder for the exports and batch.jsonl")
    p.add_argument("--retry-errors", action="store_true",
                   help="also read again the volumes whose last run left pages unread")
    cluster = p.add_argument_group("Ray (pip install 'hayai-desktop[cluster]')")
    cluster.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                         help="run on Ray: alone, a local runtime; ADDRESS joins a cluster (auto, ray://HEAD:10001)")
    cluster.add_argument("--workers", type=int, help="model-holding workers (default: as many as the GPUs or CPUs allow)")
    cluster.add_argument("--gpus-per-worker", type=float, default=0, metavar="G",
                         help="GPUs each worker takes (0.5: two workers share one); default 0, CPU workers")
    cluster.add_argument("--cpus-per-worker", type=float, default=1, metavar="C",
                         help="CPUs each worker takes (its torch threads); default 1")
    add_detector_options(p)  # --detector --imgsz --conf --order
    add_model_options(p)  # --model --patches --max-new-tokens --device --batch-size
    p.add_argument("--translate", action="store_true", help="machine-translate each volume (see `translate`)")
    add_translation_options(p, model_flag="--translation-model")
    p.set_defaults(run=run)
    return p


def _check(args) -> None:
    check_model_options(args)
    if args.ray is None:
        given = [f for f, v in (("--workers", args.workers), ("--gpus-per-worker", args.gpus_per_worker),
                                ("--cpus-per-worker", args.cpus_per_worker != 1 or None)) if v]
        if given:
            raise UserError(f"{', '.join(given)} need --ray (without it the batch runs in this process)")
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers must be at least 1, got {args.workers}")
    if args.gpus_per_worker < 0 or args.cpus_per_worker <= 0:
        raise UserError("--gpus-per-worker must be 0 or more and --cpus-per-worker more than 0")
    if args.gpus_per_worker and args.device in ("cpu", "mps"):
        raise UserError(f"--gpus-per-worker {args.gpus_per_worker:g} with --device {args.device}: "
                        "use --device auto or cuda")


def make_engine(args, spec):
    """The engine the options ask for: in this process, or Ray."""
    if args.ray is None:
        from app.core.batch.runner import InProcessEngine

        return InProcessEngine(spec)
    from app.core.batch.ray_engine import RayEngine

    return RayEngine(spec, address=None if args.ray == "local" else args.ray, workers=args.workers,
                     gpus_per_worker=args.gpus_per_worker, cpus_per_worker=args.cpus_per_worker)


class TranslateStage:
    """The `translate` command's stage over each volume, on the driver, with one translator
    (made at the first volume, closed by `close`). A runner.VolumeStage."""

    key = "translate"

    def __init__(self, args, report):
        from app.commands.translate import translator_settings

        self.args = args
        self.report = report
        ts = translator_settings(args)  # a missing backend is reported before any page is read
        glossary = str(Path(args.glossary).resolve()) if args.glossary else None
        self.settings = {"provider": ts.provider, "base_url": ts.base_url, "model": ts.model, "from": ts.source_lang,
                         "to": ts.target_lang, "context_pages": ts.context_pages, "glossary": glossary}
        self.translator = None
        self.force = bool(args.retranslate)

    def run(self, project):
        from app.commands.translate import (
            key_flags,
            make_translator_for,
            translate_project,
            translator_settings,
        )

        if self.translator is None:
            self.translator = make_translator_for(translator_settings(self.args), self.args.trust_unpinned,
                                                  **key_flags(self.args))
        lines = _Lines(self.report, Path(project.source).name)
        done, left = translate_project(project, self.args, stream=lines, translator=self.translator)
        return project, {"translated": done, "untranslated": left}

    def complete(self, result: dict) -> bool:
        return result.get("untranslated") == 0

    def close(self) -> None:
        if self.translator is not None:
            self.translator.close()
            self.translator = None


class _Lines:
    """A text stream whose lines go to the report, "hayai-desktop: " followed by the volume."""

    def __init__(self, report, volume: str):
        self.report, self.volume, self.pending = report, volume, ""

    def write(self, text: str) -> None:
        self.pending += text
        while "\n" in self.pending:
            line, self.pending = self.pending.split("\n", 1)
            self.report.write(line.replace("hayai-desktop: ", f"hayai-desktop: {self.volume}: ", 1))

    def flush(self) -> None:
        pass


class _Report:
    """The library progress bar (tqdm, on a terminal) and one line per event worth a line."""

    def __init__(self, stream):
        self.stream = stream
        self.bar = None

    def write(self, text: str) -> None:
        from tqdm import tqdm

        tqdm.write(text, file=self.stream)

    def __call__(self, event) -> None:
        from tqdm import tqdm

        if event.kind == "planned":
            self.bar = tqdm(total=event.pages, unit="page", desc="library", file=self.stream, disable=None,
                            **tqdm_size(self.stream))
        elif event.kind == "chunk":
            for page in event.result.pages:
                if page.error:
                    self.write(f"hayai-desktop: {event.volume.key}: page {page.name}: {page.error}")
            if self.bar is not None:
                self.bar.update(event.pages)
        elif event.kind == "volume":
            r = event.record
            self.write(f"{event.volume.key}: {r['pages']} pages, {r['blocks']} blocks, {r['errors']} unread "
                       f"-> {r['export']}")
        elif event.kind == "failed":
            self.write(f"hayai-desktop: {event.volume.path}: {event.error}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _summary_line(summary, engine) -> str:
    line = f"{summary.volumes} volumes: {summary.written} written, {summary.skipped} complete already"
    if summary.skipped_with_errors:
        line += f" ({summary.skipped_with_errors} with unread pages: --retry-errors reads them again)"
    line += f", {len(summary.failed)} failed"
    if not (summary.pages_read or summary.written):
        line += "; nothing left to read"
    elif not summary.pages_read:
        line += "; no page to read"
    else:
        rate = summary.pages_read / summary.seconds if summary.seconds else 0.0
        line += (f"; {summary.pages_read} pages read ({summary.page_errors} unreadable) in {summary.seconds:.1f} s, "
                 f"{rate:.2f} pages/s, {engine.describe()}")
    restarts = getattr(engine, "restarts", 0)
    line += f"; {restarts} worker restart(s)" if restarts else ""
    if summary.stages_incomplete:
        line += f"; {summary.stages_incomplete} volume(s) not completely translated (run again to resume)"
    return line


def run(args, observer=None) -> int:
    """`observer(event)`, when given, sees every event after the report (tests stop runs with it)."""
    from app.core.batch.library import find_volumes
    from app.core.batch.runner import BatchOptions, run_batch

    _check(args)
    spec = spec_for(args)
    volumes = find_volumes(args.libraries)
    out_dir = Path(args.out)
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"--out {out_dir}: is a file; the batch needs a folder for its exports")
    report = _Report(sys.stderr)
    stages = (TranslateStage(args, report),) if args.translate else ()
    engine = make_engine(args, spec)

    def observe(event):
        report(event)
        if observer is not None:
            observer(event)

    options = BatchOptions(out_dir=out_dir, spec=spec, retry_errors=args.retry_errors, volume_stages=stages)
    try:
        summary = run_batch(volumes, options, engine, observe)
    except KeyboardInterrupt:
        report.close()
        print(f"hayai-desktop: stopped; finished volumes are in {out_dir}. Run the same command again to "
              "continue where it stopped.", file=sys.stderr)
        raise
    finally:
        for stage in stages:
            stage.close()
    report.close()
    print(f"hayai-desktop: {_summary_line(summary, engine)}", file=sys.stderr)
    return 1 if summary.failed or summary.page_errors or summary.stages_incomplete else 0
