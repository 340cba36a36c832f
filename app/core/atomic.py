"""Atomic file writes: the target is either the old file or the complete new one, never half.

The new content goes to a temporary file in the same folder, is flushed and fsynced, then moved
over the target with `os.replace` (atomic on POSIX and Windows when both are on one volume).
A crash, a kill or an exception mid-write leaves the previous file untouched.
"""
from __future__ import annotations

import contextlib
import glob
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

_STALE_TEMP_SECONDS = 600


def atomic_write_text(path: str | os.PathLike, write: Callable[[TextIO], None] | str,
                      encoding: str = "utf-8") -> Path:
    """Write text to `path` atomically; `write` is the text, or a function given the open file.

    Raises OSError (the previous file, if any, is kept) when the folder is not writable or the
    disk is full; any exception raised by `write` propagates the same way.
    """
    path = Path(path)
    folder = path.parent
    fd, temp_name = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with open(fd, "w", encoding=encoding, newline="\n") as stream:
            if callable(write):
                write(stream)
            else:
                stream.write(write)
            stream.flush()
            os.fsync(stream.fileno())
        _copy_mode(path, temp_name)
        _replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
    _fsync_folder(folder)
    _remove_stale_temps(path)
    return path


def _copy_mode(target: Path, temp_name: str) -> None:
    """Keep the target's permissions (mkstemp makes 0600 files); new files get 0644."""
    try:
        mode = target.stat().st_mode & 0o777
    except OSError:
        mode = 0o644
    with contextlib.suppress(OSError):
        os.chmod(temp_name, mode)


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
