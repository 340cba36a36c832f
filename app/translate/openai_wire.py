"""The wire of the OpenAI-compatible backend (openai_backend.py): one chat completion, streamed
or not, into a reply (content, thoughts counted as tokens, finish reason, usage and prompt-cache
hits, llama.cpp's timings too); the server's context size where it says it; a coroutine run on
the backend's private event loop with Cancel polled every POLL_S seconds and a limit for a whole
answer.

`Wire` is what the backend holds (composed, not inherited): made from the `openai` client, the
server's label (for messages) and its base URL, it owns the event loop; `Transport` is the
interface the backend uses, so a test or another transport can stand in for it."""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.errors import Cancelled
from app.translate import openai_errors as errors
from app.translate.base import CancelFn, TokensFn, TranslationError

log = logging.getLogger("app.translate.openai_backend")
POLL_S = 0.1


@dataclass
class _Reply:
    text: str = ""
    finish: str = ""
    model: str = ""
    chunks: int = 0
    cached: int = 0
    first_token_s: float = 0.0
    prompt: int = 0  # tokens, as the server reported them (0: it did not)
    completion: int = 0


@dataclass
class _Page:
    """What one page's requests gathered."""

    texts: dict[str, str] = field(default_factory=dict)
    untranslated: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    requests: int = 0
    prompt: int = 0
    completion: int = 0
    cached: int = 0
    first_token_s: float = 0.0
    tokens: int = 0
    error: TranslationError | None = None
    memory: dict | None = None  # the first "memory" object an answer of the page brought
    image_sent: bool = False
    raw: tuple[str, dict[str, str]] | None = None  # the first answer, word for word, and its texts


class Transport(Protocol):
    """What OpenAITranslator asks of its wire."""

    server: str  # the server's label, for messages

    async def complete(self, kwargs: dict, stream: bool, on_tokens: TokensFn | None, state: _Page) -> _Reply:
        """One chat completion (streamed when `stream`); raises errors.StreamEmpty when a
        streamed request brings no chunk."""
        ...

    def context_size(self, model: str, cancel: CancelFn | None) -> int | None:
        """The server's context size in tokens, where it says it; None when it does not."""
        ...

    def run(self, coro: Coroutine[Any, Any, Any], cancel: CancelFn | None, total: float | None = None) -> Any:
        """Run `coro`, polling `cancel`; `total` limits the whole run of it."""
        ...

    def models(self, cancel: CancelFn | None) -> list[str]:
        """The model ids the server offers (GET /models); raises the openai client's errors."""
        ...

    def sleep(self, seconds: float, cancel: CancelFn | None) -> None:
        """Wait, polling `cancel` (raises Cancelled)."""
        ...

    def close(self) -> None: ...


class Wire:
    """The transport of OpenAITranslator: `client` (an openai.AsyncOpenAI), `server` (the
    server's label) and `base_url`; it owns the private event loop the requests run on."""

    def __init__(self, client, server: str, base_url: str):
        self.client = client
        self.server = server
        self.base_url = base_url
        self.loop = asyncio.new_event_loop()

    async def complete(self, kwargs: dict, stream: bool, on_tokens: TokensFn | None, state: _Page) -> _Reply:
        client = self.client
        start = time.monotonic()
        if not stream:
            response = await client.chat.completions.create(**kwargs)
            reply = _Reply(model=response.model or "")
            if response.choices:
                choice = response.choices[0]
                reply.text = choice.message.content or ""
                reply.finish = choice.finish_reason or ""
            reply.first_token_s = time.monotonic() - start
            _usage(response, state, reply)
            return reply
        chunks = await client.chat.completions.create(**kwargs, stream=True, stream_options={"include_usage": True})
        reply = _Reply()
        parts: list[str] = []
        seen_chunk = False
        try:
            async for chunk in chunks:
                seen_chunk = True
                _chunk(chunk, reply, parts, state, on_tokens, start)
        finally:
            await chunks.close()
        if not seen_chunk:
            raise errors.StreamEmpty()
        reply.text = "".join(parts)
        return reply

    def context_size(self, model: str, cancel: CancelFn | None) -> int | None:
        root = self.base_url.rstrip("/")
        root = root[: -len("/v1")] if root.endswith("/v1") else root
        client = self.client

        async def probe():
            for how in ("props", "models", "ollama"):
                try:
                    if how == "props":
                        data = await client.get(f"{root}/props", cast_to=object)
                        n = (data.get("default_generation_settings") or {}).get("n_ctx") or data.get("n_ctx")
                    elif how == "models":
                        data = await client.get("/models", cast_to=object)
                        metas = [m.get("meta") or {} for m in data.get("data", []) if isinstance(m, dict)]
                        n = next((m.get("n_ctx") for m in metas if m.get("n_ctx")), None)
                    else:
                        data = await client.post(f"{root}/api/show", body={"model": model}, cast_to=object)
                        n = _ollama_ctx(data)
                except Exception:  # noqa: BLE001 - a server that does not say
                    continue
                if isinstance(n, int) and n > 0:
                    return n
            return None
        try:
            n_ctx = self.run(asyncio.wait_for(probe(), 10.0), cancel)
        except (asyncio.TimeoutError, Exception):  # noqa: BLE001 - no size known: the fixed budget
            return None
        if n_ctx:
            log.info("%s: context size %d tokens", self.server, n_ctx)
        return n_ctx

    def models(self, cancel: CancelFn | None) -> list[str]:
        client = self.client

        async def fetch():
            page = await client.models.list()
            return sorted(m.id for m in page.data)
        return self.run(fetch(), cancel)

    def sleep(self, seconds: float, cancel: CancelFn | None) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if cancel is not None and cancel():
                raise Cancelled("cancelled")
            time.sleep(min(POLL_S, max(0.0, end - time.monotonic())))

    def run(self, coro, cancel: CancelFn | None, total: float | None = None):
        """Run `coro` on the private loop, polling `cancel` every POLL_S seconds; `total` limits
        the whole run of it (a TranslationError names the limit)."""
        async def guarded():
            task = asyncio.ensure_future(coro)
            start = time.monotonic()
            while True:
                done, _pending = await asyncio.wait({task}, timeout=POLL_S)
                if done:
                    return task.result()
                over = total is not None and time.monotonic() - start > total
                if over or (cancel is not None and cancel()):
                    task.cancel()
                    try:
                        await task
                    except (asyncio.CancelledError, Exception):  # noqa: BLE001 - cancelled on purpose
                        pass
                    if over:
                        raise TranslationError(f"{self.server}: the answer was not complete after {total:g} s "
                                               "(the limit for a whole answer; raise it in Translation settings or "
                                               "with --total-timeout)")
                    raise Cancelled("cancelled")
        if cancel is not None and cancel():
            coro.close()
            raise Cancelled("cancelled")
        return self.loop.run_until_complete(guarded())

    def close(self) -> None:
        if self.loop.is_closed():
            return
        try:
            self.loop.run_until_complete(self.client.close())
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            # tasks still pending (a streamed answer's generator closed by the garbage collector is
            # closed by a task of this loop): run them out, or closing the loop destroys them
            # ("Task was destroyed but it is pending!")
            pending = asyncio.all_tasks(self.loop)
            if pending:
                self.loop.run_until_complete(asyncio.wait(pending, timeout=5.0))
        finally:
            self.loop.close()


def _chunk(chunk, reply: _Reply, parts: list[str], state: _Page, on_tokens, start: float) -> None:
    """One streamed chunk into the reply (content, thoughts counted as tokens, finish, usage)."""
    reply.model = getattr(chunk, "model", "") or reply.model
    for choice in chunk.choices or ():
        delta = choice.delta
        text = getattr(delta, "content", None) if delta is not None else None
        thought = _reasoning_of(delta)
        if text or thought:
            if not reply.first_token_s:
                reply.first_token_s = time.monotonic() - start
            reply.chunks += 1
            state.tokens += 1
            if on_tokens is not None:
                on_tokens(state.tokens)
        if text:
            parts.append(text)
        if choice.finish_reason:
            reply.finish = choice.finish_reason
    _usage(chunk, state, reply)


def _usage(obj, state: _Page, reply: _Reply) -> None:
    usage = getattr(obj, "usage", None)
    if usage is not None:
        state.prompt += usage.prompt_tokens or 0
        state.completion += usage.completion_tokens or 0
        reply.prompt = usage.prompt_tokens or reply.prompt
        reply.completion = usage.completion_tokens or reply.completion
        details = getattr(usage, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None) if details is not None else None
        if cached:
            state.cached += int(cached)
            reply.cached += int(cached)
            return
    timings = (getattr(obj, "model_extra", None) or {}).get("timings")
    if isinstance(timings, dict) and isinstance(timings.get("cache_n"), int):
        state.cached += timings["cache_n"]
        reply.cached += timings["cache_n"]
        if usage is None and isinstance(timings.get("prompt_n"), int):
            state.prompt += timings["prompt_n"] + timings["cache_n"]


def _reasoning_of(delta) -> str:
    if delta is None:
        return ""
    extra = getattr(delta, "model_extra", None) or {}
    return str(extra.get("reasoning_content") or extra.get("reasoning") or "")


def _ollama_ctx(data) -> int | None:
    if not isinstance(data, dict):
        return None
    params = str(data.get("parameters") or "")
    for line in params.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "num_ctx" and parts[1].isdigit():
            return int(parts[1])
    info = data.get("model_info") or {}
    return next((v for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int)), None)
