"""API keys (app.core.config.api_keys): environment first, then keyring, then a user-only file; per
server; never in settings.json."""
import json
import os
import stat
from pathlib import Path

import keyring
import pytest

from app.core.config import api_keys
from app.core.config.settings import AppSettings, save_settings


def test_without_a_keyring_the_key_file_is_user_only(tmp_path, no_keyring):
    assert not api_keys.keyring_available()
    assert api_keys.store_key("openai", "http://127.0.0.1:9/v1", "sk-secret-1") == "file"
    mode = stat.S_IMODE(os.stat(api_keys.key_file()).st_mode)
    assert mode == 0o600
    found = api_keys.find_key("openai", "http://127.0.0.1:9/v1/")
    assert found.key == "sk-secret-1" and found.where == "file" and "sk-secret" not in repr(found)
    assert api_keys.find_key("openai", "http://127.0.0.1:10/v1").key is None  # per server
    api_keys.delete_key("openai", "http://127.0.0.1:9/v1")
    assert api_keys.find_key("openai", "http://127.0.0.1:9/v1").key is None


def test_keyring_is_preferred_and_the_file_emptied(memory_keyring):
    from keyring.backends import fail

    keyring.set_keyring(fail.Keyring())
    assert api_keys.store_key("deepl", "", "old") == "file"
    keyring.set_keyring(memory_keyring)
    assert api_keys.store_key("deepl", "", "dk-123:fx") == "keyring"
    assert memory_keyring.items == {("hayai-desktop", "deepl:api.deepl.com"): "dk-123:fx"}
    assert json.loads(api_keys.key_file().read_text()) == {}
    assert api_keys.find_key("deepl").where == "keyring"


def test_environment_wins_and_local_servers_read_none(monkeypatch, no_keyring):
    api_keys.store_key("openai", "https://api.openai.com/v1", "stored")
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    assert api_keys.find_key("openai", "https://api.openai.com/v1") == api_keys.FoundKey("from-env", "env:OPENAI_API_KEY")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "ds")
    assert api_keys.find_key("openai", "https://api.deepseek.com/v1").where == "env:DEEPSEEK_API_KEY"
    # the OpenAI key is never sent to a local server (Ollama etc.)
    assert api_keys.find_key("openai", "http://localhost:11434/v1").key is None


def test_settings_never_hold_a_key(tmp_path, no_keyring):
    api_keys.store_key("openai", "https://api.openai.com/v1", "sk-never-in-settings")
    save_settings(AppSettings(translation_provider="openai"))
    text = (Path(os.environ["HAYAI_DESKTOP_CONFIG_DIR"]) / "settings.json").read_text()
    assert "sk-never" not in text


def test_an_environment_key_goes_only_to_its_providers_own_hosts(monkeypatch, no_keyring):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-openai")
    monkeypatch.setenv("DEEPL_AUTH_KEY", "dk-env:fx")
    assert api_keys.find_key("openai", "").key == "sk-env-openai"  # api.openai.com
    for url in ("http://127.0.0.1:8080/v1", "https://proxy.example.com/v1", "https://api.openai.com.evil.example/v1",
                "http://api.openai.com/v1", "https://openrouter.ai/api/v1"):
        found = api_keys.find_key("openai", url)
        assert found.key is None and found.withheld in ("OPENAI_API_KEY", ""), url
    found = api_keys.find_key("openai", "https://proxy.example.com/v1")
    assert found.withheld == "OPENAI_API_KEY"
    message = api_keys.withheld_message(found, "openai", "https://proxy.example.com/v1")
    assert "sent only to api.openai.com" in message and "proxy.example.com" in message and "sk-env" not in message
    assert api_keys.find_key("openai", "https://proxy.example.com/v1", use_env=True).key == "sk-env-openai"  # --use-env-key
    # DeepL: its two hosts only
    assert api_keys.find_key("deepl", "").key == "dk-env:fx"
    assert api_keys.find_key("deepl", "https://api-free.deepl.com").key == "dk-env:fx"
    assert api_keys.find_key("deepl", "http://127.0.0.1:9999").key is None
    # tied by the user to one URL: sent there, and only there; untied: withheld again
    api_keys.tie_env_key("openai", "http://127.0.0.1:8080/v1")
    assert api_keys.find_key("openai", "http://127.0.0.1:8080/v1/").where == "env:OPENAI_API_KEY"
    assert api_keys.find_key("openai", "http://127.0.0.1:8081/v1").key is None
    api_keys.tie_env_key("openai", "http://127.0.0.1:8080/v1", tied=False)
    assert api_keys.find_key("openai", "http://127.0.0.1:8080/v1").key is None
    # a key stored for one URL stays there (scheme, host, port and path)
    api_keys.store_key("openai", "https://proxy.example.com/v1", "sk-typed")
    assert api_keys.find_key("openai", "https://proxy.example.com/v1").key == "sk-typed"
    assert api_keys.find_key("openai", "http://proxy.example.com/v1").key is None


def test_a_key_over_plain_http_to_another_machine_needs_a_yes():
    for url in ("http://192.168.1.20:8000/v1", "http://llm.example.com/v1", "http://[2001:db8::1]:80/v1"):
        with pytest.raises(api_keys.InsecureTransport, match="plain http://"):
            api_keys.check_transport("openai", url, "sk-x")
        api_keys.check_transport("openai", url, "sk-x", allow_insecure=True)
        api_keys.check_transport("openai", url, None)  # no key: nothing to leak
    for url in ("http://127.0.0.1:8000/v1", "http://localhost:11434/v1", "http://[::1]:1234/v1", "https://x.example/v1"):
        api_keys.check_transport("openai", url, "sk-x")


def test_translate_command_withholds_the_env_key_and_refuses_clear_text(fake_llm, tmp_path, monkeypatch, capsys,
                                                                       no_keyring):
    from app.cli import main
    from app.core.exports.json_txt import export_json
    from tests.translate_data import make_project

    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    src = tmp_path / "in.json"
    export_json(make_project(texts=[["ありがとう"]]), src)
    base = ["translate", str(src), "--provider", "openai", "--model", "m", "--to", "en", "--timeout", "5",
            "--retries", "0"]
    main([*base, "--base-url", fake_llm.base_url])
    err = capsys.readouterr().err
    assert "$OPENAI_API_KEY is set, but it is sent only to api.openai.com" in err
    assert fake_llm.seen and all(fake_llm.key not in str(dict(s.headers)) for s in fake_llm.seen)
    fake_llm.seen.clear()
    api_keys.store_key("openai", "http://10.255.255.1:9/v1", "sk-stored-for-lan")
    assert main([*base, "--base-url", "http://10.255.255.1:9/v1"]) == 2
    err = capsys.readouterr().err
    assert "plain http://" in err and "--allow-insecure-http" in err and "sk-stored" not in err
    assert not fake_llm.seen
