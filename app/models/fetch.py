"""One file from the Hugging Face Hub: byte progress, cancellation, resume, sha256 check.

`huggingface_hub.hf_hub_download` (2.4) retries a dropped connection inside one call, but it
downloads into a process-unique temporary file that it deletes on any failure, so a cancelled or
killed transfer cannot be resumed later, and its only progress hook is a tqdm class. This module
therefore does the transfer itself while keeping everything else the Hub's: the URL comes from
`huggingface_hub.hf_hub_url` (so `HF_ENDPOINT` mirrors work), the metadata from
`get_hf_file_metadata` (HEAD on `/{repo}/resolve/{revision}/{file}`, Hub redirects, ETag,
X-Repo-Commit, X-Linked-Size), the headers from `build_hf_headers` (token, user agent), the
client from `get_session()` and the error mapping from `hf_raise_for_status`.

Partial data lives in `<dest>.part` next to nothing else; a later call continues it with an HTTP
`Range: bytes=N-` request (a server that answers 200 instead of 206 restarts the file from zero).
No Qt, no torch.
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.atomic import replace_durably
from app.errors import Cancelled, ModelError

MAX_RETRIES = 5  # dropped connections retried (with Range) per file, reset after any progress
READ_TIMEOUT_S = 30.0

ProgressFn = Callable[[str, int, "int | None"], None]  # (file name, bytes done, bytes total or None)
CancelFn = Callable[[], bool]


@dataclass(frozen=True)
class FetchResult:
    """What `fetch_file` delivered: the final path, its size in bytes and its sha256 (hex)."""

    path: Path
    size: int
    sha256: str


def _hex_sha256_like(value: str | None) -> str | None:
    if value and len(value) == 64 and all(c in "0123456789abcdef" for c in value.lower()):
        return value.lower()
    return None


def _origin(url: str) -> tuple[str, str, int | None]:
    from urllib.parse import urlparse

    parsed = urlparse(url)
    return parsed.scheme, (parsed.hostname or "").lower(), parsed.port


def fetch_file(
    *,
    repo_id: str,
    revision: str,
    filename: str,
    dest: Path,
    endpoint: str,
    expected_sha256: str | None,
    expected_size: int | None,
    progress: ProgressFn | None = None,
    cancel: CancelFn | None = None,
    require_sha256: bool = True,
) -> FetchResult:
    """Download `filename` of `repo_id` at `revision` from `endpoint` to `dest`.

    The bytes go to `dest` + ".part" first (kept on cancel or network failure, resumed by the next
    call) and are moved onto `dest` only when their sha256 equals `expected_sha256`. With
    `expected_sha256=None` the file is checked against the Hub's own ETag when that is a sha256
    (LFS files); `require_sha256=True` then refuses a file for which no hash is known at all.

    Chunks are what each network read returns (at most 64 KiB with httpx), so a dropped
    connection loses nothing already received.
    progress(filename, bytes_done, bytes_total) is called after every chunk (bytes_total may be
    None when the server does not say); cancel() is checked before every chunk and between
    retries, and True raises Cancelled. Failures raise ModelError naming the file and the URL.
    """
    from huggingface_hub import hf_hub_url
    from huggingface_hub.utils import build_hf_headers

    from app import __version__

    cancel = cancel or (lambda: False)
    url = hf_hub_url(repo_id, filename, revision=revision, endpoint=endpoint)
    headers = build_hf_headers(library_name="hayai-desktop", library_version=__version__)
    headers["Accept-Encoding"] = "identity"  # sizes and ranges must be in stored bytes
    where = f"{filename} of {repo_id}@{revision[:12]} ({url})"
    if cancel():
        raise Cancelled(f"download of {filename} cancelled")
    meta = _file_metadata(url, headers, endpoint, where)
    total, want = _check_metadata(meta, revision, expected_size, expected_sha256, require_sha256, where)
    get_url, get_headers = _get_target(meta, url, headers)
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = _Partial.resume(dest.with_name(dest.name + ".part"), total)
    if progress:
        progress(filename, partial.done, partial.total)
    _transfer(partial, get_url, get_headers, filename, where, progress, cancel)
    return _verify_and_place(partial, dest, want, filename, repo_id, revision)


def _file_metadata(url: str, headers: dict, endpoint: str, where: str):
    """The Hub's metadata of the file (HEAD, redirects followed); ModelError naming `where`."""
    import httpx2
    from huggingface_hub import get_hf_file_metadata
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    try:
        return get_hf_file_metadata(url, headers=dict(headers), endpoint=endpoint, retry_on_errors=False)
    except OfflineModeIsEnabled as exc:
        raise ModelError(f"cannot download {where}: offline mode is on (HF_HUB_OFFLINE).") from exc
    except HfHubHTTPError as exc:
        raise ModelError(f"cannot download {where}: the server answered {exc}".splitlines()[0]) from exc
    except (httpx2.HTTPError, OSError) as exc:
        raise ModelError(f"cannot download {where}: {exc or type(exc).__name__}. "
                         "Check the connection (or HF_ENDPOINT) and run the command again.") from exc


def _check_metadata(meta, revision: str, expected_size: int | None, expected_sha256: str | None,
                    require_sha256: bool, where: str) -> tuple[int | None, str | None]:
    """(bytes total or None, the sha256 the file must have or None) once the metadata is the
    pinned file's; ModelError when it is not, or when no hash is known and one is required."""
    if meta.commit_hash is not None and len(revision) == 40 and meta.commit_hash != revision:
        raise ModelError(f"{where}: the server served commit {meta.commit_hash}, not the pinned {revision}.")
    total = meta.size if meta.size is not None else expected_size
    if expected_size is not None and meta.size is not None and meta.size != expected_size:
        raise ModelError(f"{where}: the server says {meta.size} bytes, the manifest pins {expected_size}; "
                         "refusing a different file.")
    want = (expected_sha256 or "").lower() or _hex_sha256_like(meta.etag)
    if want is None and require_sha256:
        raise ModelError(f"{where}: no sha256 is known for this file; refusing to download it unverified.")
    return total, want


def _get_target(meta, url: str, headers: dict) -> tuple[str, dict]:
    """Where the bytes come from (the Hub's redirect, if any) and the headers to send there."""
    get_url = meta.location or url
    get_headers = dict(headers)
    if _origin(get_url) != _origin(url):
        get_headers.pop("authorization", None)  # signed CDN URL: the token stays on the Hub
    return get_url, get_headers


@dataclass
class _Partial:
    """The `.part` file being filled: its bytes so far, their running sha256, the total if known."""

    part: Path
    total: int | None
    hasher: object = None
    done: int = 0

    @classmethod
    def resume(cls, part: Path, total: int | None) -> _Partial:
        """What an earlier call left in `part` (hashed again), or a fresh start when it is longer
        than the file."""
        partial = cls(part, total, hashlib.sha256())
        if part.exists():
            with part.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    partial.hasher.update(block)
                    partial.done += len(block)
            if total is not None and partial.done > total:  # not ours / stale: start over
                part.unlink()
                partial.restart()
        return partial

    def restart(self) -> None:
        self.hasher, self.done = hashlib.sha256(), 0


def _transfer(partial: _Partial, get_url: str, get_headers: dict, filename: str, where: str,
              progress: ProgressFn | None, cancel: CancelFn) -> None:
    """GET the rest of the file into `partial` (Range from what it has), retrying dropped
    connections (MAX_RETRIES, reset after any progress) with a short back-off that still answers
    cancel; Cancelled keeps the part for the next call."""
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError
    from huggingface_hub.utils import get_session

    session = get_session()
    retries = MAX_RETRIES
    while partial.total is None or partial.done < partial.total:
        if cancel():
            raise Cancelled(f"download of {filename} cancelled at {partial.done} bytes (it resumes next time)")
        before = partial.done
        try:
            if not _stream_once(session, partial, get_url, get_headers, filename, progress, cancel):
                continue
        except HfHubHTTPError as exc:
            raise ModelError(f"cannot download {where}: the server answered {exc}".splitlines()[0]) from exc
        except (httpx2.TransportError, OSError) as exc:
            if isinstance(exc, OSError) and not isinstance(exc, ConnectionError):
                raise ModelError(f"cannot write {partial.part}: {exc}") from exc
            retries = MAX_RETRIES if partial.done > before else retries - 1
            if retries < 0:
                raise ModelError(f"download of {where} failed after {partial.done} bytes: {exc}. "
                                 "Run the command again to resume.") from exc
            for _ in range(10):  # short back-off, still answering cancel
                if cancel():
                    raise Cancelled(f"download of {filename} cancelled at {partial.done} bytes") from exc
                time.sleep(0.05 * (MAX_RETRIES - retries + 1))


def _stream_once(session, partial: _Partial, get_url: str, get_headers: dict, filename: str,
                 progress: ProgressFn | None, cancel: CancelFn) -> bool:
    """One GET (from `partial.done` on), appended chunk by chunk; False when the server refused
    the range (the part is dropped: start again)."""
    import httpx2
    from huggingface_hub.utils import hf_raise_for_status

    req_headers = dict(get_headers)
    if partial.done:
        req_headers["Range"] = f"bytes={partial.done}-"
    with session.stream("GET", get_url, headers=req_headers, follow_redirects=True,
                        timeout=httpx2.Timeout(READ_TIMEOUT_S, connect=10.0)) as resp:
        if resp.status_code == 416 and partial.done:  # our partial is not a prefix any more
            partial.part.unlink(missing_ok=True)
            partial.restart()
            return False
        hf_raise_for_status(resp)
        mode = "ab"
        if partial.done and resp.status_code != 206:  # Range ignored: the body is the whole file
            partial.restart()
            mode = "wb"
        if partial.total is None:
            length = resp.headers.get("Content-Length")
            partial.total = partial.done + int(length) if length and length.isdigit() else None
        with partial.part.open(mode) as fh:
            for chunk in resp.iter_bytes():
                if cancel():
                    raise Cancelled(f"download of {filename} cancelled at {partial.done} bytes "
                                    "(it resumes next time)")
                fh.write(chunk)
                partial.hasher.update(chunk)
                partial.done += len(chunk)
                if progress:
                    progress(filename, partial.done, partial.total)
    if partial.total is None:
        partial.total = partial.done  # no length announced: a clean end of body is the end of the file
    return True


def _verify_and_place(partial: _Partial, dest: Path, want: str | None, filename: str, repo_id: str,
                      revision: str) -> FetchResult:
    """Move the part onto `dest` when its sha256 is the one wanted; else delete it, ModelError."""
    got = partial.hasher.hexdigest()
    if want is not None and got != want:
        partial.part.unlink(missing_ok=True)
        raise ModelError(f"{filename} downloaded from {repo_id}@{revision[:12]} is corrupt: sha256 {got} "
                         f"does not match the pinned {want}. The bad file was deleted; run the download "
                         "again, and if it fails the same way the mirror (HF_ENDPOINT) serves a different file.")
    replace_durably(partial.part, dest)
    return FetchResult(path=dest, size=partial.done, sha256=got)
