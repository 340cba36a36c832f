"""API keys of the translation servers: found in the environment, stored with `keyring`, or,
where no keyring backend exists, in a settings file only the user can read.

Lookup order (`find_key`): the provider's environment variable (OPENAI_API_KEY for
api.openai.com and other servers without a preset, DEEPSEEK_API_KEY, OPENROUTER_API_KEY,
GEMINI_API_KEY, ANTHROPIC_API_KEY, DEEPL_AUTH_KEY), then the keyring entry, then the file.
Keys are stored per server (`account_for`), so a key typed for one server is never sent to
another; local presets (Ollama, LM Studio, llama.cpp, vLLM) read no environment variable.
A key is never logged, never written to a project, an export or settings.json, and is never a
command-line argument (other users can read those).
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from app.atomic import atomic_write_json
from app.core.settings import config_dir
from app.translate.base import server_label
from app.translate.presets import DEFAULT_URL, preset_for_url

log = logging.getLogger(__name__)
SERVICE = "hayai-desktop"
KEY_FILE = "translation-keys.json"


@dataclass(frozen=True)
class FoundKey:
    """key: the secret or None; where: "env:NAME", "keyring", "file" or "" (none)."""

    key: str | None
    where: str = ""

    def __repr__(self) -> str:  # never print the secret, even in a traceback or a test failure
        return f"FoundKey(key={'***' if self.key else None}, where={self.where!r})"


def account_for(provider: str, base_url: str = "") -> str:
    if provider == "deepl":
        return "deepl:" + (server_label(base_url) if base_url else "api.deepl.com")
    return "openai:" + server_label(base_url or DEFAULT_URL)


def env_var_for(provider: str, base_url: str = "") -> str:
    """The environment variable read for this server ("" for local servers)."""
    if provider == "deepl":
        return "DEEPL_AUTH_KEY"
    if provider != "openai":
        return ""
    return preset_for_url(base_url or DEFAULT_URL).key_env


def key_file() -> Path:
    return config_dir() / KEY_FILE


def _keyring():
    """The keyring module when a usable backend exists, else None."""
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return None
    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 1) <= 0:
        return None
    return keyring


def keyring_available() -> bool:
    return _keyring() is not None


def find_key(provider: str, base_url: str = "") -> FoundKey:
    var = env_var_for(provider, base_url)
    if var and os.environ.get(var, "").strip():
        return FoundKey(os.environ[var].strip(), f"env:{var}")
    account = account_for(provider, base_url)
    kr = _keyring()
    if kr is not None:
        try:
            value = kr.get_password(SERVICE, account)
        except kr.errors.KeyringError as exc:
            log.warning("keyring lookup failed (%s); trying the key file", type(exc).__name__)
        else:
            if value:
                return FoundKey(value, "keyring")
    value = _read_file().get(account)
    return FoundKey(value, "file") if value else FoundKey(None)


def store_key(provider: str, base_url: str, key: str) -> str:
    """Store `key` for this server; returns where: "keyring", or "file" when no keyring backend
    works here (the GUI tells the user so). An empty key deletes the stored one."""
    account = account_for(provider, base_url)
    if not key:
        delete_key(provider, base_url)
        return ""
    kr = _keyring()
    if kr is not None:
        try:
            kr.set_password(SERVICE, account, key)
        except kr.errors.KeyringError as exc:
            log.warning("keyring refused the key (%s); using the key file", type(exc).__name__)
        else:
            _write_file({k: v for k, v in _read_file().items() if k != account})
            return "keyring"
    data = _read_file()
    data[account] = key
    _write_file(data)
    return "file"


def delete_key(provider: str, base_url: str = "") -> None:
    account = account_for(provider, base_url)
    kr = _keyring()
    if kr is not None:
        try:
            kr.delete_password(SERVICE, account)
        except kr.errors.PasswordDeleteError:
            pass  # there was none
        except kr.errors.KeyringError as exc:
            log.warning("keyring could not delete the key (%s)", type(exc).__name__)
    data = _read_file()
    if account in data:
        del data[account]
        _write_file(data)


def _read_file() -> dict[str, str]:
    try:
        data = json.loads(key_file().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("%s unreadable (%s): keys stored there are ignored", key_file(), type(exc).__name__)
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _write_file(data: dict[str, str]) -> None:
    """Atomically, created with mode 0600 (owner read/write only) before a byte is written."""
    path = key_file()
    if not data and not path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, data, indent=None, mode=0o600)  # its temporary file is 0600 from the start
