"""Long work of the service in the background: reading, translating and exporting run as jobs
on a small thread pool, so the server answers while they run and every client sees them.

A job has an id, its kind, its volume, a state (running, done, failed, cancelled), progress
(done / total), the time left (from the rate so far) and a result or an error. One job per
volume at a time (`JobBusy`, HTTP 409). Cancel sets the job's event, which the core's loops
poll between pages, crops and requests (app.errors.Cancelled); what a job saved before it was
cancelled is whole, since every page is saved as it lands.
"""
from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from app.errors import Cancelled, UserError

log = logging.getLogger(__name__)
KINDS = ("read", "translate", "export")


class JobBusy(UserError):
    """The volume has a job running already (HTTP 409)."""


@dataclass
class Job:
    id: str
    kind: str
    volume: str
    state: str = "running"  # running | done | failed | cancelled
    done: int = 0
    total: int = 0
    detail: str = ""
    result: dict | None = None
    error: str | None = None
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    cancel_event: threading.Event = field(default_factory=threading.Event, repr=False)
    changed: int = 0  # bumped on every change (server-sent events wait for it)

    def progress(self, done: int, total: int, detail: str = "") -> None:
        self.done, self.total, self.detail = done, total, detail
        self.changed += 1

    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def seconds_left(self) -> float | None:
        if self.state != "running" or self.done <= 0 or self.total <= 0:
            return None
        rate = self.done / max(1e-6, time.monotonic() - self.started)
        return round((self.total - self.done) / rate, 1)

    def as_dict(self) -> dict:
        return {"id": self.id, "kind": self.kind, "volume": self.volume, "state": self.state,
                "done": self.done, "total": self.total, "detail": self.detail,
                "seconds_left": self.seconds_left(),
                "seconds": round((self.finished or time.monotonic()) - self.started, 2),
                "result": self.result, "error": self.error}


class Jobs:
    """The jobs of one server (all volumes)."""

    def __init__(self, workers: int = 2):
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hayai-job")
        self._lock = threading.Lock()
        self.jobs: dict[str, Job] = {}

    def start(self, kind: str, volume: str, work: Callable[[Job], dict]) -> Job:
        with self._lock:
            busy = [j for j in self.jobs.values() if j.volume == volume and j.state == "running"]
            if busy:
                raise JobBusy(f"volume {volume} has a {busy[0].kind} job running ({busy[0].id}); wait for it or "
                              "cancel it first.")
            job = Job(uuid.uuid4().hex[:12], kind, volume)
            self.jobs[job.id] = job
        self._pool.submit(self._run, job, work)
        return job

    def _run(self, job: Job, work: Callable[[Job], dict]) -> None:
        try:
            job.result = work(job)
            job.state = "done"
        except Cancelled:
            job.state = "cancelled"
        except UserError as exc:
            job.state, job.error = "failed", str(exc)
        except Exception as exc:  # noqa: BLE001 - a bug: logged with its traceback, the job says failed
            log.exception("job %s (%s) failed", job.id, job.kind)
            job.state, job.error = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            job.finished = time.monotonic()
            job.changed += 1

    def get(self, job_id: str) -> Job:
        try:
            return self.jobs[job_id]
        except KeyError:
            raise KeyError(f"no job {job_id}") from None

    def running(self, volume: str) -> Job | None:
        return next((j for j in self.jobs.values() if j.volume == volume and j.state == "running"), None)

    def wait(self, job: Job, timeout: float | None = None) -> Job:
        end = None if timeout is None else time.monotonic() + timeout
        while job.state == "running" and (end is None or time.monotonic() < end):
            time.sleep(0.05)
        return job

    def shutdown(self) -> None:
        for job in self.jobs.values():
            job.cancel_event.set()
        self._pool.shutdown(wait=True, cancel_futures=True)
