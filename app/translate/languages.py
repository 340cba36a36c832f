"""Language codes the translation stage knows: names for prompts and menus, DeepL's codes, and
the offline (MarianMT) model of each language pair."""
from __future__ import annotations

# ISO 639-1 code -> English name (what the LLM prompt and the GUI show)
LANGUAGES = {
    "ja": "Japanese", "zh": "Chinese", "ko": "Korean", "en": "English", "fr": "French",
    "de": "German", "es": "Spanish", "pt": "Portuguese", "it": "Italian", "ru": "Russian",
    "pl": "Polish", "nl": "Dutch", "tr": "Turkish", "uk": "Ukrainian", "id": "Indonesian",
    "vi": "Vietnamese", "th": "Thai", "ar": "Arabic",
}

# DeepL wants a regional variant for some target languages (EN alone is deprecated as a target)
_DEEPL_TARGET = {"en": "EN-US", "pt": "PT-BR", "zh": "ZH-HANS"}

# (source, target) -> model-store name of the offline model
MARIAN_MODELS = {("ja", "en"): "opus-mt-ja-en", ("ko", "en"): "opus-mt-ko-en", ("zh", "en"): "opus-mt-zh-en"}


def language_name(code: str) -> str:
    """"ja" -> "Japanese"; an unknown code is returned as it is (a user may type "en-GB")."""
    return LANGUAGES.get(code.lower(), code) if code else "the source language"


def deepl_target(code: str) -> str:
    code = code.strip()
    return _DEEPL_TARGET.get(code.lower(), code.upper())


def deepl_source(code: str) -> str | None:
    """DeepL source codes have no region; "" = DeepL detects the language."""
    return code.split("-")[0].upper() if code.strip() else None


def marian_model_for(source: str, target: str) -> str | None:
    return MARIAN_MODELS.get((source.lower(), target.lower()))
