"""The model store (app.models.store) against a real local HTTP server laid out like the Hub."""
from __future__ import annotations

import hashlib
import io
import os
import random
import signal

import huggingface_hub.constants as hf_constants  # imported before any test sets HF_ENDPOINT
import pytest

from app.cli import main
from app.errors import Cancelled, ModelError
from app.models import store
from app.models.store import ModelEntry, ModelFile
from tests.hub_server import FakeHub

REPO = "tester/tiny-ocr"
REV = "0123456789abcdef0123456789abcdef01234567"
WEIGHTS_SIZE = 300_000  # several network reads (<= 64 KiB each)


def _files() -> dict[str, bytes]:
    rng = random.Random(7)
    return {
        "config.json": b'{"model_type": "hayai", "d_model": 64}',
        "model.safetensors": bytes(rng.getrandbits(8) for _ in range(WEIGHTS_SIZE)),
        "tokenizer.json": b'{"version": "1.0", "model": {}}',
        "tokenizer_config.json": b"{}",
        "modeling_hayai.py": b"import os; os.system('echo pwned')\n",  # remote code: never fetched
    }


def _entry(files: dict[str, bytes], name: str = "tiny-ocr") -> ModelEntry:
    return ModelEntry(
        name=name, repo_id=REPO, revision=REV, kind="ocr", description="test model", license=None,
        files=tuple(ModelFile(n, hashlib.sha256(d).hexdigest(), len(d))
                    for n, d in files.items() if not n.endswith(".py")),
    )


@pytest.fixture(scope="module")
def server():
    srv = FakeHub()
    yield srv
    from huggingface_hub.utils import close_session

    close_session()  # drop pooled keep-alive connections before the server goes
    srv.close()


@pytest.fixture
def hubenv(server, tmp_path, monkeypatch):
    """A served tiny model, its manifest entry registered, store and HF cache in tmp_path."""
    server.reset()
    files = _files()
    server.add_repo(REPO, REV, files)
    entry = _entry(files)
    monkeypatch.setitem(store.MODELS, entry.name, entry)
    monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
    monkeypatch.setenv("HAYAI_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    return server, entry, files


def test_manifest_pins_published_models():
    nova = store.get_entry("nova")
    assert nova.name == store.default_model("ocr") == "hayai-ocr-v2.5-nova"
    assert store.default_model("detector") == "comic-speech-bubble-detector"
    assert store.default_model("translation") is None
    assert nova.revision == "e34d7755ed11e626c5ba39544af5d66f20ee57cc"
    assert {f.name for f in nova.files} == {"config.json", "model.safetensors", "tokenizer.json",
                                            "tokenizer_config.json"}
    v2 = store.get_entry("v2")
    assert v2.size == 342 + 622_502_784 + 1_247_253 + 244 and v2.pinned
    assert store.get_entry("JustANormalTinkerer/hayai-ocr-v2") is v2
    bubbles = store.get_entry("bubbles")
    assert bubbles.kind == "detector" and not bubbles.pinned
    assert all(not f.name.endswith(".py") for e in store.MODELS.values() for f in e.files)
    with pytest.raises(ValueError, match="not a data file"):
        ModelEntry("bad", "a/b", REV, (ModelFile("modeling.py", None),), "ocr", "")
    with pytest.raises(ModelError, match="unknown model 'nope'"):
        store.get_entry("nope")


def test_models_dir_env_override(tmp_path, monkeypatch):
    monkeypatch.setenv("HAYAI_MODELS_DIR", str(tmp_path / "m"))
    assert store.models_dir() == tmp_path / "m"
    monkeypatch.delenv("HAYAI_MODELS_DIR")
    assert store.models_dir().name == "models" and "hayai-desktop" in str(store.models_dir())


def test_download_progress_verify_and_never_py(hubenv):
    server, entry, files = hubenv
    seen: list[tuple[str, int, int | None]] = []
    assert hf_constants.ENDPOINT != server.endpoint  # HF_ENDPOINT set after import is still honoured
    path = store.download(entry.name, progress=lambda f, d, t: seen.append((f, d, t)))
    assert path == store.models_dir() / entry.name
    for name, data in files.items():
        if name.endswith(".py"):
            assert not (path / name).exists()
        else:
            assert (path / name).read_bytes() == data
    weights = [(d, t) for f, d, t in seen if f == "model.safetensors"]
    assert len(weights) >= 4, "byte progress is reported per chunk"
    assert [d for d, _ in weights] == sorted(d for d, _ in weights)
    assert weights[-1] == (WEIGHTS_SIZE, WEIGHTS_SIZE) and all(t == WEIGHTS_SIZE for _, t in weights)
    assert server.fetched("model.safetensors"), "weights came through the CDN redirect"
    assert not [r for r in server.requests if r.path.endswith(".py")], "remote code was requested"
    assert all(ok for _, ok, _ in store.verify(entry.name))
    assert store.resolve_model(entry.name) == path
    assert store.installed_models()[entry.name] == (path, "app")
    # A second download is a no-op: nothing fetched again.
    before = len(server.requests)
    store.download(entry)
    assert len(server.requests) == before


def test_corrupted_file_is_rejected_and_deleted(hubenv):
    server, entry, files = hubenv
    bad = bytearray(files["model.safetensors"])
    bad[1000] ^= 0xFF
    server.files[(REPO, REV, "model.safetensors")] = bytes(bad)
    with pytest.raises(ModelError, match=r"model\.safetensors .*corrupt.*deleted"):
        store.download(entry)
    folder = store.models_dir() / entry.name
    assert not (folder / "model.safetensors").exists()
    assert not (folder / "model.safetensors.part").exists()
    with pytest.raises(ModelError, match="hayai-desktop models download tiny-ocr"):
        store.resolve_model(entry.name)


def test_corrupted_file_in_store_is_caught_before_use(hubenv):
    _, entry, _ = hubenv
    path = store.download(entry)
    weights = path / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[5] ^= 1
    weights.write_bytes(bytes(data))
    os.utime(weights, ns=(1, 1))  # a new mtime: the remembered hash does not apply
    assert [ok for f, ok, _ in store.verify(entry) if f == "model.safetensors"] == [False]
    with pytest.raises(ModelError, match=r"model\.safetensors is corrupt.*deleted"):
        store.resolve_model(entry.name)
    assert not weights.exists()


def test_interrupted_transfer_resumes_with_range(hubenv):
    server, entry, files = hubenv
    server.drop_once["model.safetensors"] = WEIGHTS_SIZE // 2
    seen = []
    path = store.download(entry, progress=lambda f, d, t: seen.append((f, d)))
    gets = server.fetched("model.safetensors")
    ranges = [r.headers.get("Range") for r in gets]
    assert ranges[0] is None and ranges[1] == f"bytes={WEIGHTS_SIZE // 2}-", ranges
    assert (path / "model.safetensors").read_bytes() == files["model.safetensors"]
    done = [d for f, d in seen if f == "model.safetensors"]
    assert done == sorted(done) and done[-1] == WEIGHTS_SIZE


def test_cancel_then_resume(hubenv):
    server, entry, files = hubenv
    state = {"bytes": 0}

    def progress(name, done, total):
        if name == "model.safetensors":
            state["bytes"] = done

    with pytest.raises(Cancelled):
        store.download(entry, progress=progress, cancel=lambda: state["bytes"] >= WEIGHTS_SIZE // 3)
    folder = store.models_dir() / entry.name
    part = folder / "model.safetensors.part"
    assert part.exists() and 0 < part.stat().st_size < WEIGHTS_SIZE
    assert not (folder / "model.safetensors").exists()
    with pytest.raises(ModelError, match="not installed"):
        store.resolve_model(entry.name)
    kept = part.stat().st_size
    path = store.download(entry)
    assert server.fetched("model.safetensors")[-1].headers.get("Range") == f"bytes={kept}-"
    assert (path / "model.safetensors").read_bytes() == files["model.safetensors"]
    assert not part.exists()


def test_offline_mode_missing_model_is_a_clear_error(hubenv, monkeypatch):
    server, entry, _ = hubenv
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError, match=r"offline mode.*HF_HUB_OFFLINE.*hayai-desktop models download tiny-ocr"):
        store.download(entry)
    assert server.requests == []
    with pytest.raises(ModelError, match="Download it with: hayai-desktop models download tiny-ocr"):
        store.resolve_model(entry.name)


def test_resolution_order_explicit_then_store_then_hf_cache(hubenv, tmp_path, monkeypatch):
    from huggingface_hub import hf_hub_download

    server, entry, files = hubenv
    # The HF cache, filled by huggingface_hub's own downloader from the same server.
    for f in entry.files:
        hf_hub_download(REPO, f.name, revision=REV, cache_dir=str(tmp_path / "hf"), endpoint=server.endpoint)
    cached = store.resolve_model(entry.name)
    assert cached.parent.name == "snapshots" and cached.name == REV
    assert store.locate(entry)[1] == "hf-cache"
    # A download then uses the HF cache in place: nothing fetched, nothing copied.
    before = len(server.requests)
    assert store.download(entry) == cached
    assert len(server.requests) == before
    assert not (store.models_dir() / entry.name).exists()
    # With part of the model in the app folder, the rest is linked from the cache, not copied.
    (store.models_dir() / entry.name).mkdir(parents=True)
    (store.models_dir() / entry.name / "config.json").write_bytes(files["config.json"])
    app_folder = store.download(entry)
    assert app_folder == store.models_dir() / entry.name and len(server.requests) == before
    weights = app_folder / "model.safetensors"
    assert weights.is_symlink() or weights.stat().st_nlink > 1
    assert weights.read_bytes() == files["model.safetensors"]
    assert store.resolve_model(entry.name) == app_folder
    # An explicit folder wins over both.
    explicit = tmp_path / "my-checkpoint"
    explicit.mkdir()
    assert store.resolve_model(str(explicit)) == explicit.resolve()
    # A bare name still means the manifest even with a same-named folder in the cwd.
    monkeypatch.chdir(tmp_path)
    (tmp_path / entry.name).mkdir()
    assert store.resolve_model(entry.name) == app_folder
    assert store.resolve_model(f"./{entry.name}") == (tmp_path / entry.name).resolve()
    with pytest.raises(ModelError, match="neither an existing model folder"):
        store.resolve_model(str(tmp_path / "nowhere"))
    # remove() empties the app store only: the HF cache copy is found again.
    assert store.remove(entry.name)
    assert store.resolve_model(entry.name) == cached


def test_unpinned_detector_needs_explicit_trust(hubenv, tmp_path):
    server, _, _ = hubenv
    weights = bytes(range(256)) * 40
    server.add_repo("tester/det", REV, {"det.pt": weights})
    det = ModelEntry("tiny-det", "tester/det", REV, (ModelFile("det.pt", None),), "detector", "test")
    with pytest.raises(ModelError, match="no pinned sha256.*--trust-unpinned"):
        store.download(det)
    assert server.requests == []
    path = store.download(det, trust_unpinned=True)
    assert path.name == "det.pt" and path.read_bytes() == weights
    assert store.resolve_model(det) == path  # trusted on first use: its sha256 is recorded
    assert all(ok for _, ok, _ in store.verify(det))
    path.write_bytes(weights[:-1] + b"x")
    with pytest.raises(ModelError, match="det.pt is corrupt"):
        store.resolve_model(det)
    # Removing forgets the trust: the next download must be trusted again.
    store.remove(det)
    with pytest.raises(ModelError, match="--trust-unpinned"):
        store.download(det)
    # A file the user picks explicitly is returned as is.
    mine = tmp_path / "mine.pt"
    mine.write_bytes(b"user-chosen")
    assert store.resolve_model(str(mine)) == mine.resolve()


def test_import_folder_and_remove(hubenv, tmp_path):
    _, entry, files = hubenv
    src = tmp_path / "src"
    src.mkdir()
    for name, data in files.items():
        if name != "tokenizer.json":
            (src / name).write_bytes(data)
    with pytest.raises(ModelError, match="lacks tokenizer.json"):
        store.import_folder(src, entry.name)
    (src / "tokenizer.json").write_bytes(b"tampered")
    with pytest.raises(ModelError, match="tokenizer.json: sha256 .* not imported"):
        store.import_folder(src, entry.name)
    (src / "tokenizer.json").write_bytes(files["tokenizer.json"])
    path = store.import_folder(src, entry.name)
    assert store.resolve_model(entry.name) == path
    assert not (path / "modeling_hayai.py").exists()
    assert store.remove(entry.name) and not path.exists() and not store.remove(entry.name)


def test_cli_list_download_verify(hubenv, capsys):
    server, entry, files = hubenv
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("tiny-ocr"))
    assert " no " in line and "hayai-ocr-v2.5-nova (default)" in out
    # grouped by kind: OCR models under "OCR:", detectors under "Text detectors:"
    lines = out.splitlines()
    ocr_at, det_at = lines.index("OCR:"), lines.index("Text detectors:")
    assert ocr_at < lines.index(line) < det_at < next(i for i, ln in enumerate(lines) if ln.startswith("manga-text-detector"))

    assert main(["models", "download", "tiny-ocr"]) == 0
    out = capsys.readouterr().out
    assert f"model.safetensors: {WEIGHTS_SIZE} / {WEIGHTS_SIZE} bytes" in out
    assert "verified, ready at" in out

    assert main(["models", "list"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("tiny-ocr"))
    assert " yes " in line and str(store.models_dir() / "tiny-ocr") in line

    assert main(["models", "verify", "tiny-ocr"]) == 0
    assert capsys.readouterr().out.count("ok ") == 4

    weights = store.models_dir() / "tiny-ocr" / "model.safetensors"
    weights.write_bytes(b"0" * WEIGHTS_SIZE)
    assert main(["models", "verify", "tiny-ocr"]) == 1
    out = capsys.readouterr().out
    assert "BAD  model.safetensors: sha256 mismatch" in out

    assert main(["models", "download", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hayai-desktop: error: unknown model 'nope'") and len(err.strip().splitlines()) == 1

    assert main(["models", "verify", "v2"]) == 2
    assert "hayai-desktop models download hayai-ocr-v2" in capsys.readouterr().err


def test_cli_download_error_is_one_line(hubenv, capsys):
    server, entry, _ = hubenv
    server.reset()  # the repo is gone from the server
    assert main(["models", "download", entry.name]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "config.json" in err and "Traceback" not in err


class _Terminal(io.StringIO):
    """A stdout that says it is a TTY and presses Ctrl-C at the n-th redraw of the weights' bar."""

    def __init__(self, interrupt_after: int | None = None) -> None:
        super().__init__()
        self.interrupt_after = interrupt_after

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.interrupt_after is not None and text.startswith("\rmodel.safetensors"):
            self.interrupt_after -= 1
            if self.interrupt_after == 0:
                os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C does
        return super().write(text)


def test_cli_tty_progress_bar_and_ctrl_c_resume(hubenv, monkeypatch):
    server, entry, files = hubenv
    term = _Terminal(interrupt_after=3)
    monkeypatch.setattr("sys.stdout", term)
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN when the suite was started in the background
    assert main(["models", "download", entry.name]) == 130
    out = term.getvalue()
    assert "\rmodel.safetensors:" in out and "%|" in out  # the tqdm bar, redrawn
    assert "download cancelled; run `hayai-desktop models download tiny-ocr` to resume." in out
    part = store.models_dir() / entry.name / "model.safetensors.part"
    assert part.exists() and part.stat().st_size < WEIGHTS_SIZE
    assert signal.getsignal(signal.SIGINT) is before  # the handler in force before is restored

    term = _Terminal()
    monkeypatch.setattr("sys.stdout", term)
    assert main(["models", "download", entry.name]) == 0
    assert server.fetched("model.safetensors")[-1].headers.get("Range", "").startswith("bytes=")
    assert (store.models_dir() / entry.name / "model.safetensors").read_bytes() == files["model.safetensors"]


def test_the_store_code_names_no_model():
    """app.models knows kinds, files and hashes; which models exist (and which is the default) is
    manifest data only: no model name, alias or repo appears in the store's code."""
    from pathlib import Path

    import app.models

    names = set(store.MODELS) | set(store.ALIASES) | {e.repo_id for e in store.MODELS.values()}
    names |= {e.repo_id.split("/")[1] for e in store.MODELS.values()}
    folder = Path(app.models.__file__).parent
    for path in sorted(folder.glob("*.py")):
        if path.name == "manifest.py":
            continue
        text = path.read_text(encoding="utf-8")
        found = sorted(n for n in names if f'"{n}"' in text or f"'{n}'" in text)
        assert not found, f"{path.name} names {found}: put it in the manifest"


def test_a_new_kind_of_model_goes_through_the_store_like_any_other(server, tmp_path, monkeypatch, capsys):
    """A translation model (three files, folder) is downloaded, verified, resolved and listed under
    its kind with no code that knows what a translation model is."""
    server.reset()
    files = {"config.json": b'{"model_type": "marian"}', "model.safetensors": os.urandom(70_000),
             "source.spm": b"spm-model-bytes"}
    repo, name = "tester/tiny-mt", "tiny-mt-ja-en"
    server.add_repo(repo, REV, files)
    entry = ModelEntry(name=name, repo_id=repo, revision=REV, kind="translation", description="test MT",
                       files=tuple(ModelFile(n, hashlib.sha256(d).hexdigest(), len(d)) for n, d in files.items()))
    monkeypatch.setitem(store.MODELS, name, entry)
    monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
    monkeypatch.setenv("HAYAI_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")

    path = store.download(name)
    assert path == store.models_dir() / name and path.is_dir()
    assert {p.name for p in path.iterdir()} == set(files)
    assert store.resolve_model(name) == path
    assert [ok for _, ok, _ in store.verify(name)] == [True, True, True]
    assert main(["models", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    row = next(i for i, ln in enumerate(lines) if ln.startswith(name))
    assert lines.index("Translation:") < row and " yes " in lines[row]
