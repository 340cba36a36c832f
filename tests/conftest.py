import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("YOLO_OFFLINE", "1")
# app.logs writes its file here when a test runs a command in-process (never the user's log folder)
os.environ.setdefault("HAYAI_LOG_DIR", str(Path(tempfile.mkdtemp(prefix="hayai-test-logs-"))))

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402


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
