"""The DeepL backend, through the official `deepl` client.

One `translate_text` call per page with every segment (DeepL answers one text per input, in
input order: that order is its API's contract, so results map back to the segments' ids by
position of the same call). The previous pages' source text goes in DeepL's `context` (not
translated, not billed). The glossary is created once per language pair and entry set on the
DeepL account (`create_glossary`) and deleted on `close()`. The client is synchronous with its
own retries and backoff; it runs in a helper thread so that `cancel()` returns within POLL_S
seconds while a request is in flight (the abandoned request finishes in the background and its
answer is dropped).
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from app.errors import Cancelled
from app.translate.base import (
    CancelFn,
    ContextPage,
    GlossaryEntry,
    PageResult,
    Segment,
    TranslationError,
    TranslatorSettings,
    redact,
)
from app.translate.languages import deepl_source, deepl_target

log = logging.getLogger(__name__)
POLL_S = 0.1
CONTEXT_CHARS = 4000  # DeepL's context is free of charge but not unlimited


class DeepLTranslator:
    def __init__(self, settings: TranslatorSettings, auth_key: str | None):
        import deepl

        if not auth_key:
            raise TranslationError("DeepL needs an authentication key: set DEEPL_AUTH_KEY or enter it in "
                                   "Translation settings.", fatal=True)
        self.settings = settings
        self.server = settings.base_url or ("api-free.deepl.com" if auth_key.endswith(":fx") else "api.deepl.com")
        self.name = f"DeepL @ {self.server}"
        self._key = auth_key
        self._client = deepl.Translator(auth_key, server_url=settings.base_url or None, send_platform_info=False)
        self._glossaries: dict[tuple, str] = {}  # (source, target, entries) -> glossary id

    def translate_page(self, segments: Sequence[Segment], context: Sequence[ContextPage] = (),
                       glossary: Sequence[GlossaryEntry] = (), cancel: CancelFn | None = None,
                       page_name: str = "", on_tokens=None, memory=None, examples=(),
                       page_image=None) -> PageResult:
        if not segments:
            return PageResult({})
        s = self.settings
        source = deepl_source(s.source_lang)
        target = deepl_target(s.target_lang)
        context_text = "\n".join(src for page in context for src, _t in page.pairs)[-CONTEXT_CHARS:] or None
        requests = 0
        glossary_id = None
        notes = []
        if glossary and source:
            try:
                glossary_id, made = self._glossary(source, target, glossary, cancel)
                requests += made
            except TranslationError as exc:
                notes.append(f"glossary not used: {exc}")
        elif glossary:
            notes.append("glossary not used: DeepL glossaries need the source language set")

        def call():
            return self._client.translate_text([seg.text for seg in segments], source_lang=source,
                                               target_lang=target, context=context_text, glossary=glossary_id,
                                               preserve_formatting=True)
        results = self._in_thread(call, cancel)
        requests += 1
        if len(results) != len(segments):  # never map a short answer onto the wrong bubbles
            raise TranslationError(f"{self.server}: DeepL answered {len(results)} texts for {len(segments)} "
                                   "segments; the page was not translated.")
        texts = {seg.id: r.text.strip() for seg, r in zip(segments, results, strict=True) if r.text.strip()}
        missing = tuple(seg.id for seg in segments if seg.id not in texts)
        return PageResult(texts, missing, requests, 0, 0, tuple(notes))

    def _glossary(self, source: str, target: str, entries: Sequence[GlossaryEntry], cancel) -> tuple[str, int]:
        base_target = target.split("-")[0]
        key = (source, base_target, tuple(sorted((e.source, e.target) for e in entries)))
        if key in self._glossaries:
            return self._glossaries[key], 0
        terms = {e.source: e.target for e in entries}
        info = self._in_thread(lambda: self._client.create_glossary("hayai-desktop", source, base_target, terms),
                               cancel)
        self._glossaries[key] = info.glossary_id
        return info.glossary_id, 1

    def _in_thread(self, fn, cancel: CancelFn | None):
        import deepl

        box: dict = {}

        def work():
            try:
                box["value"] = fn()
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                box["error"] = exc
        thread = threading.Thread(target=work, name="hayai-deepl-request", daemon=True)
        thread.start()
        while thread.is_alive():
            thread.join(POLL_S)
            if thread.is_alive() and cancel is not None and cancel():
                raise Cancelled("cancelled")
        if "error" not in box:
            return box["value"]
        exc = box["error"]
        if isinstance(exc, deepl.AuthorizationException):
            raise TranslationError(f"{self.server} refused the DeepL key. Check it in Translation settings or "
                                   "DEEPL_AUTH_KEY.", fatal=True) from None
        if isinstance(exc, deepl.QuotaExceededException):
            raise TranslationError(f"{self.server}: the DeepL quota for this billing period is used up.",
                                   fatal=True) from None
        if isinstance(exc, deepl.TooManyRequestsException):
            raise TranslationError(f"{self.server}: too many requests (HTTP 429) after the client's retries; "
                                   "this page was not translated. Run again later to resume.") from None
        if isinstance(exc, deepl.ConnectionException):
            raise TranslationError(f"{self.server}: cannot connect ({redact(str(exc), self._key)[:300]}).", fatal=True) from None
        if isinstance(exc, deepl.DeepLException):
            raise TranslationError(f"{self.server}: {redact(str(exc), self._key)[:300]}") from None
        raise exc

    def close(self) -> None:
        for glossary_id in self._glossaries.values():
            try:
                self._in_thread(lambda g=glossary_id: self._client.delete_glossary(g), None)
            except TranslationError as exc:
                log.warning("DeepL glossary %s not deleted: %s", glossary_id, exc)
        self._glossaries.clear()
        self._client.close()
