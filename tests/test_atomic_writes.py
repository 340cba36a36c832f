"""One atomic writer (app.atomic) for every file the app writes: settings, the model store's side
files, projects, exports, downloads. Each write is fsynced before it replaces the old file, and a
failed write leaves the old file and no temporary file behind."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from app import atomic
from app.core.config.settings import AppSettings, load_settings, save_settings
from app.core.document.types import Page, Project
from app.core.exports.json_txt import export_json
from app.core.project.files import save_project
from app.models import store

APP = Path(__file__).resolve().parents[1] / "app"


@pytest.fixture
def fsynced(monkeypatch):
    """The paths os.fsync was called on (the real os.fsync still runs)."""
    seen: list[str] = []
    real = os.fsync

    def spy(fd) -> None:
        try:
            seen.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            seen.append(str(fd))
        real(fd)

    monkeypatch.setattr(atomic.os, "fsync", spy)
    return seen


def _leftovers(folder: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to name the fsynced file")
def test_every_writer_fsyncs_the_new_file(tmp_path, monkeypatch, fsynced):
    monkeypatch.setenv("HAYAI_MODELS_DIR", str(tmp_path / "models"))
    save_settings(AppSettings(patches=512), tmp_path / "settings.json")
    store._write_json(store.models_dir() / ".trusted.json", {"a/b": "0" * 64})
    project = Project(source=str(tmp_path / "vol"), pages=[Page(name="p1.png")])
    (tmp_path / "vol").mkdir()
    save_project(project)
    export_json(project, tmp_path / "out.json")
    written = [Path(p) for p in fsynced]
    # the temporary file of each write was fsynced (then renamed), and its folder after it
    for target in (tmp_path / "settings.json", store.models_dir() / ".trusted.json", tmp_path / "out.json"):
        assert any(p.parent == target.parent and p.name.startswith(f".{target.name}.") for p in written), (
            target, written)
        assert target.parent in written
    assert load_settings(tmp_path / "settings.json").patches == 512
    assert _leftovers(tmp_path, {"settings.json", "models", "vol", "out.json"}) == []


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    monkeypatch.setenv("HAYAI_MODELS_DIR", str(tmp_path / "models"))
    side = store.models_dir() / ".sha256.json"
    store._write_json(side, {"old": [1, 2, "x"]})
    with pytest.raises(TypeError):
        store._write_json(side, {"new": object()})  # not JSON
    assert store._read_json(side) == {"old": [1, 2, "x"]}
    assert _leftovers(side.parent, {side.name}) == []

    target = tmp_path / "export.txt"
    target.write_text("previous", encoding="utf-8")

    def fails_half_way(stream) -> None:
        stream.write("half of it")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        atomic.atomic_write_text(target, fails_half_way)
    assert target.read_text(encoding="utf-8") == "previous"
    assert _leftovers(tmp_path, {"export.txt", "models"}) == []


def test_no_other_module_writes_files_its_own_way():
    """os.replace / mkstemp appear in app.atomic only. Two renames are not writes: the store swaps
    a whole imported model folder into place, and a damaged settings file is moved aside."""
    allowed = {("models/store.py", "os.replace(staging, store)"), ("core/config/settings.py", "os.replace(path, bad)")}
    found = []
    for path in sorted(APP.rglob("*.py")):
        rel = path.relative_to(APP).as_posix()
        if rel == "atomic.py":
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if re.search(r"\bos\.replace\(|\bmkstemp\(|NamedTemporaryFile\(|\bos\.rename\(", line):
                if not any(rel == a and snippet in line for a, snippet in allowed):
                    found.append(f"{rel}: {line.strip()}")
    assert not found, "write through app.atomic instead:\n" + "\n".join(found)
