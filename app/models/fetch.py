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
    import httpx2
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled
    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

    from app import __version__

    cancel = cancel or (lambda: False)
    url = hf_hub_url(repo_id, filename, revision=revision, endpoint=endpoint)
    headers = build_hf_headers(library_name="hayai-desktop", library_version=__version__)
    headers["Accept-Encoding"] = "identity"  # sizes and ranges must be in stored bytes
    where = f"{filename} of {repo_id}@{revision[:12]} ({url})"
    if cancel():
        raise Cancelled(f"download of {filename} cancelled")
    try:
        meta = get_hf_file_metadata(url, headers=dict(headers), endpoint=endpoint, retry_on_errors=False)
    except OfflineModeIsEnabled as exc:
        raise ModelError(f"cannot download {where}: offline mode is on (HF_HUB_OFFLINE).") from exc
    except HfHubHTTPError as exc:
        raise ModelError(f"cannot download {where}: the server answered {exc}".splitlines()[0]) from exc
    except (httpx2.HTTPError, OSError) as exc:
        raise ModelError(f"cannot download {where}: {exc or type(exc).__name__}. "
                         "Check the connection (or HF_ENDPOINT) and run the command again.") from exc
    if meta.commit_hash is not None and len(revision) == 40 and meta.commit_hash != revision:
        raise ModelError(f"{where}: the server served commit {meta.commit_hash}, not the pinned {revision}.")
    total = meta.size if meta.size is not None else expected_size
    if expected_size is not None and meta.size is not None and meta.size != expected_size:
        raise ModelError(f"{where}: the server says {meta.size} bytes, the manifest pins {expected_size}; "
                         "refusing a different file.")
    want = (expected_sha256 or "").lower() or _hex_sha256_like(meta.etag)
    if want is None and require_sha256:
        raise ModelError(f"{where}: no sha256 is known for this file; refusing to download it unverified.")

    get_url = meta.location or url
    get_headers = dict(headers)
    if _origin(get_url) != _origin(url):
        get_headers.pop("authorization", None)  # signed CDN URL: the token stays on the Hub

    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    hasher = hashlib.sha256()
    done = 0
    if part.exists():
        with part.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                hasher.update(block)
                done += len(block)
        if total is not None and done > total:  # not ours / stale: start over
            part.unlink()
            hasher, done = hashlib.sha256(), 0
    if progress:
        progress(filename, done, total)

    session = get_session()
    retries = MAX_RETRIES
    while total is None or done < total:
        if cancel():
            raise Cancelled(f"download of {filename} cancelled at {done} bytes (it resumes next time)")
        req_headers = dict(get_headers)
        if done:
            req_headers["Range"] = f"bytes={done}-"
        before = done
        try:
            with session.stream("GET", get_url, headers=req_headers, follow_redirects=True,
                                timeout=httpx2.Timeout(READ_TIMEOUT_S, connect=10.0)) as resp:
                if resp.status_code == 416 and done:  # our partial is not a prefix any more
                    part.unlink(missing_ok=True)
                    hasher, done = hashlib.sha256(), 0
                    continue
                hf_raise_for_status(resp)
                mode = "ab"
                if done and resp.status_code != 206:  # Range ignored: the body is the whole file
                    hasher, done, mode = hashlib.sha256(), 0, "wb"
                if total is None:
                    length = resp.headers.get("Content-Length")
                    total = done + int(length) if length and length.isdigit() else None
                with part.open(mode) as fh:
                    for chunk in resp.iter_bytes():
                        if cancel():
                            raise Cancelled(f"download of {filename} cancelled at {done} bytes "
                                            "(it resumes next time)")
                        fh.write(chunk)
                        hasher.update(chunk)
                        done += len(chunk)
                        if progress:
                            progress(filename, done, total)
            if total is None:
                total = done  # no length announced: a clean end of body is the end of the file
        except HfHubHTTPError as exc:
            raise ModelError(f"cannot download {where}: the server answered {exc}".splitlines()[0]) from exc
        except (httpx2.TransportError, OSError) as exc:
            if isinstance(exc, OSError) and not isinstance(exc, ConnectionError):
                raise ModelError(f"cannot write {part}: {exc}") from exc
            retries = MAX_RETRIES if done > before else retries - 1
            if retries < 0:
                raise ModelError(f"download of {where} failed after {done} bytes: {exc}. "
                                 "Run the command again to resume.") from exc
            for _ in range(10):  # short back-off, still answering cancel
                if cancel():
                    raise Cancelled(f"download of {filename} cancelled at {done} bytes") from exc
                time.sleep(0.05 * (MAX_RETRIES - retries + 1))
    got = hasher.hexdigest()
    if want is not None and got != want:
        part.unlink(missing_ok=True)
        raise ModelError(f"{filename} downloaded from {repo_id}@{revision[:12]} is corrupt: sha256 {got} "
                         f"does not match the pinned {want}. The bad file was deleted; run the download "
                         "again, and if it fails the same way the mirror (HF_ENDPOINT) serves a different file.")
    replace_durably(part, dest)
    return FetchResult(path=dest, size=done, sha256=got)
