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
"""
from __future__ import annotations

import contextlib
import glob
import json
import os
import tempfile
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
