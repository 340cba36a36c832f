"""Atomic file writes: the target is either the old file or the complete new one, never half.

The one writer of the app's files (settings, projects, autosaves, exports, API keys, rendered
pages, the model store's side files): the new content goes to a temporary file in the same folder, is flushed and
fsynced, then moved over the target with `os.replace` (atomic on POSIX and Windows when both are
on one volume), and the folder is fsynced. A crash, a kill, a full disk or an exception mid-write
leaves the previous file untouched and no temporary file behind.

    atomic_write_text(path, "text")                         # or a function given the open file
    atomic_write_json(path, data, indent=2, mode=0o600)     # json.dumps into it (mode: secrets)
    with atomic_open(path, binary=True) as fh: ...          # streamed (images, CBZ, PDF, PSD)
    replace_durably(finished_file, path)                    # a file written elsewhere (downloads)
    append_line(path, "one line")                           # a log (batch.jsonl): durable appends
    read_lines(path)                                        # its complete lines (a torn last one left out)
    log = Appender(path); log.append("line"); log.close()   # a journal: write now, fsync on its own thread
"""
from __future__ import annotations

import contextlib
import glob
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TextIO

_STALE_TEMP_SECONDS = 600


def _default_new_file_mode() -> int:
    """What a plain open() would give a new file under this process's umask (read once, at import,
    while the process is still single-threaded: reading the umask means setting it)."""
    if os.name == "nt":
        return 0o666
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


_NEW_FILE_MODE = _default_new_file_mode()


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, *, binary: bool = False, encoding: str = "utf-8",
                mode: int | None = None) -> Iterator[IO]:
    """A file to write `path` through: text (newline "\\n") or `binary`. When the block ends
    without an error the data is flushed and fsynced, the file gets its permissions and replaces
    `path`; on any error the temporary file is removed and `path` is left as it was.

    mode: the permissions of the result (e.g. 0o600 for secrets; the temporary file is 0600 from
    its creation, before a byte is written). None keeps those of the file replaced, or gives a
    new file what the umask allows. Raises OSError (folder not writable, disk full).
    """
    path = Path(path)
    folder = path.parent
    fd, temp_name = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with (open(fd, "wb") if binary else open(fd, "w", encoding=encoding, newline="\n")) as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temp_name, mode if mode is not None else _target_mode(path))
        _replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
    _fsync_folder(folder)
    _remove_stale_temps(path)


def atomic_write_text(path: str | os.PathLike, write: Callable[[TextIO], None] | str,
                      encoding: str = "utf-8", mode: int | None = None) -> Path:
    """Write text to `path` atomically (`atomic_open`); `write` is the text, or a function given
    the open file. Raises OSError (the previous file, if any, is kept) when the folder is not
    writable or the disk is full; any exception raised by `write` propagates the same way."""
    with atomic_open(path, encoding=encoding, mode=mode) as stream:
        if callable(write):
            write(stream)
        else:
            stream.write(write)
    return Path(path)


def atomic_write_json(path: str | os.PathLike, data, *, indent: int | None = 2, sort_keys: bool = False,
                      ensure_ascii: bool = False, mode: int | None = None) -> Path:
    """`data` as JSON, written atomically (see `atomic_write_text`); TypeError for data that is
    not JSON (nothing is written then)."""
    text = json.dumps(data, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii)
    return atomic_write_text(path, text + "\n", mode=mode)


def replace_durably(src: str | os.PathLike, dest: str | os.PathLike) -> Path:
    """Move the finished file `src` onto `dest` (same folder or volume): `src`'s bytes are fsynced
    first and the folder after, so a crash right after never leaves a short `dest`."""
    src, dest = Path(src), Path(dest)
    with open(src, "rb+") as fh:
        os.fsync(fh.fileno())
    _replace(str(src), dest)
    _fsync_folder(dest.parent)
    return dest


def _target_mode(target: Path) -> int:
    """The permissions of the file being replaced, or the umask's default for a new file."""
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        return _NEW_FILE_MODE


def _replace(temp_name: str, target: Path) -> None:
    # On Windows a reader (antivirus, indexer) holding the target briefly makes replace fail.
    for attempt in range(5):
        try:
            os.replace(temp_name, target)
            return
        except PermissionError:
            if os.name != "nt" or attempt == 4:
                raise
            time.sleep(0.05 * (attempt + 1))


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX); not possible or needed on Windows."""
    if os.name == "nt":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _remove_stale_temps(path: Path) -> None:
    """Temp files left by a process killed mid-write (older than ten minutes) are removed."""
    now = time.time()
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        with contextlib.suppress(OSError):
            if now - stale.stat().st_mtime > _STALE_TEMP_SECONDS:
                stale.unlink()


def append_line(path: str | os.PathLike, line: str, encoding: str = "utf-8") -> None:
    """Append one line (no newline inside) to a log file, durably: one write, then fsync.

    A log is not rewritten, so a crash can at worst leave its last line torn (no newline at
    its end): `read_lines` leaves such a line out, and the next append starts on a new line,
    so the fragment stays a line of its own, which a JSON-lines reader skips as invalid.
    """
    if "\n" in line:
        raise ValueError("a log line cannot contain a newline")
    data = line.encode(encoding) + b"\n"
    with open(path, "a+b") as stream:  # appends always go to the end; reading finds the last byte
        size = stream.seek(0, os.SEEK_END)
        if size:
            stream.seek(size - 1)
            if stream.read(1) != b"\n":
                data = b"\n" + data  # after a torn line
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())


def read_lines(path: str | os.PathLike, encoding: str = "utf-8") -> list[str]:
    """The complete lines of a log written by `append_line` (a torn last line is left out);
    [] when the file does not exist."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return []
    complete = data[:data.rfind(b"\n") + 1]
    return [line for line in complete.decode(encoding, errors="replace").split("\n") if line]


class Appender:
    """An append-only log kept open (the edit journal): `append` writes the line to the file at
    once, in the caller's thread (one write() of a few hundred bytes into the operating system's
    cache: once it returns, the line survives the process being killed, kill -9 included);
    the fsync that makes it survive a power cut runs on the appender's own thread, soon after,
    one for any number of lines that arrived meanwhile, so the caller never waits for the disk.
    `synced()` waits until every line appended so far is fsynced (tests, exit).

    Lines are as `append_line`'s (a torn last line after a crash: `read_lines` leaves it out).
    Raises OSError when the file cannot be opened; a failed write raises OSError from `append`.
    """

    def __init__(self, path: str | os.PathLike, encoding: str = "utf-8"):
        self.path = Path(path)
        self.encoding = encoding
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
        self._cond = threading.Condition()
        self._written = self._synced = 0  # lines appended / lines known fsynced
        self._closing = False
        self.error: OSError | None = None  # the last fsync failure (reported by the next append)
        size = os.fstat(self._fd).st_size
        if size:
            with open(self.path, "rb") as stream:
                stream.seek(size - 1)
                if stream.read(1) != b"\n":
                    os.write(self._fd, b"\n")  # after a torn line: start a line of our own
        self._thread = threading.Thread(target=self._sync_loop, name=f"fsync {self.path.name}", daemon=True)
        self._thread.start()

    def append(self, line: str) -> None:
        if "\n" in line:
            raise ValueError("a log line cannot contain a newline")
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        data = line.encode(self.encoding) + b"\n"
        with self._cond:
            while data:
                data = data[os.write(self._fd, data):]
            self._written += 1
            self._cond.notify_all()

    def synced(self, timeout: float | None = None) -> bool:
        """Wait until everything appended so far is fsynced; False when `timeout` ran out."""
        with self._cond:
            target = self._written
            return self._cond.wait_for(lambda: self._synced >= target or self._closing, timeout)

    def _sync_loop(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._written > self._synced or self._closing)
                if self._closing and self._written <= self._synced:
                    return
                target = self._written
            try:
                os.fsync(self._fd)
            except OSError as exc:
                self.error = exc
            with self._cond:
                self._synced = max(self._synced, target)
                self._cond.notify_all()

    def close(self, delete: bool = False) -> None:
        """fsync what is pending, stop the thread, close the file (and delete it)."""
        with self._cond:
            if self._closing:
                return
            self._closing = True
            self._cond.notify_all()
        self._thread.join()
        with contextlib.suppress(OSError):
            os.fsync(self._fd)
        os.close(self._fd)
        if delete:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
