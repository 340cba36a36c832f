"""The token budget of the OpenAI-compatible backend (openai_backend.py): which previous pages go
with a page as context (at least the last `context_pages`, and the earlier ones of the previous
request while they fit, so that the request starts as the previous one did and the server's
prompt cache serves it), how many tokens that context may take (the settings' `context_tokens`,
less where the server's context size leaves no room for it beside the system prompt, the page
and its answer), the answer's `max_tokens`, and the model's own answers of the context pages
that still hold exactly what it said. Plain functions of what they are given: the backend keeps
the state (the server's context size, the anchor of the previous request, the answers kept)."""
from __future__ import annotations

from collections.abc import Sequence

from app.translate import contract
from app.translate.base import ContextPage, GlossaryEntry, TranslatorSettings

MAX_CONTEXT_PAGES_FACTOR = 4  # context grows append-only up to this many times context_pages


def own_answers(context: Sequence[ContextPage],
                answers: dict[str, tuple[str, dict[str, str]]]) -> dict[str, str]:
    """The model's own answers of the context pages that still hold exactly what it said;
    `answers`: page name -> (the model's answer, word for word, and the ids' texts it gave)."""
    out = {}
    for page in context:
        kept = answers.get(page.name)
        if kept is None:
            continue
        raw, texts = kept
        ids = contract.request_ids(len(page.pairs))
        if [texts.get(i) for i in ids] == [t for _s, t in page.pairs]:
            out[page.name] = raw
    return out


def previous_pages(context: Sequence[ContextPage], want: int, anchor: str | None,
                   budget: int) -> list[ContextPage]:
    """The previous pages to send (`want` > 0, a `budget` > 0): at least the last `want`, and
    the earlier ones from `anchor` (the first context page of the previous request) while they
    fit `budget` tokens, up to MAX_CONTEXT_PAGES_FACTOR times `want` pages."""
    names = [c.name for c in context]
    start = names.index(anchor) if anchor in names else max(0, len(context) - want)
    start = min(start, max(0, len(context) - want))
    if len(context) - start > want * MAX_CONTEXT_PAGES_FACTOR:
        start = len(context) - want
    window = list(context[start:])
    if contract.messages_tokens(contract.context_messages(window)) > budget:
        window = contract.trim_context(context[max(0, len(context) - want):], budget)
    return window


def context_budget(texts: Sequence[str], settings: TranslatorSettings, n_ctx: int | None,
                   glossary: Sequence[GlossaryEntry], memory: dict | None, image_url: str,
                   ask_memory: bool) -> int:
    """The tokens the context pages may take: settings.context_tokens, less where the server's
    context (`n_ctx`, None when unknown) leaves less room beside the system prompt (with the
    glossary, the story `memory`, the page image), the page's `texts` and their answer."""
    budget = settings.context_tokens
    if n_ctx:
        page = sum(contract.estimate_tokens(t) + 12 for t in texts) + 120
        system = contract.messages_tokens([contract.system_message(
            settings.source_lang, settings.target_lang, glossary, ask_memory, bool(image_url))])
        if image_url:
            system += contract.IMAGE_TOKENS
        if memory:
            system += contract.estimate_tokens(str(memory))
        room = n_ctx - system - page - max_tokens(texts, settings.max_tokens, n_ctx, ask_memory) - 64
        if room < budget:
            budget = max(0, room)
    return budget


def max_tokens(texts: Sequence[str], limit: int, n_ctx: int | None, ask_memory: bool) -> int:
    """The answer's `max_tokens`: `limit` (settings.max_tokens) when set, else from the
    `texts` (and the story memory asked for), at most half the server's context `n_ctx`."""
    if limit > 0:
        return limit
    need = contract.answer_budget(texts) + (contract.MEMORY_TOKENS if ask_memory else 0)
    if n_ctx:
        need = min(need, max(contract.MAX_TOKENS_FLOOR, n_ctx // 2))
    return need
