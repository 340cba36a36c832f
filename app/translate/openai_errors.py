"""What an OpenAI-compatible server's refusals and errors mean: refused for length or for images,
no stream, a retry's wait, a transport failure, and the message a user can act on (naming the
server, never the key); and what a request's retry loop raises and counts (send again at once,
retry after a wait). Used by app.translate.openai_backend."""
from __future__ import annotations

from dataclasses import dataclass

from app.translate.base import TranslationError, redact


class LengthRefused(Exception):
    """The server refused the request for its length (prompt + answer over its context)."""


class StreamEmpty(Exception):
    """A streamed request brought no chunk at all: the server does not stream."""


class ImagesRefused(Exception):
    """The model does not take image parts."""


# an error that speaks of these is a refusal of the page image, or of the request's length
IMAGE_WORDS = ("image", "vision", "multimodal", "mmproj", "image_url", "multi-modal")
LENGTH_WORDS = ("context size", "context length", "context_length", "maximum context", "context window",
                "exceeds the available context", "n_ctx", "too many tokens", "prompt is too long",
                "reduce the length", "input is too long", "exceed_context_size")


def error_for(backend, exc) -> TranslationError:
    """A message the user can act on, naming the server, never the key."""
    import openai

    s, server = backend.settings, backend.server
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return TranslationError(f"{server} refused the API key (HTTP {exc.status_code}). Check the key in "
                                "Translation settings or the environment variable.", fatal=True)
    if isinstance(exc, openai.NotFoundError):
        msg = message(exc)
        if "model" in msg.lower():
            models = backend.models_quietly()
            listed = f" The server offers: {', '.join(models[:12])}." if models else ""
            return TranslationError(f"{server}: model {s.model!r} is not there (HTTP 404: {short(msg)})."
                                    f"{listed}", fatal=True)
        hint = (f" Did you mean {backend.base_url.rstrip('/')}/v1 ?" if not backend.base_url.rstrip("/").endswith("/v1")
                else "")
        return TranslationError(f"{server}: the chat endpoint was not found (HTTP 404).{hint} Check the base "
                                "URL (Test connection lists the models).", fatal=True)
    if isinstance(exc, openai.RateLimitError):
        return TranslationError(f"{server}: rate limit (HTTP 429) still reached after {s.max_retries} "
                                "retries; this page was not translated. Run again later to resume.")
    if isinstance(exc, openai.APITimeoutError):
        return TranslationError(f"{server}: nothing arrived for {s.timeout:g} s; this page was not translated. "
                                "A slow server needs a longer timeout (Translation settings, --timeout).")
    if isinstance(exc, openai.APIConnectionError):
        return TranslationError(f"{server}: cannot connect ({redact(str(exc.__cause__ or exc), backend.key)}). "
                                "Is the server running, and is the base URL right?", fatal=True)
    if isinstance(exc, openai.APIStatusError):
        return TranslationError(f"{server}: HTTP {exc.status_code}: {redact(message(exc), backend.key)}")
    return TranslationError(f"{server}: {type(exc).__name__}: {redact(str(exc), backend.key)}")

def broken(backend, exc) -> TranslationError:
    cause = exc.__cause__ or exc
    return TranslationError(f"{backend.server}: the connection broke before the answer was complete "
                            f"({type(cause).__name__}: {redact(str(cause), backend.key)[:200]}). Is the server "
                            "still running?")


def retry_after(exc, attempt: int) -> float:
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    try:
        return min(60.0, max(0.0, float(headers.get("retry-after"))))
    except (TypeError, ValueError):
        return min(30.0, 0.5 * 2 ** (attempt - 1))


def refused(exc) -> bool:
    """Nothing listens there (connection refused, unknown host): every later request fails too."""
    seen: set[int] = set()
    cause = exc.__cause__ or exc.__context__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ConnectionRefusedError) or type(cause).__name__ in ("ConnectError", "gaierror"):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def stale(exc) -> bool:
    """The server closed a kept-alive connection just as the request went out on it ("Server
    disconnected without sending a response": it never read the request). Common after a
    cancelled stream or an error answer on a busy machine; a fresh connection is the cure."""
    seen: set[int] = set()
    cause = exc.__cause__ or exc.__context__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if type(cause).__name__ == "RemoteProtocolError" and "without sending a response" in str(cause):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def looks_like_transport(exc) -> bool:
    mod = type(exc).__module__ or ""
    return mod.startswith(("httpx", "httpcore", "h11", "anyio")) or isinstance(exc, (ConnectionError, OSError))


def message(exc) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
        if isinstance(inner, str):
            return inner[:300]
    return str(getattr(exc, "message", exc))[:300]


def about_images(msg: str) -> bool:
    low = msg.lower()
    return any(word in low for word in IMAGE_WORDS)


def about_length(msg: str) -> bool:
    low = msg.lower()
    return any(word in low for word in LENGTH_WORDS)


def short(text: str) -> str:
    text = " ".join(str(text).split())
    return text[:120] + ("…" if len(text) > 120 else "")


def snippet(reply: str) -> str:
    text = " ".join((reply or "").split())
    return repr(text[:80] + ("…" if len(text) > 80 else "")) if text else "an empty answer"


MAX_ATTEMPTS = 12  # a bound on the immediate redos of one request (each capability is left out once)


@dataclass
class Tries:
    """What one request's retry loop counted."""

    transient: int = 0  # retries after a wait (429, 502/503/504, a dropped connection)
    fresh: bool = False  # asked again on a new connection after a kept-alive one closed


class Again(Exception):
    """Send the request again at once (what it asks for changed, or a new connection)."""


class Transient(Exception):
    """A failure worth a retry after `wait` seconds; `final` is raised after the last one."""

    def __init__(self, final: TranslationError, wait: float):
        super().__init__(str(final))
        self.final = final
        self.wait = wait
