"""The model-holding worker of a Ray batch (plain Python: ray_engine.py makes it a Ray actor).

One `PageReader` loads the detector and the recognizer once (`load_pipeline`, through this
machine's model store) and then reads chunks of pages sent to it as bytes (`ChunkPayload`),
with the same `Pipeline.process` that `ocr` runs. A worker with a GPU (Ray sets
CUDA_VISIBLE_DEVICES to the GPUs it was given) reads on it under device "auto"; a worker given
no GPU reads on the CPU, so that it never takes a GPU another worker holds.

A model that cannot be loaded is not a crash: `ready()` reports it and `process()` raises
`WorkerSetupError` with the model store's message (what is missing on which machine, and the
command that downloads it), which the driver shows and stops on.
"""
from __future__ import annotations

import os
import socket
import time
from dataclasses import replace

from app.core.batch.chunks import ChunkPayload, ChunkResult, MemorySource, process_chunk
from app.core.reading.spec import PipelineSpec
from app.errors import UserError


class WorkerSetupError(Exception):
    """A worker could not load its models; the message says what is missing and where."""


def worker_spec(spec: PipelineSpec, gpus: float) -> PipelineSpec:
    """The spec a worker loads: device "auto" means CUDA on a worker given GPUs, else the CPU."""
    if spec.device == "auto" and not gpus:
        return replace(spec, device="cpu")
    return spec


class PageReader:
    """spec: what to load; threads: torch CPU threads (the CPUs Ray gave the worker); gpus: the
    GPUs Ray gave it (0 for none)."""

    def __init__(self, spec: PipelineSpec, threads: int = 1, gpus: float = 0):
        import torch

        torch.set_num_threads(max(1, int(threads)))
        self.where = f"{os.getpid()}@{socket.gethostname()}"
        self.error: str | None = None
        self.pipeline = None
        try:
            from app.core.reading.spec import load_pipeline

            self.pipeline = load_pipeline(worker_spec(spec, gpus))
        except UserError as exc:
            self.error = f"worker {self.where}: {exc}"

    def ready(self) -> dict:
        """Who this worker is and what it loaded: {"worker", "error", "model", "detector", "device"}."""
        if self.pipeline is None:
            return {"worker": self.where, "error": self.error}
        recognizer = self.pipeline.recognizer
        return {"worker": self.where, "error": None, "model": recognizer.name,
                "detector": getattr(self.pipeline.detector, "name", ""), "device": recognizer.device_label}

    def process(self, payload: ChunkPayload) -> ChunkResult:
        """Detect and read the pages of one chunk."""
        if self.pipeline is None:
            raise WorkerSetupError(self.error)
        start = time.perf_counter()
        source = MemorySource(payload)
        try:
            pages = process_chunk(self.pipeline, source, source.page_names)
        finally:
            source.close()
        return ChunkResult(payload.volume, payload.index, tuple(pages), self.where, time.perf_counter() - start)
