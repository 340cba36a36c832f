"""The library batch driver: plan, hand chunks to an engine, assemble volumes, write them.

    summary = run_batch(find_volumes(["library/"]), BatchOptions(out_dir, spec), InProcessEngine(spec))

The driver lists each volume, skips the complete ones (app.core.batch.journal), and feeds the
chunks still to read (app.core.batch.chunks) to an engine, one volume after another. An engine
(`InProcessEngine` here, `RayEngine` in ray_engine.py) turns chunks into pages, in this process
or on workers, and yields each chunk's result when it is done, in any order. The driver records
every chunk on disk as it arrives, and when a volume has all its chunks it builds the volume's
pages in page order, runs the volume stages on it (`VolumeStage`: per-volume work on the driver
after the pages are read, such as machine translation), writes the export (the JSON `ocr`
writes, atomically), appends its line to batch.jsonl and forgets it. A volume whose pages are
read already (same OCR settings) but whose stages are not complete (a translation added, or cut
off) is not read again: its export is read back, the stages run on it and it is written again.

What the driver holds at most: the page names of the volumes whose chunks are out (at most the
engine's in-flight chunks span), the chunk numbers done of each, and, while a volume is written,
that volume's pages. Pages read are on disk (the volume's state file), not in memory.

Progress and messages go to `observer(event)` (the command draws the bar); an observer that
raises (KeyboardInterrupt included) stops the run after the chunks recorded so far.
"""
from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from app.core.batch.chunks import ChunkResult, chunk_bounds, process_chunk
from app.core.batch.journal import STATE_DIR, BatchLog, PartialVolume, is_complete, lock_out_dir
from app.core.batch.library import Volume
from app.core.document.types import Project
from app.core.reading.spec import PipelineSpec
from app.core.sources.source import open_source
from app.errors import UserError

log = logging.getLogger(__name__)



class VolumeStage(Protocol):
    """Work on a whole volume once its pages are read, on the driver (e.g. translation).

    key: its name in a batch.jsonl record ("stages": {key: {"settings": ..., **result}});
    settings: what decides its output (a volume done with other settings runs it again);
    run(project) -> (project, result): result is recorded; complete(result): False when the
    stage left work undone (the volume's stage runs again on the next run). A stage with a true
    `force` attribute runs on every volume of the run."""

    key: str
    settings: dict

    def run(self, project: Project) -> tuple[Project, dict]: ...

    def complete(self, result: dict) -> bool: ...


@dataclass(frozen=True)
class BatchOptions:
    out_dir: Path
    spec: PipelineSpec
    retry_errors: bool = False  # read again the volumes whose last run had unreadable pages
    volume_stages: tuple[VolumeStage, ...] = ()


@dataclass(frozen=True)
class ChunkJob:
    """Chunk `index` of volume number `volume`: `names` of the open `source`, which stays open
    until the engine asks for the next job."""

    volume: int
    index: int
    source: object
    names: tuple[str, ...]


@dataclass(frozen=True)
class BatchEvent:
    """kind: "planned" (pages = pages to read in all), "chunk" (a chunk read: pages), "volume"
    (a volume written: record), "skipped" (complete already), "failed" (error: the volume could
    not be opened; the run goes on)."""

    kind: str
    volume: Volume | None = None
    pages: int = 0
    record: dict | None = None
    error: str | None = None
    result: ChunkResult | None = None


@dataclass
class BatchSummary:
    volumes: int = 0
    written: int = 0
    skipped: int = 0
    skipped_with_errors: int = 0  # complete volumes whose last run left pages unread
    failed: list[tuple[Volume, str]] = field(default_factory=list)
    pages_read: int = 0
    page_errors: int = 0
    stages_incomplete: int = 0  # volumes written with a stage that left work undone
    seconds: float = 0.0


class InProcessEngine:
    """Chunks read in this process, one after another, by one pipeline (what `ocr` runs)."""

    def __init__(self, spec: PipelineSpec, pipeline=None):
        self.spec = spec
        self.pipeline = pipeline

    def start(self) -> None:
        if self.pipeline is None:
            from app.core.reading.spec import load_pipeline

            self.pipeline = load_pipeline(self.spec)

    def names(self) -> tuple[str, str]:
        """(recognizer name, detector name) of the loaded models."""
        return self.pipeline.recognizer.name, getattr(self.pipeline.detector, "name", "")

    def describe(self) -> str:
        return "in this process"

    def run(self, jobs: Iterator[ChunkJob]) -> Iterator[ChunkResult]:
        worker = f"{os.getpid()}@local"
        for job in jobs:
            start = time.perf_counter()
            pages = process_chunk(self.pipeline, job.source, job.names)
            yield ChunkResult(job.volume, job.index, tuple(pages), worker, time.perf_counter() - start)

    def close(self) -> None:
        pass


@dataclass
class _OpenVolume:
    volume: Volume
    names: list[str]
    chunks: list[tuple[int, int]]
    partial: PartialVolume
    started: float


class _Driver:
    def __init__(self, options: BatchOptions, engine, observer):
        self.options = options
        self.engine = engine
        self.observer = observer or (lambda event: None)
        self.settings = options.spec.output_settings()
        self.log = BatchLog(options.out_dir)
        self.open: dict[int, _OpenVolume] = {}
        self.summary = BatchSummary()

    def emit(self, **kwargs) -> None:
        self.observer(BatchEvent(**kwargs))

    def fail(self, volume: Volume, error: str) -> None:
        self.summary.failed.append((volume, error))
        self.emit(kind="failed", volume=volume, error=error)

    @property
    def chunk_pages(self) -> int:
        """Pages per chunk: the pages the pipeline detects and reads together (as `ocr` does)."""
        return self.options.spec.settings.chunk_pages

    def header(self, names: list[str]) -> dict:
        return {"settings": self.settings, "chunk_pages": self.chunk_pages, "pages": names}

    # -- planning ------------------------------------------------------------------------------

    def stages_complete(self, record: dict | None) -> bool:
        done = (record or {}).get("stages") or {}
        for stage in self.options.volume_stages:
            if getattr(stage, "force", False):  # e.g. translate --retranslate: run it on every volume
                return False
            result = done.get(stage.key)
            if not isinstance(result, dict) or result.get("settings") != stage.settings or not stage.complete(result):
                return False
        return True

    def plan(self, volumes: list[Volume]) -> tuple[list[Volume], list[Volume]]:
        """(the volumes to read, the volumes read whose stages must run again); emits "skipped" /
        "failed" for the others and "planned" once."""
        todo, restage, pages = [], [], 0
        for volume in volumes:
            try:
                with open_source(volume.path) as source:
                    names = list(source.page_names)
            except UserError as exc:
                self.fail(volume, str(exc))
                continue
            record = self.log.records.get(volume.key)
            if is_complete(record, self.settings, volume.export_path(self.options.out_dir), names,
                           self.options.retry_errors):
                if not self.stages_complete(record):
                    restage.append(volume)
                    continue
                self.summary.skipped += 1
                self.summary.skipped_with_errors += bool(record.get("errors"))
                self.emit(kind="skipped", volume=volume, record=record)
                continue
            todo.append(volume)
            partial = PartialVolume(self.options.out_dir, volume.key, self.header(names))
            bounds = chunk_bounds(len(names), self.chunk_pages)
            pages += sum(stop - start for i, (start, stop) in enumerate(bounds) if i not in partial.done)
        self.emit(kind="planned", pages=pages)
        return todo, restage

    # -- jobs ------------------------------------------------------------------------------------

    def jobs(self, volumes: list[Volume]) -> Iterator[ChunkJob]:
        for number, volume in enumerate(volumes):
            try:
                source = open_source(volume.path)
            except UserError as exc:
                self.fail(volume, str(exc))
                continue
            try:
                names = list(source.page_names)
                partial = PartialVolume(self.options.out_dir, volume.key, self.header(names))
                entry = _OpenVolume(volume, names, chunk_bounds(len(names), self.chunk_pages), partial,
                                    time.perf_counter())
                self.open[number] = entry
                todo = [i for i in range(len(entry.chunks)) if i not in partial.done]
                if not todo:  # every chunk was read by an earlier run
                    self.finish(number)
                for index in todo:
                    start, stop = entry.chunks[index]
                    yield ChunkJob(number, index, source, tuple(names[start:stop]))
            finally:
                source.close()

    # -- results ---------------------------------------------------------------------------------

    def accept(self, result: ChunkResult) -> None:
        entry = self.open.get(result.volume)
        if entry is None or result.index in entry.partial.done:
            raise RuntimeError(f"internal error: chunk {result.index} of volume {result.volume} came back twice")
        start, stop = entry.chunks[result.index]
        got = [p.name for p in result.pages]
        if got != entry.names[start:stop]:
            raise RuntimeError(f"internal error: chunk {result.index} of {entry.volume.path} came back with "
                               f"pages {got}, expected {entry.names[start:stop]}")
        entry.partial.add(result.index, list(result.pages))
        self.summary.pages_read += len(result.pages)
        self.summary.page_errors += sum(1 for p in result.pages if p.error)
        self.emit(kind="chunk", volume=entry.volume, pages=len(result.pages), result=result)
        if len(entry.partial.done) == len(entry.chunks):
            self.finish(result.volume)

    def finish(self, number: int) -> None:
        entry = self.open.pop(number)
        volume = entry.volume
        pages = entry.partial.pages()
        if [p.name for p in pages] != entry.names:  # every page once, in order
            raise RuntimeError(f"internal error: the pages of {volume.path} do not match its page list")
        project = Project(source=str(volume.path.resolve()), pages=pages, order=self.options.spec.settings.order)
        model, detector = self.engine.names()
        self.write(volume, project, entry.started, {"model": model, "detector": detector})
        entry.partial.remove()

    def restage(self, volume: Volume) -> None:
        """Run the stages again on a volume whose pages are read (its export), and write it."""
        from app.core.exports.json_read import read_json_export

        record = self.log.records[volume.key]
        project = read_json_export(volume.export_path(self.options.out_dir))
        self.write(volume, project, time.perf_counter(), {"model": record.get("model", ""),
                                                          "detector": record.get("detector", "")})

    def write(self, volume: Volume, project: Project, started: float, models: dict) -> None:
        stages = {}
        for stage in self.options.volume_stages:
            project, result = stage.run(project)
            stages[stage.key] = {"settings": stage.settings, **result}
            self.summary.stages_incomplete += not stage.complete(result)
        export = volume.export_path(self.options.out_dir)
        try:
            export.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"{export.parent}: cannot create the folder ({exc.strerror or exc}).") from exc
        from app.core.exports.json_txt import export_json

        export_json(project, export)
        pages = project.pages
        record = {
            "volume": volume.key, "source": str(volume.path), "export": export.relative_to(self.options.out_dir).as_posix(),
            "pages": len(pages), "blocks": sum(len(p.blocks) for p in pages),
            "errors": sum(1 for p in pages if p.error), "seconds": round(time.perf_counter() - started, 3),
            **models, "settings": self.settings,
        }
        if stages:
            record["stages"] = stages
        self.log.append(record)
        self.summary.written += 1
        self.emit(kind="volume", volume=volume, record=record)


def run_batch(volumes: list[Volume], options: BatchOptions, engine, observer=None) -> BatchSummary:
    """Read every volume not complete yet with `engine`; see the module docstring.

    Raises UserError when OUT_DIR cannot be written or the engine cannot start (models missing,
    no Ray cluster); the volumes finished before stay finished.
    """
    start = time.perf_counter()
    try:
        options.out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{options.out_dir}: cannot create the output folder ({exc.strerror or exc}).") from exc
    driver = _Driver(options, engine, observer)
    driver.summary.volumes = len(volumes)
    with lock_out_dir(options.out_dir):
        todo, restage = driver.plan(volumes)
        for volume in restage:
            driver.restage(volume)
        if todo:
            try:
                engine.start()
                for result in engine.run(driver.jobs(todo)):
                    driver.accept(result)
            finally:
                engine.close()
    driver.summary.seconds = time.perf_counter() - start
    with contextlib.suppress(OSError):  # the state folder, once no volume is left half read
        (options.out_dir / STATE_DIR).rmdir()
    return driver.summary
