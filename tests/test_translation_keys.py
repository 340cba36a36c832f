"""API keys (app.core.keys): environment first, then keyring, then a user-only file; per
server; never in settings.json."""
import json
import os
import stat

import keyring
import pytest
from keyring.backend import KeyringBackend

from app.core import keys
from app.core.settings import AppSettings, save_settings


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("HAYAI_DESKTOP_CONFIG_DIR", str(tmp_path / "config"))
    for var in ("OPENAI_API_KEY", "DEEPL_AUTH_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.delenv(var, raising=False)


class MemoryKeyring(KeyringBackend):
    """A working keyring backend kept in memory (what a desktop's Secret Service would be)."""

    priority = 10

    def __init__(self, items: dict):  # a required argument: keyring's own discovery never builds one
        super().__init__()
        self.items = items

    def get_password(self, service, username):
        return self.items.get((service, username))

    def set_password(self, service, username, password):
        self.items[(service, username)] = password

    def delete_password(self, service, username):
        if self.items.pop((service, username), None) is None:
            raise keyring.errors.PasswordDeleteError(username)


@pytest.fixture
def memory_keyring():
    before = keyring.get_keyring()
    backend = MemoryKeyring({})
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(before)


@pytest.fixture
def no_keyring():
    """No keyring backend (as on this machine and headless Linux without a Secret Service)."""
    from keyring.backends import fail

    before = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(before)


def test_without_a_keyring_the_key_file_is_user_only(tmp_path, no_keyring):
    assert not keys.keyring_available()
    assert keys.store_key("openai", "http://127.0.0.1:9/v1", "sk-secret-1") == "file"
    mode = stat.S_IMODE(os.stat(keys.key_file()).st_mode)
    assert mode == 0o600
    found = keys.find_key("openai", "http://127.0.0.1:9/v1/")
    assert found.key == "sk-secret-1" and found.where == "file" and "sk-secret" not in repr(found)
    assert keys.find_key("openai", "http://127.0.0.1:10/v1").key is None  # per server
    keys.delete_key("openai", "http://127.0.0.1:9/v1")
    assert keys.find_key("openai", "http://127.0.0.1:9/v1").key is None


def test_keyring_is_preferred_and_the_file_emptied(memory_keyring):
    from keyring.backends import fail

    keyring.set_keyring(fail.Keyring())
    assert keys.store_key("deepl", "", "old") == "file"
    keyring.set_keyring(memory_keyring)
    assert keys.store_key("deepl", "", "dk-123:fx") == "keyring"
    assert memory_keyring.items == {("hayai-desktop", "deepl:api.deepl.com"): "dk-123:fx"}
    assert json.loads(keys.key_file().read_text()) == {}
    assert keys.find_key("deepl").where == "keyring"


def test_environment_wins_and_local_servers_read_none(monkeypatch, no_keyring):
    keys.store_key("openai", "https://api.openai.com/v1", "stored")
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    assert keys.find_key("openai", "https://api.openai.com/v1") == keys.FoundKey("from-env", "env:OPENAI_API_KEY")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "ds")
    assert keys.find_key("openai", "https://api.deepseek.com/v1").where == "env:DEEPSEEK_API_KEY"
    # the OpenAI key is never sent to a local server (Ollama etc.)
    assert keys.find_key("openai", "http://localhost:11434/v1").key is None


def test_settings_never_hold_a_key(tmp_path, no_keyring):
    keys.store_key("openai", "https://api.openai.com/v1", "sk-never-in-settings")
    save_settings(AppSettings(translation_provider="openai"))
    text = (tmp_path / "config" / "settings.json").read_text()
    assert "sk-never" not in text
