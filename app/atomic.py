"""Atomic file writes: the target is either the old file or the complete new one, never half.

The one writer of the app's files (settings, projects, autosaves, exports, the model store's
side files): the new content goes to a temporary file in the same folder, is flushed and
fsynced, then moved over the target with `os.replace` (atomic on POSIX and Windows when both are
on one volume), and the folder is fsynced. A crash, a kill, a full disk or an exception mid-write
leaves the previous file untouched and no temporary file behind.

    atomic_write_text(path, "text")                         # or a function given the open file
    atomic_write_json(path, data, indent=2)                 # json.dump into it
    replace_durably(finished_file, path)                    # a file written elsewhere (downloads)
"""
from __future__ import annotations

import contextlib
import glob
import json
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


def atomic_write_json(path: str | os.PathLike, data, *, indent: int | None = 2, sort_keys: bool = False,
                      ensure_ascii: bool = False) -> Path:
    """`data` as JSON, written atomically (see `atomic_write_text`); TypeError for data that is
    not JSON (nothing is written then)."""
    text = json.dumps(data, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii)
    return atomic_write_text(path, text + "\n")


def replace_durably(src: str | os.PathLike, dest: str | os.PathLike) -> Path:
    """Move the finished file `src` onto `dest` (same folder or volume): `src`'s bytes are fsynced
    first and the folder after, so a crash right after never leaves a short `dest`."""
    src, dest = Path(src), Path(dest)
    with open(src, "rb+") as fh:
        os.fsync(fh.fileno())
    _replace(str(src), dest)
    _fsync_folder(dest.parent)
    return dest


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
