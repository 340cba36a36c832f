"""The OpenAI-compatible chat-completions backend (OpenAI, DeepSeek, OpenRouter, Gemini and
Anthropic's compatible endpoints, Ollama, LM Studio, llama.cpp, vLLM), through the official
`openai` client: its timeout, its retries with backoff (honouring Retry-After on 429 / 5xx).

One request per page (contract.py). The answer is read by id; ids still missing after it get
one more request that asks for exactly those; what is still missing is reported, never guessed.
Requests run on the client's asyncio transport in a private event loop, so that `cancel()` is
checked every 0.1 s while a request (or a retry's backoff) is in flight and aborts it at once.
The key goes only into the client (the Authorization header); error messages name the server
(without any user:password in its URL), never the key.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from app.errors import Cancelled
from app.translate import contract
from app.translate.base import (
    CancelFn,
    ContextPage,
    GlossaryEntry,
    PageResult,
    Segment,
    TranslationError,
    TranslatorSettings,
    redact,
    server_label,
)
from app.translate.presets import DEFAULT_URL, preset_for_url

log = logging.getLogger(__name__)
POLL_S = 0.1
NO_KEY = "no-key"  # local servers want a non-empty bearer token; this one means none


class OpenAITranslator:
    """settings: TranslatorSettings (base_url, model, languages, timeout, max_retries,
    structured); api_key: None or "" for servers that need none."""

    def __init__(self, settings: TranslatorSettings, api_key: str | None = None):
        import openai

        if not settings.model:
            raise TranslationError("No model chosen for the OpenAI-compatible server: set one in Translation "
                                   "settings (Test connection lists the server's models) or pass --model.",
                                   fatal=True)
        self.settings = settings
        self.base_url = settings.base_url or DEFAULT_URL
        self.server = server_label(self.base_url)
        self.name = f"{settings.model} @ {self.server}"
        self._key = api_key or NO_KEY
        structured = settings.structured
        if structured == "auto":
            structured = preset_for_url(self.base_url).structured
        self._formats = {"schema": ["schema", "json", "off"], "json": ["json", "off"], "off": ["off"]}.get(
            structured, ["schema", "json", "off"])
        self._loop = asyncio.new_event_loop()
        self._client = openai.AsyncOpenAI(api_key=self._key, base_url=self.base_url, timeout=settings.timeout,
                                          max_retries=settings.max_retries)

    # -- the interface ---------------------------------------------------------------------------
    def translate_page(self, segments: Sequence[Segment], context: Sequence[ContextPage] = (),
                       glossary: Sequence[GlossaryEntry] = (), cancel: CancelFn | None = None,
                       page_name: str = "") -> PageResult:
        s = self.settings
        if not segments:
            return PageResult({})
        ids = contract.request_ids(len(segments))
        by_rid = dict(zip(ids, segments, strict=True))
        context = contract.trim_context(context, s.context_tokens)
        texts: dict[str, str] = {}
        notes: list[str] = []
        usage = [0, 0, 0]  # requests, prompt tokens, completion tokens
        todo = list(ids)
        for attempt in range(2):
            note = ("" if attempt == 0 else
                    "Your previous answer lacked these segment ids. Translate exactly these segments.")
            messages = contract.build_messages([(rid, by_rid[rid].text) for rid in todo], context, glossary,
                                               s.source_lang, s.target_lang, page_name, note)
            reply = self._request(messages, todo, cancel, usage)
            answer = contract.read_answer(reply, todo)
            if not answer.ok:
                notes.append(f"answer {attempt + 1} was not the JSON asked for: {_snippet(reply)}")
            if answer.unknown:
                notes.append(f"ignored unknown ids {', '.join(answer.unknown[:5])}")
            texts.update(answer.texts)
            todo = [rid for rid in todo if rid not in texts]
            if not todo:
                break
            if attempt == 0:
                notes.append(f"{len(todo)} id(s) missing from the answer; asked again for {', '.join(todo[:8])}")
        if not texts and todo:
            raise TranslationError(f"{self.server}: the model's answer for {page_name or 'the page'} was not the "
                                   f"JSON asked for, twice ({notes[-1] if notes else 'empty answer'}).")
        missing = tuple(by_rid[rid].id for rid in todo)
        return PageResult({by_rid[rid].id: t for rid, t in texts.items()}, missing, usage[0], usage[1], usage[2],
                          tuple(notes))

    def list_models(self, cancel: CancelFn | None = None) -> list[str]:
        """The model ids the server offers (GET /models): what "Test connection" shows."""
        import openai

        async def fetch():
            page = await self._client.models.list()
            return sorted(m.id for m in page.data)
        try:
            return self._run(fetch(), cancel)
        except openai.OpenAIError as exc:
            raise self._error(exc) from None

    def close(self) -> None:
        if self._loop.is_closed():
            return
        try:
            self._loop.run_until_complete(self._client.close())
        finally:
            self._loop.close()

    # -- requests --------------------------------------------------------------------------------
    def _request(self, messages: list[dict], ids: list[str], cancel: CancelFn | None, usage: list[int]) -> str:
        """One chat completion; returns the reply text. Falls back to a plainer response_format
        when the server refuses the one asked for (remembered for the next pages)."""
        import openai

        while True:
            fmt = self._formats[0]
            kwargs: dict = {"model": self.settings.model, "messages": messages,
                            "temperature": self.settings.temperature}
            if fmt == "schema":
                kwargs["response_format"] = contract.response_schema(ids)
            elif fmt == "json":
                kwargs["response_format"] = {"type": "json_object"}
            usage[0] += 1
            try:
                response = self._run(self._client.chat.completions.create(**kwargs), cancel)
            except openai.BadRequestError as exc:
                if len(self._formats) > 1 and _about_format(exc):
                    log.info("%s refused response_format=%s; trying %s", self.server, fmt, self._formats[1])
                    self._formats.pop(0)
                    continue
                raise self._error(exc) from None
            except openai.OpenAIError as exc:
                raise self._error(exc) from None
            if response.usage is not None:
                usage[1] += response.usage.prompt_tokens or 0
                usage[2] += response.usage.completion_tokens or 0
            if not response.choices:
                return ""
            return response.choices[0].message.content or ""

    def _run(self, coro, cancel: CancelFn | None):
        """Run `coro` on the private loop, polling `cancel` every POLL_S seconds."""
        async def guarded():
            task = asyncio.ensure_future(coro)
            while True:
                done, _pending = await asyncio.wait({task}, timeout=POLL_S)
                if done:
                    return task.result()
                if cancel is not None and cancel():
                    task.cancel()
                    try:
                        await task
                    except (asyncio.CancelledError, Exception):  # noqa: BLE001 - cancelled on purpose
                        pass
                    raise Cancelled("cancelled")
        if cancel is not None and cancel():
            coro.close()
            raise Cancelled("cancelled")
        return self._loop.run_until_complete(guarded())

    def _error(self, exc) -> TranslationError:
        """A message the user can act on, naming the server, never the key."""
        import openai

        s, server = self.settings, self.server
        if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
            return TranslationError(f"{server} refused the API key (HTTP {exc.status_code}). Check the key in "
                                    "Translation settings or the environment variable.", fatal=True)
        if isinstance(exc, openai.NotFoundError):
            return TranslationError(f"{server}: model {s.model!r} or the chat endpoint was not found (HTTP 404). "
                                    "Check the base URL and the model (Test connection lists the models).",
                                    fatal=True)
        if isinstance(exc, openai.RateLimitError):
            return TranslationError(f"{server}: rate limit (HTTP 429) still reached after {s.max_retries} "
                                    "retries; this page was not translated. Run again later to resume.")
        if isinstance(exc, openai.APITimeoutError):
            return TranslationError(f"{server}: no answer within {s.timeout:g} s (after {s.max_retries} retries); "
                                    "this page was not translated.")
        if isinstance(exc, openai.APIConnectionError):
            return TranslationError(f"{server}: cannot connect ({redact(str(exc.__cause__ or exc), self._key)}). "
                                    "Is the server running, and is the base URL right?", fatal=True)
        if isinstance(exc, openai.APIStatusError):
            return TranslationError(f"{server}: HTTP {exc.status_code}: {redact(_message(exc), self._key)}")
        return TranslationError(f"{server}: {type(exc).__name__}: {redact(str(exc), self._key)}")


def _message(exc) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
        if isinstance(inner, str):
            return inner[:300]
    return str(getattr(exc, "message", exc))[:300]


def _about_format(exc) -> bool:
    text = _message(exc).lower()
    return any(word in text for word in ("response_format", "json_schema", "json schema", "response format",
                                         "structured", "json_object"))


def _snippet(reply: str) -> str:
    text = " ".join((reply or "").split())
    return repr(text[:80] + ("…" if len(text) > 80 else "")) if text else "an empty answer"
