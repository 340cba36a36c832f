"""Loopback stand-ins for the translation servers, for the tests and benchmarks.

`FakeLLM`: an OpenAI-compatible server (POST /v1/chat/completions, GET /v1/models) on
127.0.0.1 (random port). It reads the last user message as the contract's JSON object and
answers {"translations": [...]} by id, translating with `fake_translate` (kana to romaji, the
request's glossary applied first), so tests can check which translation went to which block.
Each request takes the next behaviour from `script` (then `default`):
  ok, reverse (ids in reverse order), fence (prose + ```json fences), drop (the last id left
  out), unknown (the last id replaced by a made-up one), garbage (prose, no JSON),
  truncated (JSON cut in the middle), rate_limit (429 + Retry-After: `retry_after`),
  slow (answers after `delay` seconds), error500, error503 (busy), refuse_schema (400 when a JSON schema
  response_format is asked for, then ok); and what real servers do: think (a <think> block
  with a draft answer before the real one), reasoning (the thoughts in `reasoning_content`),
  newline (a raw newline inside a JSON string), refuse422 (422 on a JSON schema), refuse_temperature
  (400 "Unsupported parameter: 'temperature'" while one is sent), length (the answer cut after
  its first item with finish_reason "length"), error500msg (500 with the server's message),
  context_exceeded (400 "exceeds the available context size" while the request holds more than
  one page or more than `max_segments` segments), echo (every segment copied back),
  echo_request (the request's JSON repeated, no answer), nostream (a plain response even when
  streaming is asked for), oracle (each segment answered with `oracle[its text]`), context (a
  server with a context of `n_ctx` tokens, as llama.cpp: a prompt over it is refused, and the
  answer is cut where prompt + answer reach it, finish_reason "length"; tokens as
  `estimate_tokens` counts them).
A request with "stream": true gets server-sent events, one chunk per `chunk_chars` characters
of the answer, with usage in a last chunk (llama.cpp and OpenAI do the same).
It checks `Authorization: Bearer <key>` (401 otherwise, echoing the key's first characters
as OpenAI does) and records every request (`seen`: path, headers, JSON body).

`FakeDeepL`: POST /v2/translate, POST /v2/glossaries, DELETE /v2/glossaries/ID with
`Authorization: DeepL-Auth-Key <key>`; the same `fake_translate`, the glossary applied.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_KANA = {
    "あ": "a", "い": "i", "う": "u", "え": "e", "お": "o", "か": "ka", "き": "ki", "く": "ku", "け": "ke",
    "こ": "ko", "さ": "sa", "し": "shi", "す": "su", "せ": "se", "そ": "so", "た": "ta", "ち": "chi",
    "つ": "tsu", "て": "te", "と": "to", "な": "na", "に": "ni", "ぬ": "nu", "ね": "ne", "の": "no",
    "は": "ha", "ひ": "hi", "ふ": "fu", "へ": "he", "ほ": "ho", "ま": "ma", "み": "mi", "む": "mu",
    "め": "me", "も": "mo", "や": "ya", "ゆ": "yu", "よ": "yo", "ら": "ra", "り": "ri", "る": "ru",
    "れ": "re", "ろ": "ro", "わ": "wa", "を": "wo", "ん": "n", "が": "ga", "ぎ": "gi", "ぐ": "gu",
    "げ": "ge", "ご": "go", "ざ": "za", "じ": "ji", "ず": "zu", "ぜ": "ze", "ぞ": "zo", "だ": "da",
    "で": "de", "ど": "do", "ば": "ba", "び": "bi", "ぶ": "bu", "べ": "be", "ぼ": "bo", "ぱ": "pa",
    "ぴ": "pi", "ぷ": "pu", "ぺ": "pe", "ぽ": "po", "っ": "'", "ゃ": "ya", "ゅ": "yu", "ょ": "yo",
    "ぢ": "ji", "づ": "zu", "ぁ": "a", "ぃ": "i", "ぅ": "u", "ぇ": "e", "ぉ": "o", "ゎ": "wa", "ゐ": "wi",
    "ゑ": "we", "ゔ": "vu", "ゝ": "", "ゞ": "", "ー": "-", "。": ".", "、": ",", "！": "!", "？": "?", "…": "...", "「": '"', "」": '"',
}


def fake_translate(text: str, glossary: dict[str, str] | None = None) -> str:
    """Deterministic "translation": glossary terms replaced, kana romanized (katakana too)."""
    for source, target in sorted((glossary or {}).items(), key=lambda kv: -len(kv[0])):
        text = text.replace(source, f" {target} ")
    out = []
    for ch in text:
        if "\u30a1" <= ch <= "\u30f6":
            ch = chr(ord(ch) - 0x60)
        if "\u4e00" <= ch <= "\u9fff":  # a kanji: a made-up Latin syllable, the same each time
            ch = "kmstnhry"[ord(ch) % 8] + "aiueo"[ord(ch) // 8 % 5]
        out.append(_KANA.get(ch, ch))
    words = " ".join("".join(out).split())
    return words[:1].upper() + words[1:]


def estimate_tokens(text: str) -> int:
    wide = sum(1 for c in text if ord(c) >= 0x2E80)
    return wide + -(-(len(text) - wide) // 4)


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict | None
    behaviour: str = ""
    at: float = field(default_factory=time.monotonic)  # when the request arrived


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner, handler):
        super().__init__(("127.0.0.1", 0), handler)
        self.owner = owner


class _Base:
    def __init__(self, handler):
        self.seen: list[Seen] = []
        self.holding = 0  # "slow" requests whose answer the server is holding now
        self.released = 0  # "slow" requests whose hold ended with an answer (not dropped by close)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server = _Server(self, handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-server", daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def hold(self) -> bool:
        """Hold a "slow" answer for `delay` seconds; True when `close` ended the hold (no answer)."""
        with self._lock:
            self.holding += 1
        stopped = self._stop.wait(self.delay)
        with self._lock:
            self.holding -= 1
            self.released += not stopped
        return stopped

    def close(self) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # small header + body writes: no 40 ms delayed-ACK stall

    def log_message(self, *args):  # quiet
        pass

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return None

    def _send(self, status: int, payload, headers=None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload, ensure_ascii=False).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout, cancel)


@dataclass
class FakeLLM(_Base):
    key: str = "sk-test-0123456789abcdef-SECRET"
    models: tuple[str, ...] = ("test-model", "other-model")
    default: str = "ok"
    script: list[str] = field(default_factory=list)
    retry_after: str = "0.2"
    delay: float = 5.0
    chunk_chars: int = 8
    chunk_delay: float = 0.0  # seconds between streamed chunks
    max_segments: int = 10**6  # context_exceeded: the most segments a request may hold
    n_ctx: int | None = None  # served as llama.cpp's GET /props when set
    oracle: dict = field(default_factory=dict)  # behaviour "oracle": source text -> the answer to give
    answer_model: str = ""  # the model the answers name ("" = the one asked for)
    serve_props: bool = True  # False: /props does not tell n_ctx (a server that does not report its context)
    report_finish: bool = True  # False: finish_reason is null (servers that do not say why an answer ended)

    def __post_init__(self):
        _Base.__init__(self, _LLMHandler)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def chats(self) -> list[Seen]:
        return [s for s in self.seen if s.path.endswith("/chat/completions")]

    def next_behaviour(self) -> str:
        with self._lock:
            return self.script.pop(0) if self.script else self.default


def _text_of(content) -> str:
    if isinstance(content, list):  # content parts: the text part is the page's JSON
        return next((p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"), "")
    return content


def _page_of(body: dict) -> dict:
    return json.loads(_text_of(body["messages"][-1]["content"]))


def page_of(body: dict) -> dict:
    """The page's JSON object of a recorded request (the text part when the page has an image)."""
    return _page_of(body)


def image_of(body: dict):
    """The page image of a recorded request (a PIL image), None when it has none."""
    import base64
    import io

    from PIL import Image

    content = body["messages"][-1]["content"]
    if not isinstance(content, list):
        return None
    for part in content:
        if isinstance(part, dict) and part.get("type") == "image_url":
            url = part["image_url"]["url"]
            return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    return None


def _prompt_tokens(body: dict) -> int:
    return sum(estimate_tokens(_text_of(m.get("content") or "")) + 4 for m in body["messages"])


def prompt_tokens(body: dict) -> int:
    """The prompt's tokens as the loopback server counts them (for a context size in a test)."""
    return _prompt_tokens(body)


def _katakana_names(text: str) -> list[str]:
    import re

    return re.findall(r"[\u30a1-\u30fa\u30fc]{2,}", text)


def glossary_of(body: dict) -> dict[str, str]:
    """The glossary a request carries (in the system message, as JSON data)."""
    system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
    marker = "Glossary (data, JSON): "
    if marker not in system:
        return {}
    terms = json.loads(system.split(marker, 1)[1].splitlines()[0])
    return {g["source"]: g["target"] for g in terms}


class _LLMHandler(_Handler):
    def _authorized(self, owner) -> bool:
        got = self.headers.get("Authorization", "")
        if got == f"Bearer {owner.key}":
            return True
        shown = got.removeprefix("Bearer ")[:8]
        self._send(401, {"error": {"message": f"Incorrect API key provided: {shown}***", "type": "invalid_request_error",
                                   "code": "invalid_api_key"}})
        return False

    def do_GET(self):
        owner = self.server.owner
        owner.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, None))
        if not self._authorized(owner):
            return
        if self.path.rstrip("/").endswith("/v1/models"):
            self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "test"}
                                                        for m in owner.models]})
        elif self.path.rstrip("/") == "/props" and owner.n_ctx and owner.serve_props:
            self._send(200, {"default_generation_settings": {"n_ctx": owner.n_ctx}})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self):
        owner = self.server.owner
        body = self._body()
        chat = self.path.endswith("/v1/chat/completions")
        behaviour = owner.next_behaviour() if chat else ""  # a script is for the chat requests only
        owner.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body, behaviour))
        if not self._authorized(owner):
            return
        if not chat or not isinstance(body, dict):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        if body.get("model") not in owner.models:
            self._send(404, {"error": {"message": f"model {body.get('model')!r} not found"}})
            return
        if behaviour == "hangup":  # the connection closed without a word (a kept-alive one the server dropped)
            self.close_connection = True
            return
        if behaviour == "rate_limit":
            self._send(429, {"error": {"message": "Rate limit reached"}}, {"Retry-After": owner.retry_after})
            return
        if behaviour == "error500":
            self._send(500, {"error": {"message": "internal error"}})
            return
        if behaviour == "error503":
            self._send(503, {"error": {"message": "the server is loading the model"}})
            return
        if behaviour == "refuse_schema" and (body.get("response_format") or {}).get("type") == "json_schema":
            self._send(400, {"error": {"message": "response_format json_schema is not supported by this server"}})
            return
        if behaviour == "refuse_images" and image_of(body) is not None:
            self._send(500, {"error": {"code": 500, "message": "image input is not supported - hint: if this is "
                                                               "unexpected, you may need to provide the mmproj",
                                       "type": "server_error"}})
            return
        if behaviour == "refuse422" and (body.get("response_format") or {}).get("type") == "json_schema":
            self._send(422, {"detail": [{"loc": ["body", "response_format"], "msg": "unsupported value"}]})
            return
        if behaviour == "refuse_temperature" and "temperature" in body:
            self._send(400, {"error": {"message": "Unsupported parameter: 'temperature' is not supported with "
                                                  "this model.", "type": "invalid_request_error"}})
            return
        if behaviour == "error500msg":
            self._send(500, {"error": {"code": 500, "message": "Context size has been exceeded.",
                                       "type": "server_error"}})
            return
        if behaviour == "error500disk":
            self._send(500, {"error": {"code": 500, "message": "model file could not be mapped: out of memory",
                                       "type": "server_error"}})
            return
        if behaviour == "context_exceeded":
            pages = sum(1 for m in body["messages"] if m["role"] == "user")
            if pages > 1 or len(_page_of(body)["segments"]) > owner.max_segments:
                self._send(400, {"error": {"code": 400, "message": "the request exceeds the available context size, "
                                                                   "try increasing it", "type": "exceed_context_size_error"}})
                return
        if behaviour == "context" and _prompt_tokens(body) > (owner.n_ctx or 0):
            self._send(400, {"error": {"code": 400, "message": f"request ({_prompt_tokens(body)} tokens) exceeds the "
                                       f"available context size ({owner.n_ctx} tokens), try increasing it",
                                       "type": "exceed_context_size_error"}})
            return
        if behaviour == "slow" and owner.hold():
            self.close_connection = True  # stopped: drop the request without an answer
            return
        completion = self._completion(body, behaviour)
        if body.get("stream") and behaviour != "nostream":
            self._stream(completion, owner)
        else:
            self._send(200, completion)

    @staticmethod
    def _wants_memory(body: dict) -> bool:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
        return "memory" in (schema.get("properties") or {}) or '"memory"' in body["messages"][0].get("content", "")

    def _stream(self, completion: dict, owner) -> None:
        """The completion as server-sent events: content chunks, the finish, then usage."""
        message = completion["choices"][0]["message"]
        content, thoughts = message.get("content") or "", message.get("reasoning_content") or ""
        base = {"id": completion["id"], "object": "chat.completion.chunk", "created": 0, "model": completion["model"]}

        def event(delta=None, finish=None, usage=None) -> bytes:
            chunk = dict(base, choices=[] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}])
            if usage is not None:
                chunk["usage"] = usage
            return f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            self.wfile.write(event({"role": "assistant", "content": ""}))
            n = owner.chunk_chars
            for i in range(0, len(thoughts), n):
                self.wfile.write(event({"reasoning_content": thoughts[i:i + n]}))
            for i in range(0, len(content), n):
                if owner.chunk_delay and owner._stop.wait(owner.chunk_delay):
                    return
                self.wfile.write(event({"content": content[i:i + n]}))
                self.wfile.flush()
            self.wfile.write(event({}, completion["choices"][0]["finish_reason"]))
            self.wfile.write(event(usage=completion["usage"]))
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _completion(self, body: dict, behaviour: str) -> dict:
        page = _page_of(body)
        terms = glossary_of(body) or {g["source"]: g["target"] for g in page.get("glossary", [])}
        items = [{"id": s["id"], "text": fake_translate(s["text"], terms)} for s in page["segments"]]
        finish = "stop"
        thoughts = ""
        if behaviour == "reverse":
            items.reverse()
        if behaviour in ("drop", "unknown") and items:
            last = items.pop()
            if behaviour == "unknown":
                items.append({"id": last["id"] + "x", "text": last["text"]})
        if behaviour == "echo":
            items = [{"id": s["id"], "text": s["text"]} for s in page["segments"]]
        if behaviour == "the":  # one word for every line, whatever it says (what Gemma 3 270M answered)
            items = [{"id": s["id"], "text": "The"} for s in page["segments"]]
        if behaviour == "oracle":
            items = [{"id": s["id"], "text": self.server.owner.oracle.get(s["text"], s["text"])}
                     for s in page["segments"]]
        content = json.dumps({"translations": items}, ensure_ascii=False)
        if behaviour == "fence":
            content = f"Sure! Here is the translation:\n```json\n{content}\n```\nLet me know if you need more."
        elif behaviour == "garbage":
            content = "I'm sorry, but I can't help with translating this page."
        elif behaviour == "truncated":
            content = content[: int(len(content) * 0.6)]
        elif behaviour == "think":
            draft = json.dumps({"translations": [{"id": s["id"], "text": "DRAFT"} for s in page["segments"]]})
            content = f"<think>The user wants a translation. A first try: {draft} Hmm, better:</think>\n{content}"
        elif behaviour == "reasoning":
            thoughts = "Let me think. " + json.dumps({"translations": [{"id": s["id"], "text": "DRAFT"}
                                                                          for s in page["segments"]]})
        elif behaviour == "newline":
            content = content.replace(" ", "\n", 1) if items else content
            content = content.replace('"text": "', '"text": "line one\n', 1)
        elif behaviour == "echo_request":
            content = _text_of(body["messages"][-1]["content"])
        elif self._wants_memory(body) and behaviour != "length":
            names = sorted({n for seg in page["segments"] for n in _katakana_names(seg["text"])})
            memory = {"characters": [{"source": n, "target": fake_translate(n), "notes": ""} for n in names],
                      "terms": [], "summary": f"On {page.get('page', 'this page')}: {len(items)} lines."}
            content = json.dumps({"translations": items, "memory": memory}, ensure_ascii=False)
        elif behaviour == "length" and items:
            content = json.dumps({"translations": items}, ensure_ascii=False)
            first_end = content.index("}", content.index('"text"')) + 1
            content = content[:first_end] + ', {"id": "' + items[-1]["id"]
            finish = "length"
        prompt = _prompt_tokens(body)
        if behaviour == "context":  # the answer ends where the context (or max_tokens) does
            room = min(self.server.owner.n_ctx - prompt, body.get("max_tokens") or body.get("max_completion_tokens")
                       or 10**9)
            if estimate_tokens(content) > room:
                cut = 0
                while cut < len(content) and estimate_tokens(content[:cut + 1]) <= room:
                    cut += 1
                content, finish = content[:cut], "length"
        message = {"role": "assistant", "content": content}
        if thoughts:
            message["reasoning_content"] = thoughts
        return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0,
                "model": self.server.owner.answer_model or body["model"],
                "choices": [{"index": 0, "finish_reason": finish if self.server.owner.report_finish else None,
                             "message": message}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": estimate_tokens(content),
                          "total_tokens": prompt + estimate_tokens(content)}}


@dataclass
class FakeDeepL(_Base):
    key: str = "deepl-test-key-0123456789:fx"
    default: str = "ok"
    script: list[str] = field(default_factory=list)
    glossaries: dict[str, dict] = field(default_factory=dict)
    delay: float = 5.0

    def __post_init__(self):
        _Base.__init__(self, _DeepLHandler)

    @property
    def server_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def next_behaviour(self) -> str:
        with self._lock:
            return self.script.pop(0) if self.script else self.default


class _DeepLHandler(_Handler):
    def _authorized(self, owner) -> bool:
        if self.headers.get("Authorization") == f"DeepL-Auth-Key {owner.key}":
            return True
        self._send(403, {"message": "Wrong endpoint or invalid auth key"})
        return False

    def do_POST(self):
        owner = self.server.owner
        body = self._body() or {}
        behaviour = owner.next_behaviour()
        owner.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body, behaviour))
        if not self._authorized(owner):
            return
        if self.path.rstrip("/") == "/v2/glossaries":
            gid = f"g{len(owner.glossaries) + 1}"
            entries = dict(line.split("\t", 1) for line in body.get("entries", "").splitlines() if "\t" in line)
            owner.glossaries[gid] = entries
            self._send(201, {"glossary_id": gid, "name": body.get("name"), "ready": True,
                             "source_lang": body.get("source_lang"), "target_lang": body.get("target_lang"),
                             "creation_time": "2026-01-01T00:00:00.000Z", "entry_count": len(entries)})
            return
        if self.path.rstrip("/") != "/v2/translate":
            self._send(404, {"message": "not found"})
            return
        if behaviour == "rate_limit":
            self._send(429, {"message": "Too many requests"})
            return
        if behaviour == "slow" and owner.hold():
            self.close_connection = True
            return
        terms = owner.glossaries.get(body.get("glossary_id") or "", {})
        texts = body.get("text") or []
        if behaviour == "short":
            texts = texts[:-1]
        self._send(200, {"translations": [{"detected_source_language": "JA", "text": fake_translate(t, terms),
                                           "billed_characters": len(t)} for t in texts]})

    def do_DELETE(self):
        owner = self.server.owner
        owner.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, None))
        if not self._authorized(owner):
            return
        gid = self.path.rstrip("/").rsplit("/", 1)[-1]
        if owner.glossaries.pop(gid, None) is None:
            self._send(404, {"message": "Glossary not found"})
            return
        try:
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()
        except (BrokenPipeError, ConnectionResetError):
            pass


def ids_in_order(seen: Seen) -> list[str]:
    """Segment ids of a recorded chat request's page message."""
    return [s["id"] for s in _page_of(seen.body)["segments"]]


