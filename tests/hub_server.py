"""A local stand-in for the Hugging Face Hub's file endpoints, for the model store tests.

Two real HTTP/1.1 servers on 127.0.0.1 (random ports), as the Hub is laid out:
  - the "hub": `HEAD|GET {endpoint}/{repo_id}/resolve/{revision}/{filename}`. Small (git) files
    are answered directly (200, ETag = git blob sha1, X-Repo-Commit, Content-Length, Range).
    Large (LFS) files answer `302` to the CDN with X-Repo-Commit, X-Linked-Etag (the sha256) and
    X-Linked-Size, which is what `huggingface_hub.get_hf_file_metadata` reads. Unknown repos,
    revisions and files answer 404 with the Hub's X-Error-Code (RepoNotFound, RevisionNotFound,
    EntryNotFound), so huggingface_hub maps them to its own errors.
  - the "cdn" (another origin, like cdn-lfs / cas-bridge): `GET /blobs/{sha256}` with
    `Accept-Ranges: bytes`, 206 + Content-Range for `Range: bytes=N-[M]`, 416 past the end.

Test controls: `add_repo(...)`, `files[...]` (replace bytes to serve a corrupted file),
`drop_once[filename] = n` (send the headers for the whole body, then only n bytes and close the
connection, once), `hold[filename] = (n, event)` (send n bytes, then nothing until `event` is
set: a stalled connection), `requests` (every request seen: method, path, headers).
"""
from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse

LFS_SUFFIXES = (".safetensors", ".pt", ".bin")


@dataclass
class SeenRequest:
    server: str  # "hub" or "cdn"
    method: str
    path: str
    headers: dict[str, str]


@dataclass
class FakeHub:
    files: dict[tuple[str, str, str], bytes] = field(default_factory=dict)  # (repo, rev, name) -> bytes
    drop_once: dict[str, int] = field(default_factory=dict)  # filename -> bytes sent before dropping
    hold: dict[str, tuple[int, threading.Event]] = field(default_factory=dict)  # filename -> (bytes, release)
    requests: list[SeenRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._hub = _Server(("127.0.0.1", 0), _HubHandler, self)
        self._cdn = _Server(("127.0.0.1", 0), _CdnHandler, self)
        self._threads = [threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
                         for s in (self._hub, self._cdn)]
        for t in self._threads:
            t.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._hub.server_address[1]}"

    @property
    def cdn(self) -> str:
        return f"http://127.0.0.1:{self._cdn.server_address[1]}"

    def add_repo(self, repo_id: str, revision: str, files: dict[str, bytes]) -> None:
        for name, data in files.items():
            self.files[(repo_id, revision, name)] = data

    def reset(self) -> None:
        with self._lock:
            self.files.clear()
            self.drop_once.clear()
            self.hold.clear()
            self.requests.clear()

    def fetched(self, filename: str, method: str = "GET") -> list[SeenRequest]:
        """The requests that asked for the bytes (or metadata) of `filename`."""
        out = []
        for r in list(self.requests):
            if r.method != method:
                continue
            if r.server == "hub" and r.path.endswith("/" + filename):
                out.append(r)
            elif r.server == "cdn" and r.path.rsplit("/", 1)[-1].split("?")[0] in self._blob_names(filename):
                out.append(r)
        return out

    def _blob_names(self, filename: str) -> set[str]:
        return {hashlib.sha256(d).hexdigest() for (_, _, n), d in self.files.items() if n == filename}

    def _blob(self, sha: str) -> tuple[str, bytes] | None:
        for (_, _, name), data in self.files.items():
            if hashlib.sha256(data).hexdigest() == sha:
                return name, data
        return None

    def close(self) -> None:
        for s in (self._hub, self._cdn):
            s.shutdown()
            s.server_close()
        for t in self._threads:
            t.join(timeout=5)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address, handler, hub: FakeHub) -> None:
        super().__init__(address, handler)
        self.hub = hub


def _git_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_name = "hub"

    def log_message(self, format, *args) -> None:  # keep pytest output clean
        pass

    @property
    def hub(self) -> FakeHub:
        return self.server.hub  # type: ignore[attr-defined]

    def _record(self) -> None:
        self.hub.requests.append(SeenRequest(self.server_name, self.command, self.path, dict(self.headers)))

    def _empty(self, status: int, headers: dict[str, str]) -> None:
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _send_bytes(self, name: str, data: bytes, headers: dict[str, str]) -> None:
        """Send `data` honouring Range; HEAD sends headers only; maybe drop halfway once."""
        total = len(data)
        start, end, status = 0, total - 1, 200
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            first, _, last = rng[len("bytes="):].partition("-")
            start = int(first) if first else 0
            end = min(int(last), total - 1) if last else total - 1
            if start >= total:
                self._empty(416, {"Content-Range": f"bytes */{total}"})
                return
            status = 206
        body = data[start:end + 1]
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{total}")
        self.end_headers()
        if self.command == "HEAD":
            return
        with self.hub._lock:
            cut = self.hub.drop_once.pop(name, None)
        if cut is not None and cut < len(body):
            self.wfile.write(body[:cut])
            self.wfile.flush()
            self.close_connection = True  # the client sees the body end early
            return
        held = self.hub.hold.get(name)
        if held is not None and held[0] < len(body):
            self.wfile.write(body[:held[0]])
            self.wfile.flush()
            held[1].wait(120)  # a stalled connection: headers and some bytes, then silence
            body = body[held[0]:]
        self.wfile.write(body)


class _HubHandler(_Handler):
    server_name = "hub"

    def do_HEAD(self) -> None:
        self._resolve()

    def do_GET(self) -> None:
        self._resolve()

    def _resolve(self) -> None:
        self._record()
        # as on the Hub, the revision is one URL-encoded path segment ("refs%2Fpr%2F3" for a PR ref)
        path = urlparse(self.path).path
        repo_id, sep, rest = path.lstrip("/").partition("/resolve/")
        revision, _, filename = rest.partition("/")
        repo_id, revision, filename = unquote(repo_id), unquote(revision), unquote(filename)
        hub = self.hub
        repo_files = {k: v for k, v in hub.files.items() if k[0] == repo_id}
        if not sep or not repo_files:
            self._empty(404, {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"})
            return
        if not any(k[1] == revision for k in repo_files):
            self._empty(404, {"X-Error-Code": "RevisionNotFound", "X-Error-Message": "Invalid rev id"})
            return
        data = repo_files.get((repo_id, revision, filename))
        if data is None:
            self._empty(404, {"X-Error-Code": "EntryNotFound", "X-Error-Message": "Entry not found",
                              "X-Repo-Commit": revision})
            return
        if filename.endswith(LFS_SUFFIXES):
            sha = hashlib.sha256(data).hexdigest()
            self._empty(302, {"Location": f"{hub.cdn}/blobs/{sha}?signed=1", "X-Repo-Commit": revision,
                              "X-Linked-Etag": f'"{sha}"', "X-Linked-Size": str(len(data)),
                              "ETag": f'"{_git_sha1(data)}"'})
            return
        self._send_bytes(filename, data, {"ETag": f'"{_git_sha1(data)}"', "X-Repo-Commit": revision})


class _CdnHandler(_Handler):
    server_name = "cdn"

    def do_HEAD(self) -> None:
        self._blob()

    def do_GET(self) -> None:
        self._blob()

    def _blob(self) -> None:
        self._record()
        sha = urlparse(self.path).path.rsplit("/", 1)[-1]
        found = self.hub._blob(sha)
        if found is None:
            self._empty(404, {})
            return
        name, data = found
        self._send_bytes(name, data, {"ETag": f'"{sha}"'})
