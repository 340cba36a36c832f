"""What the store knows about files: their sha256 (hashed 1 MiB at a time, with progress and
cancel; remembered per path, size and mtime in `models_dir()/.sha256.json`) and the hashes the
user trusted for unpinned files (`models_dir()/.trusted.json`). No Qt, no torch."""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from app.atomic import atomic_write_json
from app.errors import Cancelled, UserError
from app.models.manifest import ModelEntry, ModelFile
from app.models.places import models_dir
from app.textfile import read_json_file

ProgressFn = Callable[[str, int, "int | None"], None]
CancelFn = Callable[[], bool]


def _read_json(path: Path) -> dict:
    try:
        return read_json_file(path, "record of verified model files")
    except UserError:
        return {}


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, data, indent=1, sort_keys=True)


def _sha256_file(path: Path, progress: ProgressFn | None = None, cancel: CancelFn | None = None) -> str:
    """sha256 (hex) of a file, read 1 MiB at a time: progress(file name, bytes done, total) after
    each, cancel() before each (True raises Cancelled)."""
    import hashlib

    h = hashlib.sha256()
    total = path.stat().st_size if progress else None
    done = 0
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            if cancel is not None and cancel():
                raise Cancelled(f"checking {path.name} cancelled")
            h.update(block)
            done += len(block)
            if progress:
                progress(path.name, done, total)
    return h.hexdigest()


def _copy_file(src: Path, dest: Path, progress: ProgressFn | None, cancel: CancelFn | None) -> str:
    """Copy 1 MiB at a time, answering cancel() between chunks (Cancelled; `dest` is then partial);
    returns the sha256 (hex) of the bytes copied."""
    import hashlib

    h = hashlib.sha256()
    total = src.stat().st_size
    done = 0
    with src.open("rb") as fin, dest.open("wb") as fout:
        for block in iter(lambda: fin.read(1 << 20), b""):
            if cancel is not None and cancel():
                raise Cancelled(f"copying {src.name} cancelled")
            fout.write(block)
            h.update(block)
            done += len(block)
            if progress:
                progress(src.name, done, total)
        fout.flush()
        os.fsync(fout.fileno())
    return h.hexdigest()


def _hash_cache_path() -> Path:
    return models_dir() / ".sha256.json"


def _remember_hash(path: Path, sha: str) -> None:
    st = path.stat()
    cache = _read_json(_hash_cache_path())
    cache[str(path.resolve())] = [st.st_size, st.st_mtime_ns, sha]
    _write_json(_hash_cache_path(), cache)


def file_sha256(path: Path, *, use_cache: bool = True) -> str:
    """sha256 (hex) of a file; remembered per (resolved path, size, mtime) when `use_cache`."""
    path = Path(path)
    key = str(path.resolve())
    st = path.stat()
    if use_cache:
        hit = _read_json(_hash_cache_path()).get(key)
        if hit and hit[0] == st.st_size and hit[1] == st.st_mtime_ns:
            return hit[2]
    sha = _sha256_file(path)
    try:
        _remember_hash(path, sha)
    except OSError:
        pass  # read-only store: verification still happened, it is just not remembered
    return sha


def _trusted_path() -> Path:
    return models_dir() / ".trusted.json"


def _trusted_sha(entry: ModelEntry, f: ModelFile) -> str | None:
    return _read_json(_trusted_path()).get(f"{entry.repo_id}/{f.name}")


def _trust(entry: ModelEntry, f: ModelFile, sha: str) -> None:
    data = _read_json(_trusted_path())
    data[f"{entry.repo_id}/{f.name}"] = sha
    _write_json(_trusted_path(), data)


def _expected_sha(entry: ModelEntry, f: ModelFile) -> str | None:
    return f.sha256 or _trusted_sha(entry, f)
