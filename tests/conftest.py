"""Fixtures for the whole suite. Every test runs on a machine of its own (`own_machine`):
HOME, the XDG folders, the app's settings / data / model / log folders, an in-memory keyring
and an environment without API keys, so a run never reads or writes the user's files, keys or
settings (tests/test_isolation.py checks it)."""
import os
import re
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("YOLO_OFFLINE", "1")
# The test cache (the llama-server build, the golden checkpoints) is the real user's, kept
# between runs: resolved here, before any test moves HOME.
os.environ.setdefault("HAYAI_TEST_CACHE", str(Path.home() / ".cache" / "hayai-desktop-tests"))
_SESSION_DIR = Path(tempfile.mkdtemp(prefix="hayai-test-session-"))
# app.logs writes its file here when a test runs a command in-process (never the user's log folder)
os.environ.setdefault("HAYAI_LOG_DIR", str(_SESSION_DIR / "logs"))
# Libraries that read their config folder once, at import: ultralytics' settings, matplotlib.
os.environ.setdefault("YOLO_CONFIG_DIR", str(_SESSION_DIR / "ultralytics"))
os.environ.setdefault("MPLCONFIGDIR", str(_SESSION_DIR / "matplotlib"))

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402
from keyring.backend import KeyringBackend  # noqa: E402

# API keys and tokens a test must never see from the user's environment.
SECRET_VARS = re.compile(r"^(.*_API_KEY|.*_AUTH_KEY|HF_TOKEN|HUGGING_FACE_HUB_TOKEN|.*_ACCESS_TOKEN)$")


class MemoryKeyring(KeyringBackend):
    """An in-memory keyring backend (keyring's KeyringBackend API): what a desktop's Secret
    Service or Keychain would be, kept in `items` {(service, account): secret}. Its constructor
    takes an argument, so keyring's own backend discovery never builds one."""

    priority = 1

    def __init__(self, items: dict):
        super().__init__()
        self.items = items

    def get_password(self, service, username):
        return self.items.get((service, username))

    def set_password(self, service, username, password):
        self.items[(service, username)] = password

    def delete_password(self, service, username):
        from keyring.errors import PasswordDeleteError

        if self.items.pop((service, username), None) is None:
            raise PasswordDeleteError(username)


@pytest.fixture(autouse=True)
def own_machine(tmp_path_factory, monkeypatch):
    """The test's own HOME and XDG folders, the app's folders under them, an in-memory keyring
    (the `memory_keyring` fixture), and no API keys in the environment. Yields the home folder."""
    import keyring

    home = tmp_path_factory.mktemp("home")  # beside the test's tmp_path, which stays empty
    folders = {
        "HOME": home, "USERPROFILE": home,
        "XDG_CONFIG_HOME": home / ".config", "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_STATE_HOME": home / ".local" / "state", "XDG_CACHE_HOME": home / ".cache",
        "APPDATA": home / "AppData" / "Roaming", "LOCALAPPDATA": home / "AppData" / "Local",
        "HAYAI_DESKTOP_CONFIG_DIR": home / "hayai" / "config", "HAYAI_DATA_DIR": home / "hayai" / "data",
        "HAYAI_MODELS_DIR": home / "hayai" / "models", "HF_HOME": home / ".cache" / "huggingface",
        "HF_HUB_CACHE": home / ".cache" / "huggingface" / "hub",
    }
    for name, path in folders.items():
        path.mkdir(parents=True, exist_ok=True)
        monkeypatch.setenv(name, str(path))
    for name in list(os.environ):
        if SECRET_VARS.match(name):
            monkeypatch.delenv(name)
    for name in ("HAYAI_FEATURE_CACHE", "HAYAI_FEATURE_CACHE_MB"):  # the user's own feature cache
        monkeypatch.delenv(name, raising=False)
    before = keyring.get_keyring()
    backend = MemoryKeyring({})
    keyring.set_keyring(backend)
    yield home
    keyring.set_keyring(before)


@pytest.fixture
def no_keyring():
    """No keyring backend (headless Linux without a Secret Service): keys go to the key file."""
    import keyring
    from keyring.backends import fail

    keyring.set_keyring(fail.Keyring())
    yield


@pytest.fixture
def memory_keyring():
    """The test's in-memory keyring (the one `own_machine` set): `.items` holds what was stored."""
    import keyring

    return keyring.get_keyring()


def pytest_configure(config):
    """Under pytest-xdist, each of the N worker processes gets its share of the CPU for torch
    (cores // N threads, at least one), so that N workers do not each run a full thread pool."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
    if workers > 1:
        import torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // workers))


def shared_dir() -> Path:
    """../shared beside the checkout (CI lays a copy there)."""
    return ROOT.parent / "shared"


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    """One tiny random checkpoint per variant, written in the published layout."""
    from app.ocr.testing import write_tiny_checkpoint

    base = tmp_path_factory.mktemp("tiny-models")
    return {v: write_tiny_checkpoint(base / v, v, seed=1) for v in ("nova", "v2", "alpha")}


@pytest.fixture
def fake_llm():
    """A loopback OpenAI-compatible server (tests/llm_server.py), closed after the test."""
    from tests.llm_server import FakeLLM

    server = FakeLLM()
    yield server
    server.close()


@pytest.fixture
def fake_deepl():
    from tests.llm_server import FakeDeepL

    server = FakeDeepL()
    yield server
    server.close()


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """The real llama.cpp server (tests/llama.py) with Gemma 3 270M, one for the session;
    the tests that use it are skipped, with one line saying how to get it, when it is not built."""
    from tests.llama import HOW, LlamaServer, found

    if found() is None:
        pytest.skip(HOW)
    server = LlamaServer(ctx=4096, log_dir=tmp_path_factory.mktemp("llama"))
    yield server
    server.stop()


@pytest.fixture
def llama_factory(tmp_path):
    """Start more llama-servers (another context size, one to kill); all stopped after the test."""
    from tests.llama import HOW, LlamaServer, found

    if found() is None:
        pytest.skip(HOW)
    started = []

    def start(**kw):
        started.append(LlamaServer(log_dir=tmp_path, **kw))
        return started[-1]
    yield start
    for s in started:
        s.stop()
