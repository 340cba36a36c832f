"""What a batch run leaves in OUT_DIR, so that the next run knows what is done.

- `OUT_DIR/batch.jsonl`: one line per volume finished (appended, never rewritten):
  {"volume": key, "source": path, "export": "key.json", "pages", "blocks", "errors", "seconds",
   "model", "detector", "settings": {...}, "app_version", "finished_at"}. A volume read again
  (other settings, --retry-errors) gets a new line; the last line of a volume is the one that counts.
- `OUT_DIR/<key>.json`: the volume's export (what `ocr` writes), written atomically when all
  its pages are read, so it is either absent, the previous one, or complete.
- `OUT_DIR/.hayai-batch/<hash>.jsonl`: the chunks already read of a volume not finished yet
  (a header line with the volume, its settings and page names, then one line per chunk read),
  so that an interrupted run goes on from the chunks it had; removed once the export is written.

A volume is skipped (complete) when its last line has the same output settings, its export
exists, and the export lists exactly the pages the volume has now (a page added or removed
since: read again). Lines torn by a crash are ignored (app.atomic.read_lines).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from datetime import datetime, timezone
from pathlib import Path

from app import __version__
from app.atomic import append_line, read_lines
from app.core.document.types import Page
from app.core.exports.json_txt import EXPORT_FORMAT
from app.core.project.codec import page_from_dict, page_to_dict
from app.errors import UserError
from app.textfile import read_json_file

log = logging.getLogger(__name__)

LOG_NAME = "batch.jsonl"
STATE_DIR = ".hayai-batch"
LOCK_NAME = ".hayai-batch.lock"


@contextlib.contextmanager
def lock_out_dir(out_dir: Path):
    """Hold OUT_DIR for this run: a second batch writing to the same folder at the same time
    gets a UserError instead of mixing its records with this one's. (POSIX advisory lock, let go
    when the process ends, however it ends; no lock where fcntl is missing, i.e. Windows.)"""
    try:
        import fcntl
    except ImportError:
        yield
        return
    path = out_dir / LOCK_NAME
    try:
        stream = open(path, "a+")
    except OSError as exc:
        raise UserError(f"{path}: cannot create the lock file ({exc.strerror or exc}).") from exc
    with stream:
        try:
            fcntl.flock(stream.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise UserError(f"{out_dir}: another `hayai-desktop batch` is writing to this folder. Wait for it "
                            "to finish, or give this run another --out.") from exc
        yield


def _loads(lines: list[str], where: Path) -> list[dict]:
    out = []
    for n, line in enumerate(lines, 1):
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            log.warning("%s line %d: not JSON, ignored", where, n)
            continue
        if isinstance(data, dict):
            out.append(data)
    return out


def _dumps(data: dict) -> str:
    return json.dumps(data, ensure_ascii=False, allow_nan=False)


def _append(path: Path, data: dict, what: str) -> None:
    try:
        append_line(path, _dumps(data))
    except OSError as exc:
        raise UserError(f"{path}: cannot write the {what} ({exc.strerror or exc}). Free some disk space "
                        "or check the folder's permissions, then run the batch again: finished volumes "
                        "are kept.") from exc


class BatchLog:
    """OUT_DIR/batch.jsonl: the record of each finished volume."""

    def __init__(self, out_dir: Path):
        self.path = out_dir / LOG_NAME
        self.records: dict[str, dict] = {}
        for record in _loads(read_lines(self.path), self.path):
            if isinstance(record.get("volume"), str):
                self.records[record["volume"]] = record  # the last line of a volume counts

    def append(self, record: dict) -> None:
        record = {**record, "app_version": __version__,
                  "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        _append(self.path, record, "batch log")
        self.records[record["volume"]] = record


def export_pages(path: Path) -> list[str] | None:
    """The page names of a complete export at `path`; None when it is absent or not an export."""
    try:
        data = read_json_file(path, "JSON export")
    except UserError:
        return None
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT or not isinstance(data.get("pages"), list):
        return None
    pages = data["pages"]
    if not all(isinstance(p, dict) and (p.get("processed") or p.get("error")) for p in pages):
        return None
    return [p.get("name") for p in pages]


def is_complete(record: dict | None, settings: dict, export: Path, page_names: list[str],
                retry_errors: bool = False) -> bool:
    """True when a volume need not be read again (see the module docstring)."""
    if record is None or record.get("settings") != settings:
        return False
    if retry_errors and record.get("errors"):
        return False
    return export_pages(export) == list(page_names)


class PartialVolume:
    """The chunks already read of one volume, kept on disk until its export is written.

    Only the chunk numbers are held in memory; `pages()` reads the pages back for the export.
    """

    def __init__(self, out_dir: Path, key: str, header: dict):
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:20]
        self.path = out_dir / STATE_DIR / f"{digest}.jsonl"
        self.header = {"volume": key, **header}
        self.done: set[int] = set()
        lines = _loads(read_lines(self.path), self.path)
        if lines and lines[0].get("header") == self.header:
            self.done = {c["chunk"] for c in lines[1:] if isinstance(c.get("chunk"), int)}
        else:
            self.remove()

    def _start(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"{self.path.parent}: cannot create the folder ({exc.strerror or exc}).") from exc
        _append(self.path, {"header": self.header}, "batch state")

    def add(self, index: int, pages: list[Page]) -> None:
        """Record chunk `index` (its pages) as read."""
        if not self.path.exists():
            self._start()
        _append(self.path, {"chunk": index, "pages": [page_to_dict(p) for p in pages]}, "batch state")
        self.done.add(index)

    def pages(self) -> list[Page]:
        """Every page recorded, in chunk order (then page order within a chunk)."""
        chunks: dict[int, list[Page]] = {}
        for data in _loads(read_lines(self.path), self.path)[1:]:
            if isinstance(data.get("chunk"), int):
                chunks[data["chunk"]] = [page_from_dict(p, self.path) for p in data.get("pages", [])]
        return [page for index in sorted(chunks) for page in chunks[index]]

    def remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self.done = set()
