"""The Ray engine of the library batch: model-holding actors read chunks of pages sent as bytes.

    engine = RayEngine(spec, address=None, workers=2)     # None: a local Ray runtime
    run_batch(volumes, options, engine)

- `start()` joins Ray (`ray.init`: a local runtime, `auto`, or a `ray://host:10001` client
  address) and starts `workers` actors (app.core.batch.worker.PageReader), each with
  `cpus_per_worker` CPUs and `gpus_per_worker` GPUs. Each loads the detector and the recognizer
  once, on its GPU when it has one. A model missing on a worker's machine stops the run with
  the model store's message. When joining a cluster, this process's `app` package is shipped
  to the workers (Ray `py_modules`), so they run the driver's code; their Python needs the
  app's dependencies (`pip install hayai-desktop[cluster]` on every node).
- `run(jobs)` reads each chunk's page bytes here and sends them with the task: the workers need
  no access to the driver's disk. At most `in_flight` chunks (default two per worker) are out
  at once; the next chunk is read only when one comes back. That bounds the page bytes in
  flight to in_flight x chunk_pages pages (in Ray's object store, not in this process's heap).
- A worker process that dies (killed, out of memory, a lost node) is restarted by Ray
  (`max_restarts=-1`, constructor run again: models reloaded) and the chunks it held are run
  again (`max_task_retries`), so nothing is lost; the driver takes one result per chunk, so
  nothing is duplicated. A chunk that still fails after its retries (say, a page that kills
  every worker that reads it) comes back with each page's error set, and the run goes on.

`ray` is imported only here and only when an engine starts: the app, `ocr` and `batch`
without `--ray` never import it.
"""
from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from app.core.batch.chunks import ChunkResult, read_payload
from app.core.batch.runner import ChunkJob
from app.core.batch.worker import PageReader, WorkerSetupError
from app.core.document.types import Page
from app.core.reading.spec import PipelineSpec
from app.errors import UserError

log = logging.getLogger(__name__)

TASK_RETRIES = 3  # runs of a chunk after the first, when its worker dies under it
START_TIMEOUT_S = 600.0  # how long to wait for workers to be placed and load their models


def import_ray():
    """`ray`, or a UserError saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        if getattr(sys, "frozen", False):
            raise UserError("--ray is not available in the desktop bundle, which has no Ray: install the app "
                            "with pip install 'hayai-desktop[cluster]' to run on Ray (docs/cluster.md). "
                            "Without --ray the batch runs in this process.") from exc
        raise UserError("--ray needs Ray, which is not installed: pip install 'hayai-desktop[cluster]' "
                        "(or pip install 'ray[client]'). Without --ray the batch runs in this process.") from exc
    return ray


class RayEngine:
    """address: None for a local runtime (or the one this process already started), "auto",
    "ray://host:10001" or a GCS "host:6379"; workers: None = as many as the cluster's GPUs
    (gpus_per_worker > 0) or CPUs allow."""

    def __init__(self, spec: PipelineSpec, address: str | None = None, workers: int | None = None,
                 gpus_per_worker: float = 0, cpus_per_worker: float = 1, in_flight: int | None = None,
                 start_timeout: float = START_TIMEOUT_S):
        self.spec = spec.portable()  # a relative model path means nothing on a worker
        self.address = address
        self.workers = workers
        self.gpus = float(gpus_per_worker)
        self.cpus = float(cpus_per_worker)
        self.in_flight = in_flight
        self.start_timeout = start_timeout
        self.actors: list = []
        self.info: list[dict] = []
        self.restarts = 0
        self._ray = None
        self._started_ray = False

    # -- start and stop ------------------------------------------------------------------------

    def _init(self, ray) -> None:
        if ray.is_initialized():
            return
        kwargs = dict(include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False)
        try:
            if self.address is None:
                needed = int(max(os.cpu_count() or 1, (self.workers or 1) * self.cpus))
                ray.init(address="local", num_cpus=needed, **kwargs)  # never a cluster found by chance
            else:
                import app

                ray.init(address=self.address, runtime_env={"py_modules": [str(Path(app.__file__).parent)]},
                         **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = "a local Ray runtime" if self.address is None else f"the Ray cluster at {self.address}"
            raise UserError(f"could not start or join {where}: {exc}. Check that the cluster is up "
                            "(`ray status` on the head node) and that this machine reaches it; "
                            "docs/cluster.md has the set-up.") from exc
        self._started_ray = True

    def _worker_count(self, ray) -> int:
        resources = ray.cluster_resources()
        if self.workers:
            short = [f"{self.workers * need:g} {what} (the cluster has {resources.get(key, 0):g} now)"
                     for what, key, need in (("CPUs", "CPU", self.cpus), ("GPUs", "GPU", self.gpus))
                     if self.workers * need > resources.get(key, 0)]
            if short:  # an autoscaling cluster may still grow: wait, but say why
                log.warning("%d workers need %s; waiting up to %.0f s for them to be placed", self.workers,
                            " and ".join(short), self.start_timeout)
            return self.workers
        if self.gpus > 0:
            count = int(resources.get("GPU", 0) // self.gpus)
            if count < 1:
                raise UserError(f"the Ray cluster has no GPU for --gpus-per-worker {self.gpus:g} "
                                f"(it has {resources.get('GPU', 0):g}); use --gpus-per-worker 0 for CPU workers")
            return count
        return max(1, int(resources.get("CPU", 1) // max(self.cpus, 1e-9)))

    def start(self) -> None:
        ray = self._ray = import_ray()
        self._init(ray)
        count = self._worker_count(ray)
        actor_class = ray.remote(PageReader).options(
            num_cpus=self.cpus, num_gpus=self.gpus, max_restarts=-1, max_task_retries=TASK_RETRIES)
        threads = max(1, int(self.cpus))
        self.actors = [actor_class.remote(self.spec, threads, self.gpus) for _ in range(count)]
        self.info = self._wait_ready(ray)

    def _wait_ready(self, ray) -> list[dict]:
        refs = [a.ready.remote() for a in self.actors]
        done, pending = ray.wait(refs, num_returns=len(refs), timeout=self.start_timeout)
        if pending:
            self.close()
            raise UserError(
                f"{len(pending)} of {len(refs)} Ray workers did not start within {self.start_timeout:.0f} s: the "
                f"cluster ({_resources(ray)}) may not have {self.cpus:g} CPU and {self.gpus:g} GPU free for each. "
                "Use fewer --workers, or fewer --gpus-per-worker / --cpus-per-worker.")
        try:
            info = ray.get(refs)
        except ray.exceptions.RayError as exc:
            self.close()
            raise UserError(f"a Ray worker could not start: {_reason(exc)}") from exc
        errors = [i["error"] for i in info if i.get("error")]
        if errors:
            self.close()
            raise UserError(errors[0])
        return info

    def close(self) -> None:
        ray = self._ray
        if ray is None:
            return
        for actor in self.actors:
            try:
                ray.kill(actor, no_restart=True)
            except ray.exceptions.RayError as exc:  # already gone
                log.debug("kill: %s", exc)
        self.actors = []
        if self._started_ray:
            ray.shutdown()
            self._started_ray = False

    # -- what the driver asks --------------------------------------------------------------------

    def names(self) -> tuple[str, str]:
        return self.info[0]["model"], self.info[0]["detector"]

    def describe(self) -> str:
        devices = sorted({i["device"] for i in self.info})
        hosts = {i["worker"].split("@", 1)[1] for i in self.info}
        where = "a local Ray runtime" if self.address is None else f"Ray at {self.address}"
        return f"{len(self.info)} worker(s) on {where} ({len(hosts)} machine(s), {', '.join(devices)})"

    # -- the work ----------------------------------------------------------------------------------

    def run(self, jobs: Iterator[ChunkJob]) -> Iterator[ChunkResult]:
        ray = self._ray
        limit = self.in_flight or 2 * len(self.actors)
        load = [0] * len(self.actors)
        out: dict = {}  # ObjectRef -> (actor number, job)
        seen = {i: {self.info[i]["worker"]} for i in range(len(self.actors))}
        jobs = iter(jobs)
        more = True
        while True:
            while more and len(out) < limit:
                job = next(jobs, None)
                if job is None:
                    more = False
                    break
                payload = read_payload(job.source, job.volume, job.index, job.names)
                n = min(range(len(load)), key=load.__getitem__)
                out[self.actors[n].process.remote(payload)] = (n, job)
                load[n] += 1
                del payload  # the bytes now live in the object store until the task is done
            if not out:
                return
            (ref,), _ = ray.wait(list(out), num_returns=1)
            n, job = out.pop(ref)
            load[n] -= 1
            result = self._result(ray, ref, job)
            if result.worker and result.worker not in seen[n]:
                seen[n].add(result.worker)
                self.restarts += 1
            yield result

    def _result(self, ray, ref, job: ChunkJob) -> ChunkResult:
        try:
            return ray.get(ref)
        except WorkerSetupError as exc:  # Ray re-raises it as RayTaskError(WorkerSetupError)
            raise UserError(str(getattr(exc, "cause", None) or exc)) from exc
        except ray.exceptions.RayActorError as exc:  # the worker died under it, retries spent
            why = (f"the Ray worker reading this page died {TASK_RETRIES + 1} times ({_reason(exc)}); "
                   "the page may be too large for the worker's memory. Run the batch again with "
                   "--retry-errors to read it again.")
            return ChunkResult(job.volume, job.index, tuple(Page(name=n, error=why) for n in job.names))


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) < 400 else text[:400] + "..."


def _resources(ray) -> str:
    r = ray.cluster_resources()
    return f"{r.get('CPU', 0):g} CPUs, {r.get('GPU', 0):g} GPUs"
