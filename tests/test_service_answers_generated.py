"""Generated answers (Hypothesis) from the services the app talks to: a DeepL server answering
anything (status, headers, body) makes the DeepL backend return its texts or raise
TranslationError with the server named, never another exception; the Hub's file metadata
(ETag, sizes) is likewise read or refused. The servers are real loopback HTTP servers."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.translate import Segment, TranslationError, TranslatorSettings, make_translator

SETTINGS = settings(deadline=None, derandomize=True, max_examples=30, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
SEGMENTS = [Segment("b1", "タナカさん"), Segment("b2", "ありがとう")]


class Scripted(ThreadingHTTPServer):
    """Answers every request with the (status, content type, body) it is given."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answer = (200, "application/json", b"{}")
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self):
        self.shutdown()
        self.server_close()
        self.thread.join(10)


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _any(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        status, kind, body = self.server.answer
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = _any


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                        max_size=3), max_leaves=12)
translations = st.lists(st.fixed_dictionaries({"text": st.text(max_size=10) | st.integers() | st.none()},
                                              optional={"detected_source_language": st.text(max_size=3)}),
                        max_size=4).map(lambda t: json.dumps({"translations": t}).encode())
bodies = st.one_of(st.binary(max_size=60), json_values.map(lambda v: json.dumps(v).encode()), translations)


@SETTINGS
@given(st.sampled_from((200, 200, 200, 400, 403, 404, 456)), st.sampled_from(("application/json", "text/html")),
       bodies)
def test_deepl_answers_of_any_shape_are_read_or_reported(status, kind, body):
    server = Scripted()
    try:
        server.answer = (status, kind, body)
        tr = make_translator(TranslatorSettings(provider="deepl", base_url=f"http://127.0.0.1:{server.server_port}",
                                                source_lang="ja", target_lang="en", max_retries=0), "k:fx")
        try:
            result = tr.translate_page(SEGMENTS)
        except TranslationError as exc:
            assert "127.0.0.1" in str(exc) or "DeepL" in str(exc)
        else:
            assert set(result.texts) <= {"b1", "b2"} and all(isinstance(t, str) for t in result.texts.values())
        finally:
            tr.close()
    finally:
        server.close()


class HubScripted(ThreadingHTTPServer):
    """A Hub answering HEAD and GET of one file with generated headers and body."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _HubHandler)
        self.headers_out: dict = {}
        self.status = 200
        self.body = b""
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self):
        self.shutdown()
        self.server_close()
        self.thread.join(10)


class _HubHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _head(self, with_body: bool):
        srv = self.server
        self.send_response(srv.status)
        for k, v in srv.headers_out.items():
            self.send_header(k, v)
        body = srv.body if with_body else b""
        self.send_header("Content-Length", str(len(srv.body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if with_body:
            self.wfile.write(body)
        self.close_connection = True

    def do_HEAD(self):
        self._head(False)

    def do_GET(self):
        self._head(True)


hex64 = st.text("0123456789abcdef", min_size=64, max_size=64)
hub_headers = st.fixed_dictionaries({}, optional={
    "ETag": st.one_of(hex64.map(lambda h: f'"{h}"'), st.text("abcdef0123456789\"W/", max_size=20)),
    "X-Repo-Commit": st.text("0123456789abcdef", max_size=40),
    "X-Linked-Size": st.one_of(st.integers(-5, 10**12).map(str), st.text("x1 ", max_size=4)),
    "X-Linked-Etag": hex64.map(lambda h: f'"{h}"'),
})


@SETTINGS
@given(st.sampled_from((200, 200, 200, 404, 401, 500)), hub_headers, st.binary(max_size=64), st.booleans())
def test_hub_answers_of_any_shape_give_the_file_or_a_model_error(tmp_path_factory, status, headers, body, pinned):
    import hashlib

    from app.errors import UserError
    from app.models.fetch import fetch_file

    server = HubScripted()
    dest = tmp_path_factory.mktemp("hub") / "model.safetensors"
    try:
        server.status, server.headers_out, server.body = status, headers, body
        want = hashlib.sha256(b"the real file").hexdigest() if pinned else None
        try:
            result = fetch_file(repo_id="someone/model", revision="0" * 40, filename="model.safetensors", dest=dest,
                                endpoint=f"http://127.0.0.1:{server.server_port}", expected_sha256=want,
                                expected_size=None)
        except UserError as exc:  # ModelError is one: it names the file
            assert "model.safetensors" in str(exc)
            assert not dest.exists()  # nothing unverified is left under the final name
        else:
            assert dest.read_bytes() == body and not pinned  # only a file that matches a known hash
            assert hashlib.sha256(body).hexdigest() in headers.get("ETag", "") + headers.get("X-Linked-Etag", "")
            assert result is not None
    finally:
        server.close()
