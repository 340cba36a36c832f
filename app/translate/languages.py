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


# ----------------------------------------------------------------------------- scripts
# The writing systems a language's text is normally in (letters only: punctuation, digits and
# symbols belong to every language). Used to tell a translation that is not one.
_SCRIPTS_OF = {
    "ja": {"kana", "han"}, "zh": {"han"}, "ko": {"hangul", "han"}, "ru": {"cyrillic"}, "uk": {"cyrillic"},
    "ar": {"arabic"}, "th": {"thai"},
}
_LATIN_DEFAULT = {"latin"}


def script_of(ch: str) -> str | None:
    """The script of a letter ("latin", "kana", "han", "hangul", "cyrillic", ...), None for
    anything that is not a letter (punctuation, digits, symbols, spaces)."""
    if not ch.isalpha():
        return None
    o = ord(ch)
    if o < 0x250 or 0x1E00 <= o <= 0x1EFF or 0xFF21 <= o <= 0xFF5A:
        return "latin"
    if 0x3040 <= o <= 0x30FF or 0x31F0 <= o <= 0x31FF or 0xFF66 <= o <= 0xFF9F:
        return "kana"
    if 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x2FFFF:
        return "han"
    if 0xAC00 <= o <= 0xD7AF or 0x1100 <= o <= 0x11FF or 0x3130 <= o <= 0x318F:
        return "hangul"
    if 0x0400 <= o <= 0x052F:
        return "cyrillic"
    if 0x0600 <= o <= 0x06FF:
        return "arabic"
    if 0x0E00 <= o <= 0x0E7F:
        return "thai"
    if 0x0370 <= o <= 0x03FF:
        return "greek"
    return "other"


def scripts_of_language(code: str) -> set[str]:
    return _SCRIPTS_OF.get((code or "").split("-")[0].lower(), _LATIN_DEFAULT)


def _letters(text: str) -> list[str]:
    return [s for s in (script_of(c) for c in text) if s is not None]


def looks_untranslated(source: str, text: str, target_lang: str) -> bool:
    """The answer for `source` is not a translation into `target_lang`: the source copied back
    (ignoring spaces and case; Latin text kept in a Latin-script target is fine), or mostly (over half of its letters) in a script of the source
    that the target language does not use. Text without letters (「！？」, 「…」, digits) is never
    flagged: such a block is kept as it is on purpose."""
    a, b = "".join(source.split()).casefold(), "".join(text.split()).casefold()
    if not _letters(text):
        return False
    target = scripts_of_language(target_lang)
    if a == b:  # copied back; Latin kept in a Latin-script target ("OK", a name) is a translation
        return not (set(_letters(source)) <= {"latin"} and "latin" in target)
    foreign = {s for s in _letters(source)} - target
    if not foreign:
        return False
    letters = _letters(text)
    return sum(1 for s in letters if s in foreign) > len(letters) / 2
