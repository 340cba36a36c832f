"""The offline backend: a tiny MarianMT (random weights, sentencepiece trained here) served by
a fake Hub, downloaded through the model store like the OCR models (trust on first use: the
manifest has no hashes for these yet), loaded from safetensors and run in batches on the CPU."""
import threading

import pytest

from app.errors import Cancelled, ModelError
from app.models import store
from app.models.manifest import MODELS
from app.translate import Segment, TranslatorSettings, make_translator
from tests.hub_server import FakeHub
from tests.translate_marian import JA, write_tiny_marian


@pytest.fixture(scope="module")
def tiny_marian(tmp_path_factory):
    folder = tmp_path_factory.mktemp("marian") / "opus-mt-ja-en"
    return folder, write_tiny_marian(folder)


@pytest.fixture
def store_env(tmp_path, monkeypatch):
    monkeypatch.setenv("HAYAI_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)


def test_download_through_the_store_then_translate(tiny_marian, store_env, monkeypatch):
    _folder, files = tiny_marian
    entry = MODELS["opus-mt-ja-en"]
    assert entry.kind == "translation" and not any(f.name.endswith((".bin", ".pt", ".py")) for f in entry.files)
    hub = FakeHub()
    try:
        hub.add_repo(entry.repo_id, entry.revision, files)
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        with pytest.raises(ModelError, match="trust-unpinned"):
            store.download("ja-en")  # unpinned: only on the user's say-so
        path = store.download("ja-en", trust_unpinned=True)
    finally:
        hub.close()
    assert path == store.models_dir() / "opus-mt-ja-en"
    # the store resolves it from now on (hashes recorded on first use) and the backend loads it
    settings = TranslatorSettings(provider="offline", source_lang="ja", target_lang="en", device="cpu", batch_size=3)
    tr = make_translator(settings)
    segments = [Segment(f"b{i}", t) for i, t in enumerate(JA)]
    result = tr.translate_page(segments)
    assert set(result.texts) | set(result.missing) == {s.id for s in segments}
    assert result.requests == 3 and tr.batches == 3  # 8 segments in batches of 3
    assert tr.name == "opus-mt-ja-en" and str(tr.device) == "cpu"
    # the same text gives the same output whatever batch it is in (padding is masked)
    alone = tr.translate_texts([JA[2]])
    assert alone == [result.texts.get("b2", "")]
    tr.close()


def test_a_changed_file_is_refused(tiny_marian, store_env, monkeypatch, tmp_path):
    _folder, files = tiny_marian
    entry = MODELS["opus-mt-ja-en"]
    hub = FakeHub()
    try:
        hub.add_repo(entry.repo_id, entry.revision, files)
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        path = store.download(entry, trust_unpinned=True)
    finally:
        hub.close()
    (path / "model.safetensors").write_bytes(b"\0" * 64)  # damaged after the trusted download
    with pytest.raises(ModelError, match="corrupt"):
        store.resolve_model("opus-mt-ja-en")


def test_a_folder_with_only_pickle_weights_is_refused(tiny_marian, tmp_path):
    folder, _files = tiny_marian
    bad = tmp_path / "pickled"
    bad.mkdir()
    for name in ("config.json", "source.spm", "target.spm", "vocab.json"):
        (bad / name).write_bytes((folder / name).read_bytes())
    (bad / "pytorch_model.bin").write_bytes(b"not loaded")
    settings = TranslatorSettings(provider="offline", model=str(bad), device="cpu")
    with pytest.raises(ModelError, match="pytorch_model.bin, a pickle"):
        make_translator(settings)


def test_no_model_for_the_pair_says_so():
    from app.translate import TranslationError

    with pytest.raises(TranslationError, match="Japanese, Korean and Chinese to English"):
        make_translator(TranslatorSettings(provider="offline", source_lang="fr", target_lang="de"))


def test_cancel_between_batches(tiny_marian):
    folder, _files = tiny_marian
    tr = make_translator(TranslatorSettings(provider="offline", model=str(folder), device="cpu", batch_size=1))
    calls = {"n": 0}

    def cancel():
        calls["n"] += 1
        return tr.batches >= 2

    with pytest.raises(Cancelled):
        tr.translate_page([Segment(f"b{i}", t) for i, t in enumerate(JA)], cancel=cancel)
    assert tr.batches == 2
    flag = threading.Event()
    flag.set()
    with pytest.raises(Cancelled):
        tr.translate_page([Segment("b1", JA[0])], cancel=flag.is_set)
    tr.close()
