"""The OpenAI-compatible chat-completions backend (OpenAI, DeepSeek, OpenRouter, Gemini and
Anthropic's compatible endpoints, Ollama, LM Studio, llama.cpp, vLLM), through the official
`openai` client.

One request per page (contract.py), built so that what does not change from page to page comes
first (system prompt with the glossary, then the context pages oldest first, each exactly as it
was sent, then the page): the server's prompt cache serves the start of every request.

- Bounded answers: the JSON schema fixes the number of items to the page's, `max_tokens` is set
  from the page's length; an answer cut at that limit keeps its complete items and the rest is
  asked for again.
- Streaming: the answer arrives token by token (`on_tokens` counts them); `timeout` is the
  longest wait between two chunks, `total_timeout` the limit for a whole answer; Cancel
  (polled every 0.1 s) aborts a request in flight. A server that does not stream gets one
  plain request, remembered.
- Capabilities: a 400 / 422 on the first request of a run makes the backend try the next
  response format (json_schema -> json_object -> none), then leave out `temperature`;
  what worked is remembered per server + model (capabilities.py). The server's context size is
  read where the server says it (llama.cpp /props, /v1/models meta, Ollama /api/show) and
  bounds the context pages; a request refused for length is sent again without context, then
  with the page's blocks in halves.
- Honest results: answers that are not translations (the source copied back) are asked again
  once, then reported as "looks untranslated"; what one request of the page received is kept
  whatever happens to the next; the server's own error message is shown, never a guess.

The key goes only into the client (the Authorization header); error messages name the server
(without any user:password in its URL), never the key.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from app.errors import Cancelled
from app.translate import contract
from app.translate import openai_errors as errors
from app.translate.base import (
    CancelFn,
    ContextPage,
    GlossaryEntry,
    PageResult,
    Segment,
    TokensFn,
    TranslationError,
    TranslatorSettings,
    server_label,
)
from app.translate.capabilities import FORMATS, Capabilities, CapabilityStore, describe_change
from app.translate.context_window import context_budget, max_tokens, own_answers, previous_pages
from app.translate.languages import looks_untranslated
from app.translate.memory import StoryMemory, proposed_memory
from app.translate.openai_wire import Transport, Wire, _Page, _Reply
from app.translate.presets import DEFAULT_URL, is_loopback, preset_for_url

log = logging.getLogger(__name__)
NO_KEY = "no-key"  # local servers want a non-empty bearer token; this one means none
LOCAL_TOTAL_S = 600.0  # a whole answer: local servers (a CPU may be slow)
HOSTED_TOTAL_S = 180.0
_AGAIN_NOTE = ("Your previous answer lacked these segment ids, or left them untranslated. Translate exactly "
               "these segments into {target}.")


@dataclass
class _Extras:
    """What goes with the page besides its segments: the story memory, examples, the image."""

    memory: dict | None = None
    examples: tuple = ()
    image_url: str = ""
    ask_memory: bool = False


class OpenAITranslator:
    """settings: TranslatorSettings; api_key: None or "" for servers that need none; store:
    where capabilities are remembered (default: settings.capabilities_file). The wire (a request
    on the wire, the event loop, Cancel) is a composed `Transport` (openai_wire.Wire)."""

    def __init__(self, settings: TranslatorSettings, api_key: str | None = None,
                 store: CapabilityStore | None = None):
        import openai

        # no model yet is fine for listing the server's models (Test connection, GET /models):
        # only a translation needs one (translate_page says so)
        self.settings = settings
        self.base_url = settings.base_url or DEFAULT_URL
        self.server = server_label(self.base_url)
        self.preset = preset_for_url(self.base_url)
        self.name = f"{settings.model} @ {self.server}"
        self.key = api_key or NO_KEY
        self.store = store if store is not None else CapabilityStore(settings.capabilities_file or None)
        self.caps = self.store.get(self.server, settings.model) or self._initial_caps()
        self._confirmed = False  # a request of this run went through: later 400s are the page's own
        self._n_ctx: int | None = None
        self._n_ctx_read = False
        self._anchor: str | None = None  # the first context page of the previous request (cache)
        self._glossary: list[GlossaryEntry] = []  # every entry sent in this run, first seen first
        self._extras = _Extras()
        # page name -> (the model's answer, word for word, and the ids' texts it gave): a page
        # answered in one request goes as context with that answer, which the server's cache holds
        self._answers: dict[str, tuple[str, dict[str, str]]] = {}
        client = openai.AsyncOpenAI(api_key=self.key, base_url=self.base_url, max_retries=0,
                                    timeout=self._http_timeout())
        self.wire: Transport = Wire(client, self.server, self.base_url)

    def _initial_caps(self) -> Capabilities:
        structured = self.settings.structured
        if structured == "auto":
            structured = self.preset.structured
        fmt = structured if structured in FORMATS else "schema"
        return Capabilities(format=fmt, stream=self.settings.stream)

    def _http_timeout(self):
        import openai

        t = float(self.settings.timeout)
        return openai.Timeout(t, connect=min(t, 15.0))

    @property
    def total_timeout(self) -> float:
        if self.settings.total_timeout > 0:
            return float(self.settings.total_timeout)
        return LOCAL_TOTAL_S if self.preset.local or is_loopback(self.base_url) else HOSTED_TOTAL_S

    # -- the interface ---------------------------------------------------------------------------
    def translate_page(self, segments: Sequence[Segment], context: Sequence[ContextPage] = (),
                       glossary: Sequence[GlossaryEntry] = (), cancel: CancelFn | None = None,
                       page_name: str = "", on_tokens: TokensFn | None = None, memory: StoryMemory | None = None,
                       examples=(), page_image=None) -> PageResult:
        """`memory`: the story so far (None: no memory is sent nor asked for); `examples`:
        (source, target) pairs a person translated; `page_image`: the page (a PIL image) to send
        with the segments' boxes drawn, when the model takes images (settings.page_image)."""
        if not segments:
            return PageResult({})
        if not self.settings.model:
            raise TranslationError(f"No model chosen for the OpenAI-compatible server {self.server}: set one in "
                                   "Translation settings (Test connection lists the server's models) or pass --model.",
                                   fatal=True)
        for g in glossary:
            if g not in self._glossary:
                self._glossary.append(g)
        ids = contract.request_ids(len(segments))
        by_rid = dict(zip(ids, segments, strict=True))
        state = _Page()
        self._read_context_size(cancel)
        extras = _Extras(examples=tuple(examples))
        if memory is not None and self.settings.memory:
            extras.ask_memory = True
            extras.memory = memory.for_prompt([by_rid[r].text for r in ids]) or None
        if page_image is not None and self._images_wanted():
            from app.translate.page_image import page_data_url

            extras.image_url = page_data_url(page_image, [(r, by_rid[r].box) for r in ids], self.settings.image_max_side)
        self._extras = extras
        window = self._context_window(context, [by_rid[r].text for r in ids])
        try:
            self._translate(ids, by_rid, window, page_name, cancel, on_tokens, state, split_ok=True)
        except TranslationError as exc:
            state.error = exc
        missing_rids = [r for r in ids if r not in state.texts]
        if state.raw is not None and state.requests == 1 and not missing_rids and page_name:
            self._answers[page_name] = state.raw
        else:
            self._answers.pop(page_name, None)
        if state.error is not None and not state.texts:
            raise state.error
        reasons = {by_rid[r].id: state.reasons.get(r) or ("looks untranslated" if r in state.untranslated else
                                                          "no translation in the answer") for r in missing_rids}
        if state.error is not None:
            for r in missing_rids:
                reasons[by_rid[r].id] = str(state.error)
        return PageResult(
            {by_rid[r].id: t for r, t in state.texts.items()}, tuple(by_rid[r].id for r in missing_rids),
            state.requests, state.prompt, state.completion, tuple(state.notes),
            untranslated={by_rid[r].id: t for r, t in state.untranslated.items() if r not in state.texts},
            error=str(state.error) if state.error is not None else "",
            fatal=bool(state.error is not None and state.error.fatal), translator=self.name,
            cached_tokens=state.cached, first_token_s=state.first_token_s, reasons=reasons,
            memory=proposed_memory(state.memory, [s.text for s in segments]) if state.memory else None,
            image_sent=state.image_sent)

    def takes_images(self) -> bool:
        """Whether a page image would be sent (so that the caller loads one only then)."""
        return self._images_wanted()

    def _images_wanted(self) -> bool:
        mode = self.settings.page_image
        return mode == "on" or (mode == "auto" and self.caps.images != "no")

    def list_models(self, cancel: CancelFn | None = None) -> list[str]:
        """The model ids the server offers (GET /models): what "Test connection" shows."""
        import openai

        try:
            return self.wire.models(cancel)
        except openai.OpenAIError as exc:
            raise errors.error_for(self, exc) from None

    def close(self) -> None:
        self.wire.close()

    def _read_context_size(self, cancel) -> None:
        """The server's context size, where it says it (once per run; None when it does not)."""
        if self._n_ctx_read:
            return
        self._n_ctx_read = True
        if self.preset.local or self.preset.name == "custom":  # hosted services: large, documented contexts
            self._n_ctx = self.wire.context_size(self.settings.model, cancel)

    # -- one page --------------------------------------------------------------------------------
    def _translate(self, rids: list[str], by_rid: dict[str, Segment], context: list[ContextPage], page_name: str,
                   cancel, on_tokens, state: _Page, split_ok: bool) -> None:
        """Translate `rids` into state: the first request, then one more for the ids missing or
        untranslated (more while an answer cut at max_tokens keeps bringing new items)."""
        s = self.settings
        todo = list(rids)
        asked_again = False
        rounds = 0
        while todo and rounds < 2 + len(rids):
            rounds += 1
            note = _AGAIN_NOTE.format(target=s.target_lang) if asked_again or rounds > 1 else ""
            x = self._extras
            messages = contract.build_messages([(r, by_rid[r].text) for r in todo], context, self._glossary,
                                               s.source_lang, s.target_lang, page_name, note, x.memory,
                                               x.examples, x.image_url, x.ask_memory, bool(x.image_url),
                                               own_answers(context, self._answers))
            try:
                reply = self._request(messages, todo, [by_rid[r].text for r in todo], cancel, on_tokens, state)
            except errors.LengthRefused as exc:
                self._shorten(todo, by_rid, context, page_name, cancel, on_tokens, state, split_ok, str(exc))
                return
            except errors.ImagesRefused as exc:
                self._extras = replace(x, image_url="")
                self.caps = replace(self.caps, images="no")
                self.store.put(self.server, self.settings.model, self.caps)
                state.notes.append(f"the model does not take images ({errors.short(str(exc))}); the page goes as text "
                                   "only (remembered for this server and model)")
                rounds -= 1
                continue
            if x.image_url:
                state.image_sent = True
                if self.caps.images != "yes":
                    self.caps = replace(self.caps, images="yes")
                    self.store.put(self.server, self.settings.model, self.caps)
            answer = contract.read_answer(reply.text, todo)
            if answer.memory is not None and state.memory is None:
                state.memory = answer.memory
            if rounds == 1 and not note and todo == rids:
                state.raw = (reply.text, dict(answer.texts))
            cut = reply.finish == "length" or contract.cut_off(reply.text)
            if not answer.ok and not cut:  # a cut answer is reported as cut (below), not as the wrong format
                state.notes.append(f"answer {state.requests} was not the JSON asked for: {errors.snippet(reply.text)}")
            if answer.unknown:
                state.notes.append(f"ignored unknown ids {', '.join(answer.unknown[:5])}")
            new = 0
            for rid, text in answer.texts.items():
                if looks_untranslated(by_rid[rid].text, text, s.target_lang):
                    state.untranslated[rid] = text
                else:
                    state.texts[rid] = text
                    state.untranslated.pop(rid, None)
                    new += 1
            todo = [r for r in todo if r not in state.texts]
            if not todo:
                return
            if reply.finish == "length" and new:
                state.notes.append(f"the answer reached its token limit; asked for the {len(todo)} id(s) left")
                continue  # progress: ask for the rest (not counted as the one retry)
            if not new and cut:
                # a length stop: the answer ended where the server's context (or the answer's
                # limit) did, before one item was complete; asking the same again cannot fit
                self._shorten(todo, by_rid, context, page_name, cancel, on_tokens, state, split_ok,
                              self._stop_reason(reply, [by_rid[r].text for r in todo]), stopped=True)
                return
            if asked_again:
                break
            asked_again = True
            bad = [r for r in todo if r in state.untranslated]
            state.notes.append(f"{len(todo)} id(s) missing or untranslated"
                               f"{f' ({len(bad)} copied back)' if bad else ''}; asked again for "
                               f"{', '.join(todo[:8])}")
        if not state.texts and not state.untranslated and todo and state.notes:
            raise TranslationError(f"{self.server}: the model's answers for {page_name or 'the page'} were not the "
                                   f"JSON asked for ({state.notes[-1]}).")

    def _shorten(self, todo, by_rid, context, page_name, cancel, on_tokens, state: _Page, split_ok: bool,
                 why: str, stopped: bool = False) -> None:
        """The request was too long for the server (refused for its length, or `stopped`: its
        answer cut off where the context ended): without context, then in halves, down to one
        line; a line that does not fit alone is reported with the server's context size and
        how to raise it."""
        what = "the answer stopped at the server's limit" if stopped else "the server refused the request for its length"
        if context:
            state.notes.append(f"{what} ({errors.short(why)}); sent again without the previous pages")
            self._translate(todo, by_rid, [], page_name, cancel, on_tokens, state, split_ok)
            return
        if len(todo) > 1 and split_ok:
            half = (len(todo) + 1) // 2
            state.notes.append(f"{what} ({errors.short(why)}); the {len(todo)} block(s) sent in two halves")
            self._translate(todo[:half], by_rid, [], page_name, cancel, on_tokens, state, split_ok)
            self._translate(todo[half:], by_rid, [], page_name, cancel, on_tokens, state, split_ok)
            return
        for r in todo:
            state.reasons[r] = self._too_small(why, stopped)
        state.notes.append(f"block(s) {', '.join(todo)} do not fit the server's context on their own")

    def _stop_reason(self, reply: _Reply, texts: Sequence[str]) -> str:
        """Why an answer stopped before one item was complete, in the server's figures."""
        used = f"{reply.prompt} prompt + {reply.completion} answer tokens" if reply.prompt or reply.completion else ""
        limit = self._max_tokens(texts)
        if self.settings.max_tokens > 0 and reply.completion >= self.settings.max_tokens:
            return f"the answer reached --max-tokens {self.settings.max_tokens}"
        cut = errors.snippet(reply.text)
        return (f"finish_reason {reply.finish or 'none'}, cut at {cut}" + (f", {used}" if used else "")
                + (f", answer limit {limit}" if limit else ""))

    def _too_small(self, why: str, stopped: bool) -> str:
        """The reason a line that does not fit even alone is missing: the server's context, its
        size as the server reports it, and how to raise it (or the answer's limit, when that was it)."""
        if "--max-tokens" in why:
            return f"{why} before this line's answer was complete: raise --max-tokens (or set it to 0, from the page)"
        size = (f"{self._n_ctx} tokens, as the server reports it" if self._n_ctx
                else "the server does not report its size")
        return (f"the server's context ({size}) is too small for this line and its answer "
                f"({'cut off' if stopped else 'refused'}: {errors.short(why)}). Start the server with a larger "
                "context: llama-server -c 4096 (or more), Ollama's num_ctx parameter, LM Studio's Context Length")

    def _context_window(self, context: Sequence[ContextPage], texts: list[str]) -> list[ContextPage]:
        """The previous pages to send, within the token budget (context_window.py); the first anchors the next."""
        want = self.settings.context_pages
        if want <= 0 or not context:
            self._anchor = None
            return []
        x = self._extras
        budget = context_budget(texts, self.settings, self._n_ctx, self._glossary, x.memory, x.image_url, x.ask_memory)
        if budget <= 0:
            return []
        window = previous_pages(context, want, self._anchor, budget)
        self._anchor = window[0].name if window else None
        return window

    def _max_tokens(self, texts: Sequence[str]) -> int:
        return max_tokens(texts, self.settings.max_tokens, self._n_ctx, self._extras.ask_memory)

    # -- requests --------------------------------------------------------------------------------
    def _kwargs(self, messages, ids, texts) -> dict:
        caps = self.caps
        kwargs: dict = {"model": self.settings.model, "messages": messages,
                        caps.max_tokens_param: self._max_tokens(texts)}
        if caps.temperature:
            kwargs["temperature"] = self.settings.temperature
        if caps.format == "schema":
            kwargs["response_format"] = contract.response_schema(ids, memory=self._extras.ask_memory)
        elif caps.format == "json":
            kwargs["response_format"] = {"type": "json_object"}
        return kwargs

    def _request(self, messages, ids, texts, cancel, on_tokens, state: _Page) -> _Reply:
        """One chat completion (streamed when the server streams); degrades what it asks for when
        the first request of the run is refused; raises errors.LengthRefused or TranslationError.

        One retry loop (tenacity): an attempt that ends in `errors.Again` (the server does not stream,
        refused a capability, closed a kept-alive connection) is sent again at once; one that
        ends in `errors.Transient` (429, 502/503/504, a dropped connection) after its wait (the
        server's Retry-After, else a growing back-off), at most settings.max_retries times, the
        wait polling Cancel; after the last, its error is raised."""
        import tenacity

        tries = errors.Tries()
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type((errors.Again, errors.Transient)),
            stop=lambda rs: (isinstance(rs.outcome.exception(), errors.Transient)
                             and tries.transient > self.settings.max_retries)
            or rs.attempt_number > errors.MAX_ATTEMPTS,
            wait=lambda rs: getattr(rs.outcome.exception(), "wait", 0.0),
            sleep=lambda seconds: self.wire.sleep(seconds, cancel) if seconds > 0 else None,
            reraise=True)
        try:
            reply = retrying(self._attempt, messages, ids, texts, cancel, on_tokens, state, tries)
        except errors.Transient as exc:
            raise exc.final from None
        except errors.Again as exc:  # errors.MAX_ATTEMPTS immediate redos: a server that keeps refusing
            raise TranslationError(f"{self.server}: the request kept being refused ({exc})") from None
        if not self._confirmed:
            self._confirmed = True
            self.store.put(self.server, self.settings.model, self.caps)
        if reply.model and reply.model != self.settings.model:
            self.name = f"{reply.model} @ {self.server}"
        if not state.first_token_s:
            state.first_token_s = reply.first_token_s
        return reply

    def _attempt(self, messages, ids, texts, cancel, on_tokens, state: _Page, tries: errors.Tries) -> _Reply:
        """One try of the request: the reply, or what to do next (see _request)."""
        import openai

        def transient(exc, final: TranslationError) -> errors.Transient:
            tries.transient += 1
            return errors.Transient(final, errors.retry_after(exc, tries.transient))

        kwargs = self._kwargs(messages, ids, texts)
        state.requests += 1
        try:
            return self.wire.run(self.wire.complete(kwargs, self.caps.stream, on_tokens, state), cancel,
                                 total=self.total_timeout)
        except errors.StreamEmpty:
            log.info("%s sent no chunk for a streamed request; asking without streaming", self.server)
            self.caps = replace(self.caps, stream=False)
            raise errors.Again("no stream") from None
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            msg = errors.message(exc)
            if self._extras.image_url and errors.about_images(msg):
                raise errors.ImagesRefused(msg) from None
            if errors.about_length(msg):
                raise errors.LengthRefused(msg) from None
            if not self._confirmed and self._degrade(msg):
                raise errors.Again(errors.short(msg)) from None
            raise errors.error_for(self, exc) from None
        except (openai.RateLimitError, openai.InternalServerError) as exc:
            msg = errors.message(exc)
            if self._extras.image_url and errors.about_images(msg):
                raise errors.ImagesRefused(msg) from None
            if errors.about_length(msg):
                raise errors.LengthRefused(msg) from None
            status = getattr(exc, "status_code", 0)
            if status == 429 or status in (502, 503, 504):
                raise transient(exc, errors.error_for(self, exc)) from None
            raise errors.error_for(self, exc) from None
        except openai.APIConnectionError as exc:
            if isinstance(exc, openai.APITimeoutError) or errors.refused(exc):
                raise errors.error_for(self, exc) from None
            if errors.stale(exc) and not tries.fresh:  # a closed kept-alive connection: at once on a new one
                tries.fresh = True
                log.info("%s closed the connection before answering; asking again", self.server)
                raise errors.Again("connection closed") from None
            raise transient(exc, errors.broken(self, exc)) from None  # the connection dropped
        except openai.OpenAIError as exc:
            raise errors.error_for(self, exc) from None
        except Cancelled:
            raise
        except Exception as exc:  # noqa: BLE001 - a transport error mid-stream (httpx): name it
            if not errors.looks_like_transport(exc):
                raise
            raise transient(exc, errors.broken(self, exc)) from None

    def _degrade(self, msg: str) -> bool:
        """The first request was refused (400 / 422): ask for less, in the order servers refuse
        things. False when there is nothing left to leave out."""
        caps, low = self.caps, msg.lower()
        if "temperature" in low and caps.temperature:
            new = replace(caps, temperature=False)
        elif "max_tokens" in low and caps.max_tokens_param == "max_tokens":
            new = replace(caps, max_tokens_param="max_completion_tokens")
        elif "stream" in low and caps.stream:
            new = replace(caps, stream=False)
        elif caps.format != "off":
            new = replace(caps, format=FORMATS[FORMATS.index(caps.format) + 1])
        elif caps.temperature:
            new = replace(caps, temperature=False)
        else:
            return False
        log.info("%s refused the request (%s); trying %s", self.server, errors.short(msg), describe_change(caps, new))
        self.caps = new
        return True

    def models_quietly(self) -> list[str]:
        try:
            return self.list_models()
        except TranslationError:
            return []
