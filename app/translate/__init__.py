"""Machine translation: one interface (`Translator.translate_page`), three backends, the LLM
contract, context and glossary. No Qt, no app.core: app.core.translation.run composes it.

    base.py            Segment, ContextPage, GlossaryEntry, PageResult, TranslatorSettings, errors
    contract.py        the LLM request/answer contract (docs/translation.md)
    glossary.py        glossary files (TSV, arrows, JSON) and per-page selection
    presets.py         OpenAI-compatible servers: URLs, key variables, models
    openai_backend.py  chat completions through the `openai` client
    deepl_backend.py   DeepL through the `deepl` client
    marian.py          offline MarianMT through transformers (model from app.models)
"""
from __future__ import annotations

from app.translate.base import (  # noqa: F401  (re-exported)
    PROVIDERS,
    ContextPage,
    GlossaryEntry,
    PageResult,
    Segment,
    TranslationError,
    Translator,
    TranslatorSettings,
)


def make_translator(settings: TranslatorSettings, api_key: str | None = None, *,
                    trust_unpinned: bool = False) -> Translator:
    """The backend of `settings.provider`; `api_key` for the hosted ones (None = none needed).

    Creating it sends nothing: requests go out only from translate_page / list_models."""
    if settings.provider == "openai":
        from app.translate.openai_backend import OpenAITranslator

        return OpenAITranslator(settings, api_key)
    if settings.provider == "deepl":
        from app.translate.deepl_backend import DeepLTranslator

        return DeepLTranslator(settings, api_key)
    if settings.provider == "offline":
        from app.translate.marian import load_marian

        return load_marian(settings, trust_unpinned=trust_unpinned)
    raise TranslationError(f"unknown translation provider {settings.provider!r}: use one of "
                           f"{', '.join(PROVIDERS)}.", fatal=True)


def probe(translator: Translator, cancel=None) -> list[str]:
    """What "Test connection" shows: the server's models (OpenAI-compatible), a one-word
    translation (DeepL), the model and device (offline). Raises TranslationError when it fails."""
    if hasattr(translator, "list_models"):
        return translator.list_models(cancel)
    result = translator.translate_page([Segment("t", "テスト")], cancel=cancel)
    answer = result.texts.get("t", "(no answer)")
    where = getattr(translator, "device", None)
    return [f"{translator.name}{f' on {where}' if where is not None else ''}: テスト -> {answer}"]
