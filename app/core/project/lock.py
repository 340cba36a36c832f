"""One writer per project: an advisory lock held by whoever edits a source's project.

The GUI holds it while a project is open and editable; `translate`, `batch` and `render` (when
they save the project) hold it while they run. The lock is a `filelock.FileLock` on
`<project file>.lock` beside the project file (`app.core.project.paths.project_path_for`: beside the pages,
or in the app's data folder for a read-only source). The operating system releases it when its
process ends, however it ends (kill -9 included), so a lock is never left held by a dead process.

Beside it the holder writes `<project file>.lock.holder`: who holds it (`Holder`: what, process id,
host, since when). A second opener reads that to say who holds the project (the GUI then opens
it read-only; the commands stop with that message). A holder file left by a process that is no
longer running (its process died) is recognised when the lock is taken: `ProjectLock.took_over`
names it, and a warning is logged.
"""
from __future__ import annotations

import contextlib
import logging
import os
import socket
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from filelock import FileLock, Timeout

from app.atomic import atomic_write_json
from app.errors import UserError
from app.textfile import read_json_file

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Holder:
    what: str  # "Hayai Desktop", "hayai-desktop translate", ...
    pid: int
    host: str
    since: str  # ISO 8601, UTC

    def describe(self) -> str:
        try:
            since = datetime.fromisoformat(self.since).astimezone().strftime("%Y-%m-%d %H:%M:%S")
        except ValueError:
            since = self.since
        return f"{self.what} (process {self.pid} on {self.host}, since {since})"

    def alive(self) -> bool | None:
        """Is the holder's process still running? None when it runs on another host (unknown)."""
        if self.host != socket.gethostname():
            return None
        return _pid_alive(self.pid)


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    except OSError:
        return False
    return True


class ProjectLocked(UserError):
    """The project is being edited elsewhere (`holder`)."""

    def __init__(self, message: str, holder: Holder | None):
        super().__init__(message)
        self.holder = holder


class ProjectLock:
    """The lock of one source's project. `acquire()` -> True when this process now holds it;
    False when another does (`holder` says who, when it could be read)."""

    def __init__(self, source: str | os.PathLike, what: str):
        from app.core.project.paths import project_path_for

        project_file = project_path_for(source)
        self.source = str(source)
        self.what = what
        self.path = project_file.with_name(project_file.name + ".lock")
        self.info_path = project_file.with_name(project_file.name + ".lock.holder")  # not *.json: folders of JSON files are read
        self.holder: Holder | None = None  # who holds it, when another does
        self.took_over: Holder | None = None  # the dead holder whose lock this one took
        self._lock = FileLock(str(self.path))

    @property
    def held(self) -> bool:
        return self._lock.is_locked

    def acquire(self) -> bool:
        if self.held:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        previous = read_holder(self.info_path)
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            self.holder = read_holder(self.info_path) or previous
            return False
        self.holder = None
        if previous is not None and previous.alive() is False:
            self.took_over = previous
            log.warning("%s: took over the lock left by %s, which is no longer running.", self.source,
                        previous.describe())
        me = Holder(self.what, os.getpid(), socket.gethostname(),
                    datetime.now(timezone.utc).isoformat(timespec="seconds"))
        try:
            atomic_write_json(self.info_path, asdict(me), indent=None)
        except OSError as exc:  # the lock itself is held; only the description is missing
            log.warning("%s: cannot write %s (%s)", self.source, self.info_path, exc.strerror or exc)
        return True

    def release(self) -> None:
        if not self.held:
            return
        with contextlib.suppress(OSError):
            self.info_path.unlink()
        self._lock.release(force=True)

    def message(self) -> str:
        """Why this process cannot edit the project (after a failed `acquire`)."""
        who = self.holder.describe() if self.holder else "another program (it did not say which)"
        return (f"{self.source} is being edited by {who}. Close it there first, or wait until that run "
                "ends; nothing is saved over its edits from here.")

    def __enter__(self) -> ProjectLock:
        if not self.acquire():
            raise ProjectLocked(self.message(), self.holder)
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def read_holder(path: Path) -> Holder | None:
    try:
        data = read_json_file(path, "project lock")
        return Holder(str(data["what"]), int(data["pid"]), str(data["host"]), str(data["since"]))
    except (UserError, ValueError, KeyError, TypeError):
        return None


def lock_project(source: str | os.PathLike, what: str) -> ProjectLock:
    """The held lock of this source's project; ProjectLocked naming the holder when another has it.
    Use as a context manager (`with lock_project(src, "hayai-desktop translate"):`)."""
    lock = ProjectLock(source, what)
    if not lock.acquire():
        raise ProjectLocked(lock.message(), lock.holder)
    return lock
