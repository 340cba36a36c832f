"""`hayai-desktop batch` without Ray: the exports `ocr` writes, one line per volume, resume."""
from __future__ import annotations

import fcntl
import json
import os
import pty
import shutil
import struct
import termios
from pathlib import Path

import pytest

from app.cli import _subcommand_parser, main
from app.commands import batch as batch_command
from tests.batch.conftest import MODEL_ARGS, VOLUMES, read_export


def _exports(out: Path) -> dict[str, dict]:
    return {key: read_export(out / f"{key}.json") for key in VOLUMES if (out / f"{key}.json").exists()}


def _log(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "batch.jsonl").read_text(encoding="utf-8").splitlines()]


def _run_stopping(library: Path, out: Path, stop) -> None:
    """A batch run whose observer raises KeyboardInterrupt (as Ctrl+C would) when stop(event)."""
    args = _subcommand_parser("batch").parse_args(["batch", str(library), "--out", str(out)] + MODEL_ARGS)

    def observer(event):
        if stop(event):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        batch_command.run(args, observer)


def test_batch_writes_what_ocr_writes_for_each_volume(library, ocr_reference, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["batch", str(library), "--out", str(out)] + MODEL_ARGS) == 1  # one page is unreadable
    err = capsys.readouterr().err
    assert _exports(out) == ocr_reference
    assert "vol 03: page page_0001.png" in err and "Traceback" not in err
    assert "3 volumes: 3 written, 0 complete already, 0 failed; 12 pages read (1 unreadable)" in err

    log = _log(out)
    assert [r["volume"] for r in log] == list(VOLUMES)
    vol3 = log[2]
    assert vol3["export"] == "vol 03.json" and vol3["source"] == str(library / "vol 03")
    assert (vol3["pages"], vol3["errors"]) == (4, 1)
    assert vol3["blocks"] == sum(len(p["blocks"]) for p in ocr_reference["vol 03"]["pages"]) > 0
    assert vol3["model"] == "hayai-demo-ocr" and vol3["detector"] == "hayai-demo-detector"
    assert vol3["settings"]["patches"] == 128 and vol3["settings"]["order"] == "rtl" and vol3["seconds"] > 0
    assert not (out / ".hayai-batch").exists()

    # run again: everything is complete, nothing is read or rewritten
    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("*.json")}
    assert main(["batch", str(library), "--out", str(out)] + MODEL_ARGS) == 0
    err = capsys.readouterr().err
    assert "3 complete already" in err and "nothing left to read" in err and "1 with unread pages" in err
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*.json")} == stamps
    assert len(_log(out)) == 3


def test_resume_after_a_stop_after_the_first_volume(library, ocr_reference, tmp_path, pages_read, capsys):
    out = tmp_path / "out"
    _run_stopping(library, out, lambda e: e.kind == "volume")
    assert "Run the same command again" in capsys.readouterr().err
    assert list(_exports(out)) == ["Series A/vol 01"] and len(_log(out)) == 1
    first_run = len(pages_read)
    pages_read.clear()

    assert main(["batch", str(library), "--out", str(out)] + MODEL_ARGS) == 1
    assert "vol 01" not in {folder for folder, _ in pages_read}, "the finished volume was read again"
    assert first_run >= 5 and len(pages_read) == 7  # vol 02 (3 pages) and vol 03 (4 pages)
    assert _exports(out) == ocr_reference
    assert [r["volume"] for r in _log(out)] == list(VOLUMES)  # one line per volume


def test_a_volume_cut_off_halfway_goes_on_from_the_pages_it_had(library, ocr_reference, tmp_path, pages_read):
    out = tmp_path / "out"
    _run_stopping(library / "Series A", out, lambda e: e.kind == "chunk")  # after pages 1-4 of vol 01
    assert not (out / "vol 01.json").exists()
    (state,) = (out / ".hayai-batch").iterdir()
    with open(state, "ab") as f:  # a line torn by a crash in the middle of a write
        f.write(b'{"chunk": 1, "pages": [{"na')
    pages_read.clear()

    assert main(["batch", str(library / "Series A"), "--out", str(out)] + MODEL_ARGS) == 0
    assert [n for folder, n in pages_read if folder == "vol 01"] == ["page_0004.png"]
    assert {key: read_export(out / f"{key}.json") for key in ("vol 01", "vol 02")} == \
        {key: ocr_reference[f"Series A/{key}"] for key in ("vol 01", "vol 02")}
    assert not (out / ".hayai-batch").exists()


def test_what_is_read_again(library, tmp_path, pages_read, capsys):
    lib = tmp_path / "lib"
    shutil.copytree(library / "vol 03", lib / "vol 03")
    shutil.copy(library / "Series A" / "vol 02.cbz", lib / "vol 02.cbz")
    out = tmp_path / "out"
    run = ["batch", str(lib), "--out", str(out)] + MODEL_ARGS
    assert main(run) == 1
    assert main(run) == 0 and len(pages_read) == 7  # complete: nothing read

    pages_read.clear()  # a page added to a volume: that volume is read again
    shutil.copy(lib / "vol 03" / "page_0000.png", lib / "vol 03" / "page_0009.png")
    assert main(run) == 1
    assert {folder for folder, _ in pages_read} == {"vol 03"} and len(pages_read) == 5
    assert len(read_export(out / "vol 03.json")["pages"]) == 5

    pages_read.clear()  # --retry-errors: the volumes with unread pages
    assert main(run + ["--retry-errors"]) == 1
    assert {folder for folder, _ in pages_read} == {"vol 03"}

    pages_read.clear()  # other settings: everything
    assert main(run + ["--order", "ltr"]) == 1
    assert {folder for folder, _ in pages_read} == {"vol 03", "vol 02.cbz"}
    assert read_export(out / "vol 02.json")["order"] == "ltr"
    log = _log(out)
    assert [r["volume"] for r in log] == ["vol 02", "vol 03", "vol 03", "vol 03", "vol 02", "vol 03"]
    assert log[-1]["settings"]["order"] == "ltr"
    capsys.readouterr()


def test_usage_errors_are_one_line(library, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    assert main(["batch", str(library), "--out", str(out), "--workers", "2"] + MODEL_ARGS) == 2
    assert "--workers need --ray" in capsys.readouterr().err
    assert main(["batch", str(tmp_path / "nowhere"), "--out", str(out)] + MODEL_ARGS) == 2
    assert "nowhere: no such folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["batch", str(tmp_path / "empty"), "--out", str(out)] + MODEL_ARGS) == 2
    assert "no volumes found" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    assert main(["batch", str(library), "--out", str(tmp_path / "file")] + MODEL_ARGS) == 2
    assert "is a file" in capsys.readouterr().err
    models = tmp_path / "no-models"
    monkeypatch.setenv("HAYAI_MODELS_DIR", str(models))
    assert main(["batch", str(library), "--out", str(out), "--model", "nova"] + MODEL_ARGS[2:]) == 2
    assert "hayai-desktop models download hayai-ocr-v2.5-nova" in capsys.readouterr().err
    monkeypatch.setitem(__import__("sys").modules, "ray", None)  # as if Ray were not installed
    assert main(["batch", str(library), "--out", str(out), "--ray"] + MODEL_ARGS) == 2
    assert "pip install 'hayai-desktop[cluster]'" in capsys.readouterr().err


def test_one_progress_bar_for_the_library(library, tmp_path, monkeypatch):
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a 100-column terminal
    with os.fdopen(slave, "w") as tty:
        monkeypatch.setattr("sys.stderr", tty)
        assert main(["batch", str(library / "Series A" / "vol 02.cbz"), "--out", str(tmp_path / "o")] + MODEL_ARGS) == 0
    drawn = os.read(master, 65536).decode()
    os.close(master)
    assert "library" in drawn and "3/3" in drawn and "page" in drawn


def test_a_damaged_archive_is_reported_and_the_other_volumes_are_read(library, ocr_reference, tmp_path, capsys):
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(library / "Series A" / "vol 02.cbz", lib / "good.cbz")
    (lib / "cut.cbz").write_bytes((library / "Series A" / "vol 02.cbz").read_bytes()[:300])  # a cut download
    out = tmp_path / "out"
    assert main(["batch", str(lib), "--out", str(out)] + MODEL_ARGS) == 1
    err = capsys.readouterr().err
    assert f"{lib / 'cut.cbz'}: not a valid ZIP/CBZ archive" in err and "1 written" in err and "1 failed" in err
    assert [r["volume"] for r in _log(out)] == ["good"]
    assert read_export(out / "good.json")["pages"] == ocr_reference["Series A/vol 02"]["pages"]
