"""Volumes of a library, export names, the batch log and the state of half-read volumes (no models)."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from app.atomic import append_line, read_lines
from app.core.batch.chunks import ChunkPayload, MemorySource, chunk_bounds, read_payload
from app.core.batch.journal import BatchLog, PartialVolume, is_complete, lock_out_dir
from app.core.batch.library import find_volumes
from app.core.document.types import Block, Page, Project
from app.core.exports.json_txt import export_json
from app.core.reading.pipeline import PipelineSettings
from app.core.reading.spec import PipelineSpec
from app.core.sources.source import open_source
from app.errors import ImageError, UserError

ROOT = Path(__file__).resolve().parents[2]
PNG = (ROOT / "app" / "resources" / "samples").glob("*.png")


def _page(folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(b"not decoded here")


def _cbz(path: Path, names=("001.png",)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        for n in names:
            z.writestr(n, b"x")


def test_volumes_are_found_recursively_in_natural_order(tmp_path):
    lib = tmp_path / "lib"
    _page(lib / "Series B" / "vol 10", "1.png")
    _page(lib / "Series B" / "vol 2", "1.png")
    _page(lib / "Series B" / "vol 2" / "extras", "1.png")  # part of vol 2, as `ocr` reads it
    _cbz(lib / "Series A" / "vol 1.cbz")
    _cbz(lib / "Series A" / "vol 3.ZIP")
    _page(lib / "Series C" / "vol 1" / "ch 1", "1.png")  # a volume of chapter folders: the chapters
    _page(lib / "Series C" / "vol 1" / "ch 2", "1.png")
    _page(lib / ".trash" / "old", "1.png")
    _cbz(lib / "__MACOSX" / "._vol.cbz")
    (lib / "readme.txt").write_text("x")
    keys = [v.key for v in find_volumes([str(lib)])]
    assert keys == ["Series A/vol 1", "Series A/vol 3", "Series B/vol 2", "Series B/vol 10",
                    "Series C/vol 1/ch 1", "Series C/vol 1/ch 2"]
    vol = find_volumes([str(lib)])[0]
    assert vol.path == lib / "Series A" / "vol 1.cbz"
    assert vol.export_path(tmp_path / "out") == tmp_path / "out" / "Series A" / "vol 1.json"


def test_volumes_given_one_by_one_and_name_clashes(tmp_path):
    _page(tmp_path / "vol 1", "1.png")
    _cbz(tmp_path / "vol 1.cbz")
    _cbz(tmp_path / "b" / "vol 2.cbz")
    got = find_volumes([str(tmp_path / "vol 1"), str(tmp_path / "b" / "vol 2.cbz"), str(tmp_path / "vol 1")])
    assert [v.key for v in got] == ["vol 1", "vol 2"]  # a volume named twice is read once
    # in one library, a folder and an archive of the same name: the archive keeps its extension
    assert [v.key for v in find_volumes([str(tmp_path)])] == ["b/vol 2", "vol 1", "vol 1.cbz"]
    with pytest.raises(UserError, match="would write the same export"):  # from two libraries
        find_volumes([str(tmp_path / "vol 1"), str(tmp_path / "vol 1.cbz")])
    with pytest.raises(UserError, match="no such folder"):
        find_volumes([str(tmp_path / "nowhere")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="no volumes found"):
        find_volumes([str(tmp_path / "empty")])
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(UserError, match="not a folder of volumes"):
        find_volumes([str(tmp_path / "notes.txt")])


def test_a_log_line_torn_by_a_crash_is_skipped_and_the_next_starts_clean(tmp_path):
    log = tmp_path / "batch.jsonl"
    append_line(log, '{"volume": "a"}')
    with open(log, "ab") as f:
        f.write(b'{"volume": "b", "pa')  # the process died here
    assert read_lines(log) == ['{"volume": "a"}']
    append_line(log, '{"volume": "c"}')  # on a line of its own, after the fragment
    assert read_lines(log) == ['{"volume": "a"}', '{"volume": "b", "pa', '{"volume": "c"}']
    assert list(BatchLog(tmp_path).records) == ["a", "c"]  # the fragment is not JSON: skipped
    assert read_lines(tmp_path / "absent.jsonl") == []
    with pytest.raises(ValueError):
        append_line(log, "two\nlines")


def _project(names, error_on=()) -> Project:
    pages = [Page(name=n, width=10, height=10, processed=n not in error_on, error="bad" if n in error_on else None,
                  blocks=(Block(id="b1", order=1, kind="bubble", box=(1.0, 2.0, 3.0, 4.0), ocr_text="あ"),))
             for n in names]
    return Project(source="/x", pages=pages)


def test_complete_means_same_settings_and_every_current_page_exported(tmp_path):
    settings = {"patches": 384}
    export = tmp_path / "v.json"
    export_json(_project(["1.png", "2.png"], error_on=["2.png"]), export)
    record = {"volume": "v", "settings": settings, "errors": 1}
    assert is_complete(record, settings, export, ["1.png", "2.png"])
    assert not is_complete(None, settings, export, ["1.png", "2.png"])
    assert not is_complete(record, {"patches": 256}, export, ["1.png", "2.png"])
    assert not is_complete(record, settings, export, ["1.png", "2.png", "3.png"])  # a page was added
    assert not is_complete(record, settings, export, ["1.png", "2.png"], retry_errors=True)
    assert not is_complete(record, settings, tmp_path / "missing.json", ["1.png", "2.png"])
    export.write_text(export.read_text(encoding="utf-8")[:50], encoding="utf-8")  # damaged
    assert not is_complete(record, settings, export, ["1.png", "2.png"])

    log = BatchLog(tmp_path)
    log.append({"volume": "v", "pages": 1})
    log.append({"volume": "v", "pages": 2})
    assert BatchLog(tmp_path).records["v"]["pages"] == 2  # the last line of a volume counts
    assert "finished_at" in BatchLog(tmp_path).records["v"]


def test_two_runs_cannot_write_to_one_folder_at_once(tmp_path):
    with lock_out_dir(tmp_path):
        with pytest.raises(UserError, match="another `hayai-desktop batch` is writing"):
            with lock_out_dir(tmp_path):
                pass
    with lock_out_dir(tmp_path):  # free again once the first run is over
        pass


def test_the_chunks_of_a_half_read_volume_survive_a_restart_with_the_same_header(tmp_path):
    header = {"settings": {"patches": 384}, "chunk_pages": 2, "pages": ["1", "2", "3"]}
    partial = PartialVolume(tmp_path, "Series/vol 1", header)
    pages = _project(["3"]).pages
    partial.add(1, pages)
    again = PartialVolume(tmp_path, "Series/vol 1", header)
    assert again.done == {1} and again.pages() == pages  # Page values round-trip exactly
    other = PartialVolume(tmp_path, "Series/vol 1", {**header, "settings": {"patches": 256}})
    assert other.done == set() and not other.path.exists()  # other settings: start over
    assert chunk_bounds(5, 2) == [(0, 2), (2, 4), (4, 5)] and chunk_bounds(0, 4) == []


def test_a_chunk_travels_as_bytes_and_fails_as_its_source_would(tmp_path):
    folder = tmp_path / "vol"
    folder.mkdir()
    sample = next(iter(sorted(PNG)))
    (folder / "a.png").write_bytes(sample.read_bytes())
    (folder / "b.png").write_bytes(b"\x89PNG broken")
    with open_source(folder) as source:
        payload = read_payload(source, 0, 0, ["a.png", "b.png"])
        expected = source.load("a.png")
        (folder / "a.png").unlink()  # the worker never reads the driver's disk
        memory = MemorySource(payload)
        assert memory.load("a.png").tobytes() == expected.tobytes()
        with pytest.raises(ImageError) as local:
            source.load("b.png")
        with pytest.raises(ImageError) as remote:
            memory.load("b.png")
        assert str(remote.value) == str(local.value)
        missing = read_payload(source, 0, 0, ["a.png"])  # unreadable on the driver: the error travels
        assert missing.pages[0].data is None
        with pytest.raises(ImageError) as far:
            MemorySource(missing).load("a.png")
        with pytest.raises(ImageError) as near:
            source.load("a.png")
        assert str(far.value) == str(near.value)
    assert isinstance(payload, ChunkPayload) and payload.nbytes == sample.stat().st_size + len(b"\x89PNG broken")




def test_a_spec_sent_to_workers_names_models_by_absolute_path_or_store_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = PipelineSpec(model="models/my-ocr", detector="bubbles", settings=PipelineSettings(patches=256)).portable()
    assert spec.model == str(tmp_path / "models" / "my-ocr") and spec.detector == "comic-speech-bubble-detector"
    assert spec.settings.patches == 256
    fast = PipelineSpec(model="hayai-ocr-v2.5-nova", device="cuda", settings=PipelineSettings(batch_size=64))
    assert PipelineSpec(model="nova").output_settings() == fast.output_settings()  # same output
    assert PipelineSpec(settings=PipelineSettings(order="ltr")).output_settings() != fast.output_settings()
