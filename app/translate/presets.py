"""Presets for OpenAI-compatible servers: where they listen, which environment variable holds
their key, a model to start from, and whether they accept a JSON-schema `response_format`.

Model names are suggestions (hosted catalogues change): "Test connection" lists what the server
really offers. Local servers need no key; any non-empty placeholder is sent to them.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    name: str
    label: str
    base_url: str
    key_env: str = ""  # environment variable holding the key ("" = no key needed)
    model: str = ""
    structured: str = "auto"  # auto | schema | json | off (see TranslatorSettings.structured)
    local: bool = False


PRESETS = (
    Preset("openai", "OpenAI", "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-4o-mini", "schema"),
    Preset("deepseek", "DeepSeek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "deepseek-chat", "json"),
    Preset("openrouter", "OpenRouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY",
           "google/gemini-2.5-flash", "auto"),
    Preset("gemini", "Google Gemini (OpenAI-compatible)", "https://generativelanguage.googleapis.com/v1beta/openai/",
           "GEMINI_API_KEY", "gemini-2.5-flash", "schema"),
    Preset("anthropic", "Anthropic Claude (OpenAI-compatible)", "https://api.anthropic.com/v1/",
           "ANTHROPIC_API_KEY", "claude-sonnet-4-5", "off"),
    Preset("ollama", "Ollama (local)", "http://localhost:11434/v1", "", "qwen2.5:7b", "schema", local=True),
    Preset("lmstudio", "LM Studio (local)", "http://localhost:1234/v1", "", "", "schema", local=True),
    Preset("llamacpp", "llama.cpp server (local)", "http://localhost:8080/v1", "", "", "schema", local=True),
    Preset("vllm", "vLLM (local)", "http://localhost:8000/v1", "", "", "schema", local=True),
    Preset("custom", "Other OpenAI-compatible server", "", "OPENAI_API_KEY", "", "auto"),
)
PRESETS_BY_NAME = {p.name: p for p in PRESETS}
DEFAULT_URL = PRESETS_BY_NAME["openai"].base_url


def preset_for_url(base_url: str) -> Preset:
    """The preset whose URL this is ("custom" for any other)."""
    wanted = base_url.rstrip("/")
    return next((p for p in PRESETS if p.base_url and p.base_url.rstrip("/") == wanted), PRESETS_BY_NAME["custom"])


def is_loopback(url: str) -> bool:
    """The URL names this machine (localhost, 127.x, ::1)."""
    from urllib.parse import urlsplit

    host = (urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")
