"""The volumes opened through the service and every operation on them, for the HTTP API and
the MCP server alike (both call `Service` and nothing else).

A volume is a source's project, opened as the window opens it: the saved project merged with
the pages on disk, the edit journal of an unsaved last session replayed (nothing lost), and the
project lock taken (`ProjectLock`, "hayai-desktop serve"). When the window, a command or
another server holds the lock, or the file is of a newer version, the volume is served
read-only and says who holds it; every change is then refused (`ReadOnly`, HTTP 423).

Every change goes through the core's edit functions (app.core.document.edits), is journaled
(app.core.project.journal) and saved at once (the journal folded into the file), so a crash
loses nothing. Reading, translating and exporting run as jobs (app.service.jobs) on the
subcommands' own functions: `ocr`'s `apply_read`, `translate`'s `translate_project`, `render`'s
and `export`'s writers, `check`'s `check_project`. The models (the reading pipeline, the
inpainter) load once, on first use, and every job shares them.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import io
import logging
import threading
from dataclasses import replace

from app.core.document import edits
from app.errors import UserError
from app.service.jobs import Job, JobBusy, Jobs
from app.service.security import Roots

log = logging.getLogger(__name__)
HOLDER = "hayai-desktop serve"
EXPORT_FORMATS = ("cbz", "pdf", "png", "jpg", "webp", "json", "txt", "csv", "tsv", "reader")


class ReadOnly(UserError):
    """The volume cannot be changed from here (HTTP 423): who holds it, or why."""


class NotFound(UserError):
    """No such volume, page or block (HTTP 404)."""


class Volume:
    def __init__(self, vid: str, source: str, project, lock, journal, read_only: str | None, restored: int):
        self.id = vid
        self.source = source
        self.project = project
        self.lock = lock
        self.journal = journal
        self.read_only = read_only
        self.restored = restored
        self.mutex = threading.RLock()  # edits and jobs' saves, one at a time

    def info(self) -> dict:
        pages = self.project.pages
        return {"id": self.id, "source": self.source, "pages": len(pages),
                "read": sum(1 for p in pages if p.blocks or p.processed),
                "blocks": sum(len(p.blocks) for p in pages), "read_only": self.read_only,
                "restored_edits": self.restored}

    def page(self, name: str):
        for page in self.project.pages:
            if page.name == name:
                return page
        raise NotFound(f"volume {self.id}: no page {name!r} (list them with GET /volumes/{self.id}/pages).")

    def block(self, page_name: str, block_id: str):
        for block in self.page(page_name).blocks:
            if block.id == block_id:
                return block
        raise NotFound(f"page {page_name}: no block {block_id!r}.")

    def writable(self) -> None:
        if self.read_only:
            raise ReadOnly(self.read_only)

    def commit_page(self, page) -> None:
        """Put a changed page in the project, journal it, save (under `mutex`)."""
        for i, old in enumerate(self.project.pages):
            if old.name == page.name:
                self.project.pages[i] = page
                break
        self.journal.record_page(page)
        self.save()

    def save(self) -> None:
        from app.core.project.files import save_project

        save_project(self.project)
        self.journal.folded()

    def close(self) -> None:
        if self.journal is not None:  # every edit was saved as it was made: nothing left to replay
            self.journal.close(delete=True)
        if self.lock is not None:
            self.lock.release()


def page_state(page) -> dict:
    return {"name": page.name, "read": bool(page.blocks) or bool(getattr(page, "processed", False)),
            "blocks": len(page.blocks), "error": page.error,
            "translated": sum(1 for b in page.blocks if b.translation.strip()),
            "untranslated": sum(1 for b in page.blocks if b.needs_translation),
            "edited": sum(1 for b in page.blocks if b.edited)}


def block_dict(block) -> dict:
    return {"id": block.id, "order": block.order, "kind": block.kind, "box": list(block.box),
            "vertical": block.vertical, "ocr_text": block.ocr_text, "text": block.display_text,
            "edited": block.edited, "translation": block.translation,
            "machine_translation": block.machine_translation, "looks_untranslated": block.looks_untranslated,
            "approved": block.approved}


class Service:
    """Everything the faces may do. `args`: the `serve` / `mcp` command's options (the models,
    the reading and the translation options, as `ocr` and `translate` take them)."""

    def __init__(self, roots: Roots, args: argparse.Namespace, workers: int = 2):
        self.roots = roots
        self.args = args
        self.jobs = Jobs(workers)
        self.volumes: dict[str, Volume] = {}
        self._open_lock = threading.Lock()
        self._model_lock = threading.Lock()
        self._pipeline = None
        self._inpainter = None

    # -- models, loaded once -------------------------------------------------------------------

    def pipeline(self):
        from app.commands.common import load_pipeline_for

        with self._model_lock:
            if self._pipeline is None:
                self._pipeline = load_pipeline_for(self.args)
            return self._pipeline

    def inpainter(self):
        from app.render.inpaint import load_inpainter

        with self._model_lock:
            if self._inpainter is None:
                self._inpainter = load_inpainter(getattr(self.args, "inpaint", "auto"), self.args.device)
            return self._inpainter

    # -- volumes -------------------------------------------------------------------------------

    def open_volume(self, path: str) -> dict:
        from app.core.project.files import open_project, recoverable_autosave
        from app.core.project.journal import EditJournal, records
        from app.core.project.lock import ProjectLock
        from app.core.sources.source import resolve_source_path

        resolved = self.roots.resolve(path)
        if not resolved.exists():
            raise NotFound(f"{path}: no such folder, archive, image or .mokuro volume under the roots.")
        source = str(resolve_source_path(resolved))
        self.roots.resolve(source)  # a .mokuro's page folder must be under the roots too
        vid = hashlib.sha256(source.encode()).hexdigest()[:10]
        with self._open_lock:
            if vid in self.volumes:
                return self.volumes[vid].info()
            lock = ProjectLock(source, HOLDER)
            mine = lock.acquire()
            restored = len(records(source)) if mine else 0
            project = open_project(source, project_file=recoverable_autosave(source) if mine else None,
                                   replay_journal=mine and restored > 0)
            read_only = project.read_only or (None if mine else lock.message())
            journal = EditJournal(source) if mine and not project.read_only else None
            volume = Volume(vid, source, project, lock if mine else None, journal, read_only, restored)
            if restored and journal is not None:
                volume.save()  # the replayed edits are in the project file now
            self.volumes[vid] = volume
        return volume.info()

    def volume(self, vid: str) -> Volume:
        try:
            return self.volumes[vid]
        except KeyError:
            raise NotFound(f"no open volume {vid!r}: open it first (POST /volumes).") from None

    def list_volumes(self) -> list[dict]:
        return [v.info() for v in self.volumes.values()]

    def list_pages(self, vid: str) -> list[dict]:
        return [page_state(p) for p in self.volume(vid).project.pages]

    def get_blocks(self, vid: str, page: str) -> list[dict]:
        return [block_dict(b) for b in self.volume(vid).page(page).blocks]

    def page_png(self, vid: str, page: str, box=None) -> bytes:
        from app.core.sources.source import open_source

        volume = self.volume(vid)
        volume.page(page)
        with open_source(volume.source) as src:
            image = src.load(page)
        if box is not None:
            x0, y0, x1, y1 = (int(round(v)) for v in box)
            image = image.crop((max(0, x0), max(0, y0), min(image.width, x1), min(image.height, y1)))
        out = io.BytesIO()
        image.save(out, format="PNG")
        return out.getvalue()

    def crop_png(self, vid: str, page: str, block_id: str) -> bytes:
        return self.page_png(vid, page, self.volume(vid).block(page, block_id).box)

    # -- edits ---------------------------------------------------------------------------------

    def edit_block(self, vid: str, page_name: str, block_id: str, text: str | None = None,
                   translation: str | None = None, kind: str | None = None, position: int | None = None) -> dict:
        """Change a block through the edit functions the window's undo commands call."""
        volume = self.volume(vid)
        volume.writable()
        running = self.jobs.running(vid)
        if running is not None and running.kind != "export":
            raise JobBusy(f"volume {vid}: a {running.kind} job ({running.id}) is changing its pages; wait for it "
                          "or cancel it, then edit.")
        with volume.mutex:
            page = volume.page(page_name)
            volume.block(page_name, block_id)
            try:
                if text is not None:
                    page = edits.set_text(page, block_id, text)
                if translation is not None:
                    page = edits.set_translation(page, block_id, translation)
                if kind is not None:
                    page = edits.set_kind(page, [block_id], kind)
                if position is not None:
                    if not 1 <= position <= len(page.blocks):
                        raise ValueError(f"order {position}: the page has blocks 1 to {len(page.blocks)}")
                    page = replace(edits.move_block(page, block_id, position - 1), order_by_hand=True)
            except ValueError as exc:
                raise UserError(str(exc)) from exc
            volume.commit_page(page)
            return block_dict(volume.block(page_name, block_id))

    # -- jobs ----------------------------------------------------------------------------------

    def _names(self, volume: Volume, pages) -> list[str]:
        if not pages:
            return [p.name for p in volume.project.pages]
        for name in pages:
            volume.page(name)
        return list(pages)

    def start_read(self, vid: str, pages=None) -> Job:
        from app.commands.ocr import apply_read
        from app.core.sources.source import open_source

        volume = self.volume(vid)
        volume.writable()
        names = self._names(volume, pages)

        def work(job: Job) -> dict:
            job.progress(0, len(names), "loading the models")
            pipeline = self.pipeline()
            read = failed = 0
            with open_source(volume.source) as src:
                for page in pipeline.process(src, names, cancel=job.cancelled,
                                             progress=lambda p: job.progress(p.pages_done, p.pages_total,
                                                                             f"{p.blocks_done}/{p.blocks_total} blocks")):
                    with volume.mutex:
                        apply_read(volume.project, page)
                        volume.commit_page(volume.page(page.name))
                    read += 1
                    failed += bool(page.error)
            job.progress(len(names), len(names))
            return {"pages": read, "failed": failed}

        return self.jobs.start("read", vid, work)

    def start_translate(self, vid: str, pages=None, target: str | None = None, retranslate: bool = False) -> Job:
        from app.commands.translate import translate_project, translator_settings

        volume = self.volume(vid)
        volume.writable()
        names = self._names(volume, pages) if pages else None
        args = copy.copy(self.args)
        args.retranslate = retranslate
        args.page_range = None
        if target:
            args.target = target
        translator_settings(args)  # no backend: said now, not in the job

        def save(_project) -> None:  # after each page translated: saved at once (nothing to journal)
            with volume.mutex:
                volume.save()

        def work(job: Job) -> dict:
            done, left = translate_project(volume.project, args, save=save, cancel=job.cancelled, names=names,
                                           progress=lambda p: job.progress(p.pages_done, p.pages_total, p.current))
            return {"translated": done, "not_translated": left}

        return self.jobs.start("translate", vid, work)

    def start_export(self, vid: str, fmt: str, out: str, text: str = "translation") -> Job:
        from app.core.exports import json_txt
        from app.core.exports.translated_pages import RenderOptions, export_translated, plan_output

        volume = self.volume(vid)
        if fmt not in EXPORT_FORMATS:
            raise UserError(f"format {fmt!r}: use one of {', '.join(EXPORT_FORMATS)}")
        target = self.roots.resolve(out)
        if fmt in ("cbz", "pdf", "png", "jpg", "webp"):
            plan_output(fmt, target)
        with volume.mutex:
            project = replace(volume.project, pages=list(volume.project.pages))  # a snapshot: pages are frozen

        def work(job: Job) -> dict:
            target.parent.mkdir(parents=True, exist_ok=True)
            progress = lambda done, total, name: job.progress(done, total, name)  # noqa: E731
            if fmt == "json":
                json_txt.export_json(project, target)
            elif fmt == "txt":
                json_txt.export_txt(project, target, translations=True)
            elif fmt in ("csv", "tsv"):
                from app.core.exports.script_table import export_script

                export_script(project, target, fmt)
            elif fmt == "reader":
                from app.core.exports import mokuro

                mokuro.export_reader(project, target, progress=progress)
            else:
                report = export_translated(project, fmt, target, self.inpainter(), RenderOptions(text=text),
                                           progress=progress, cancel=job.cancelled)
                return {"out": str(target), "written": len(report.written),
                        "skipped": [list(s) for s in report.skipped], "below_min": report.below_min}
            return {"out": str(target)}

        return self.jobs.start("export", vid, work)

    def cancel(self, job_id: str) -> dict:
        job = self.jobs.get(job_id)
        job.cancel_event.set()
        return job.as_dict()

    # -- check ---------------------------------------------------------------------------------

    def check(self, vid: str, layout: bool = True) -> dict:
        from app.core.exports.translated_pages import RenderOptions
        from app.core.translation.consistency import check_project
        from app.translate.glossary import load_glossary

        volume = self.volume(vid)
        with volume.mutex:
            project = replace(volume.project, pages=list(volume.project.pages))
        glossary = load_glossary(self.args.glossary) if getattr(self.args, "glossary", None) else []
        findings, skipped = check_project(project, glossary, layout=layout,
                                          options=RenderOptions(lang=getattr(self.args, "lang", "en")))
        return {"findings": [{"page": f.page, "block": f.block, "order": f.order, "kind": f.kind, "detail": f.detail}
                             for f in findings],
                "skipped": [{"page": n, "why": w} for n, w in skipped]}

    def close(self) -> None:
        self.jobs.shutdown()
        for volume in self.volumes.values():
            volume.close()
        self.volumes.clear()

