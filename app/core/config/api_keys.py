"""API keys of the translation servers: found in the environment, stored with `keyring`, or,
where no keyring backend exists, in a settings file only the user can read.

Lookup order (`find_key`): the provider's environment variable (OPENAI_API_KEY,
DEEPSEEK_API_KEY, OPENROUTER_API_KEY, GEMINI_API_KEY, ANTHROPIC_API_KEY, DEEPL_AUTH_KEY), then
the keyring entry, then the file.

Keys are bound to their server:
- A stored key belongs to one provider and base URL (`account_for`: scheme, host, port, path),
  so a key typed for one server is never sent to another.
- An environment key is sent only to its provider's own hosts (`OWN_HOSTS`: OPENAI_API_KEY to
  api.openai.com, DEEPL_AUTH_KEY to api.deepl.com / api-free.deepl.com, ...), never to a custom
  base URL, a loopback port or another server, unless the user ties it to that URL
  (`tie_env_key`, the GUI's "use $VAR for this server"; the CLI's --use-env-key for one run).
  `FoundKey.withheld` names a variable that was set but not used, so the message can say so.
- `check_transport`: a key is never sent in clear to another machine: a non-loopback `http://`
  URL with a key needs the user's yes (the GUI asks) or --allow-insecure-http (CLI).
Local presets (Ollama, LM Studio, llama.cpp, vLLM) read no environment variable.
A key is never logged, never written to a project, an export or settings.json, and is never a
command-line argument (other users can read those).
"""
from __future__ import annotations

import ipaddress
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from app.atomic import atomic_write_json
from app.core.config.settings import config_dir
from app.errors import UserError
from app.textfile import read_json_file
from app.translate.base import server_label
from app.translate.presets import DEFAULT_URL, PRESETS, preset_for_url

log = logging.getLogger(__name__)
SERVICE = "hayai-desktop"
KEY_FILE = "translation-keys.json"
TIES_FILE = "translation-key-ties.json"  # accounts an environment key was tied to by the user
DEEPL_HOSTS = ("api.deepl.com", "api-free.deepl.com")
# the hosts an environment key is sent to without asking: its provider's own
OWN_HOSTS: dict[str, tuple[str, ...]] = {"DEEPL_AUTH_KEY": DEEPL_HOSTS}
for _p in PRESETS:
    if _p.key_env and _p.base_url:
        OWN_HOSTS.setdefault(_p.key_env, ())
        OWN_HOSTS[_p.key_env] += (urlsplit(_p.base_url).hostname,)


@dataclass(frozen=True)
class FoundKey:
    """key: the secret or None; where: "env:NAME", "keyring", "file" or "" (none); withheld: an
    environment variable that is set but not sent to this server (not its provider's host)."""

    key: str | None
    where: str = ""
    withheld: str = ""

    def __repr__(self) -> str:  # never print the secret, even in a traceback or a test failure
        return f"FoundKey(key={'***' if self.key else None}, where={self.where!r}, withheld={self.withheld!r})"


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


def _url_of(provider: str, base_url: str) -> str:
    if provider == "deepl":
        return base_url or f"https://{DEEPL_HOSTS[0]}"
    return base_url or DEFAULT_URL


def is_own_host(var: str, provider: str, base_url: str) -> bool:
    """Is this URL one of the hosts the environment variable's provider runs (over https)?"""
    parts = urlsplit(_url_of(provider, base_url))
    return parts.scheme == "https" and (parts.hostname or "") in OWN_HOSTS.get(var, ())


def env_key_allowed(provider: str, base_url: str = "") -> bool:
    """May the provider's environment key go to this URL: its own host, or tied to it by the user."""
    var = env_var_for(provider, base_url)
    return bool(var) and (is_own_host(var, provider, base_url) or account_for(provider, base_url) in _ties())


def find_key(provider: str, base_url: str = "", use_env: bool = False) -> FoundKey:
    """The key for this server (see the module docstring). `use_env`: send the environment key
    to this URL for this call even when it is not the provider's own host (the CLI's
    --use-env-key)."""
    var = env_var_for(provider, base_url)
    withheld = ""
    if var and os.environ.get(var, "").strip():
        if use_env or env_key_allowed(provider, base_url):
            return FoundKey(os.environ[var].strip(), f"env:{var}")
        withheld = var
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
    return FoundKey(value, "file") if value else FoundKey(None, withheld=withheld)


def tie_env_key(provider: str, base_url: str, tied: bool = True) -> None:
    """Let (or stop letting) the provider's environment key go to this URL (the user's choice)."""
    account = account_for(provider, base_url)
    ties = _ties() - {account} | ({account} if tied else set())
    path = config_dir() / TIES_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, sorted(ties), indent=None)


def _ties() -> set[str]:
    path = config_dir() / TIES_FILE
    if not path.exists():
        return set()
    try:
        data = read_json_file(path, "list of servers tied to environment keys",
                              "Environment keys go to their own servers only until it is written again.")
    except UserError as exc:
        log.warning("%s", exc)
        return set()
    return {str(a) for a in data} if isinstance(data, list) else set()


def withheld_message(found: FoundKey, provider: str, base_url: str) -> str:
    """Why the set environment variable was not used for this URL, and what to do."""
    hosts = ", ".join(OWN_HOSTS.get(found.withheld, ())) or "its own servers"
    return (f"${found.withheld} is set, but it is sent only to {hosts}, not to "
            f"{server_label(_url_of(provider, base_url))}. Type a key for this server, or tie "
            f"${found.withheld} to it (Translation settings; --use-env-key on the command line).")


def is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class InsecureTransport(UserError):
    """A key would travel unencrypted to another machine."""


def insecure_url(provider: str, base_url: str, key: str | None) -> bool:
    """Would `key` go in clear (http://) to a host that is not this machine?"""
    url = _url_of(provider, base_url)
    return bool(key) and urlsplit(url).scheme == "http" and not is_loopback(url)


def check_transport(provider: str, base_url: str, key: str | None, allow_insecure: bool = False) -> None:
    """InsecureTransport when `key` would go in clear to another machine and the user has not
    allowed it (the GUI asks first, the CLI needs --allow-insecure-http)."""
    if insecure_url(provider, base_url, key) and not allow_insecure:
        raise InsecureTransport(
            f"{server_label(_url_of(provider, base_url))}: sending the API key over plain http:// to another "
            "machine lets anyone on the way read it. Use an https:// URL, or allow it "
            "(--allow-insecure-http on the command line; the app asks).")


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
    path = key_file()
    if not path.exists():
        return {}
    try:
        data = read_json_file(path, "API key file", "Keys stored there are ignored; enter them again in the settings.")
    except UserError as exc:
        log.warning("%s", exc)
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _write_file(data: dict[str, str]) -> None:
    """Atomically, created with mode 0600 (owner read/write only) before a byte is written."""
    path = key_file()
    if not data and not path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, data, indent=None, mode=0o600)  # its temporary file is 0600 from the start
