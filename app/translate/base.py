"""The translation stage's plain data and its one interface (no Qt, no app.core).

    Translator.translate_page(segments, context, glossary, cancel) -> PageResult

`segments` are the page's blocks in reading order (id + source text); `context` the previous
pages' (source, translation) pairs, oldest first; `glossary` the entries that occur on the page
or in its context. A result maps block ids to translations; ids the backend did not return are
listed in `missing` (never guessed). A page that fails as a whole raises `TranslationError`;
`cancel()` returning True raises `app.errors.Cancelled` within about a second, mid-request too.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlsplit, urlunsplit

from app.errors import UserError

CancelFn = Callable[[], bool]
TokensFn = Callable[[int], None]  # tokens of the current page's answer received so far (streaming)
PROVIDERS = ("openai", "deepl", "offline")


@dataclass(frozen=True)
class Segment:
    """One block to translate: its id (unique on the page) and source text."""

    id: str
    text: str
    box: tuple[float, float, float, float] | None = None  # where it is on the page (for the page image)


@dataclass(frozen=True)
class ContextPage:
    """A page before the current one: its name and (source, translation) pairs in reading order."""

    name: str
    pairs: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class GlossaryEntry:
    """`source` is always translated as `target`; `note` says why or how (optional)."""

    source: str
    target: str
    note: str = ""


@dataclass(frozen=True)
class PageResult:
    """texts: block id -> translation (only ids of the page); missing: ids with no translation;
    requests: HTTP requests (or model batches) spent; tokens as the server reported them (0 when
    it did not); notes: what went wrong but did not stop the page (a retry, a dropped id)."""

    texts: Mapping[str, str]
    missing: tuple[str, ...] = ()
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    notes: tuple[str, ...] = ()
    # answers that are not translations (the source copied back, still in the source's script):
    # block id -> the text; never in `texts`, and their ids are in `missing` too
    untranslated: Mapping[str, str] = field(default_factory=dict)
    # a request of the page failed after others succeeded: what was received is kept in
    # `texts`, the rest is in `missing`, and `error` says why (`fatal`: the run should stop)
    error: str = ""
    fatal: bool = False
    translator: str = ""  # the model the server says answered ("" = the backend's name)
    cached_tokens: int = 0  # prompt tokens the server served from its cache (when it says)
    first_token_s: float = 0.0  # seconds to the first token of the first request (streaming)
    reasons: Mapping[str, str] = field(default_factory=dict)  # block id -> why it is missing
    memory: object | None = None  # app.translate.memory.StoryMemory the model proposed (None: none)
    image_sent: bool = False  # the page image went with the request


@dataclass(frozen=True)
class TranslatorSettings:
    """What a backend needs, as plain values (the GUI's settings or the CLI's flags).

    provider: one of PROVIDERS; base_url: the OpenAI-compatible server (or DeepL's server URL,
    "" = the official one); model: the chat model name, or the offline model (a model-store name
    or a folder; "" = the store's model for the language pair); source_lang: "" = let the model
    tell; target_lang: e.g. "en"; context_pages / context_tokens: how much of the previous pages
    goes with a request (the server's own context size, when it says, lowers the budget);
    timeout: seconds without a byte from the server (between streamed chunks); total_timeout:
    seconds for a whole answer (0 = the preset's: 10 minutes for local servers, 3 for hosted);
    max_retries: retries of rate limits (429, honouring Retry-After) and of 502/503/504;
    structured: "auto" asks for a JSON schema and falls back when the server refuses it,
    "schema" / "json" / "off" force one way; max_tokens: the answer's limit (0 = from the
    page's length); stream: stream the answer (a server that does not stream gets one
    response); capabilities_file: where what a server + model accepted is remembered ("" =
    nowhere)."""

    provider: str = "openai"
    base_url: str = ""
    model: str = ""
    source_lang: str = ""
    target_lang: str = "en"
    context_pages: int = 2
    context_tokens: int = 1500
    timeout: float = 60.0
    max_retries: int = 2
    temperature: float = 0.2
    structured: str = "auto"
    total_timeout: float = 0.0
    max_tokens: int = 0
    stream: bool = True
    capabilities_file: str = ""
    page_image: str = "auto"  # send the page image: auto (when the model takes images) | on | off
    image_max_side: int = 1568
    memory: bool = True  # send the story memory and ask the model for additions
    device: str = "auto"  # offline backend
    batch_size: int = 8  # offline backend: sentences per forward pass
    extra: Mapping[str, str] = field(default_factory=dict)


def server_label(base_url: str) -> str:
    """The URL without user:password, query or fragment (safe in messages and logs)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", "")) or base_url


def redact(text: str, secret: str | None) -> str:
    """`text` without `secret`, nor its first or last 8 characters (servers like to echo those)."""
    if not secret:
        return text
    for part in (secret, secret[:8], secret[-8:]):
        if len(part) >= 6:
            text = text.replace(part, "***")
    return text


class TranslationError(UserError):
    """A page could not be translated. `fatal`: every later page would fail the same way (the
    key is refused, the model does not exist, the server cannot be reached), so a run stops."""

    def __init__(self, message: str, fatal: bool = False):
        super().__init__(message)
        self.fatal = fatal


class Translator(Protocol):
    name: str  # shown beside machine translations, e.g. "openai:gpt-4o-mini @ api.openai.com"

    def translate_page(self, segments: Sequence[Segment], context: Sequence[ContextPage] = (),
                       glossary: Sequence[GlossaryEntry] = (), cancel: CancelFn | None = None,
                       page_name: str = "", on_tokens: TokensFn | None = None, memory=None, examples=(),
                       page_image=None) -> PageResult: ...

    def close(self) -> None: ...
