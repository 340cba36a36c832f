"""`hayai-desktop batch --translate`: each volume machine-translated on the driver once its pages
are read, by the `translate` command's stage, against the loopback OpenAI-compatible server;
a translation added later or cut off is done without reading the pages again."""
from __future__ import annotations

import json
from pathlib import Path

from app.cli import main
from tests.batch.conftest import MODEL_ARGS, read_export
from tests.llm_server import FakeLLM, fake_translate

VOLUMES = ["vol 01", "vol 02"]  # the library's "Series A": 5 + 3 pages, all readable



def _translate(server) -> list[str]:
    return ["--translate", "--provider", "openai", "--base-url", server.base_url, "--translation-model", "test-model",
            "--to", "en", "--timeout", "3", "--retries", "0", "--use-env-key"]


def _log(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "batch.jsonl").read_text(encoding="utf-8").splitlines()]


def _assert_translated(export: dict) -> None:
    blocks = [b for p in export["pages"] for b in p["blocks"]]
    assert blocks
    for b in blocks:
        assert b["translation"] == (fake_translate(b["text"]) if b["text"].strip() else "")


def test_each_volume_is_translated_once_read(library, ocr_reference, fake_llm, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    out = tmp_path / "out"
    assert main(["batch", str(library / "Series A"), "--out", str(out)] + MODEL_ARGS + _translate(fake_llm)) == 0
    err = capsys.readouterr().err
    for key in VOLUMES:
        export = read_export(out / f"{key}.json")
        _assert_translated(export)
        reference = ocr_reference[f"Series A/{key}"]  # the same text as `ocr`, the translation added
        assert [[b["ocr_text"] for b in p["blocks"]] for p in export["pages"]] == \
            [[b["ocr_text"] for b in p["blocks"]] for p in reference["pages"]]
    assert len(fake_llm.chats()) == 8  # one request per page
    stages = [r["stages"]["translate"] for r in _log(out)]
    assert [s["untranslated"] for s in stages] == [0, 0] and all(s["translated"] > 0 for s in stages)
    assert stages[0]["settings"]["to"] == "en" and stages[0]["settings"]["model"] == "test-model"
    assert "vol 01: " in err and "block(s) translated with" in err
    assert fake_llm.key not in err + "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())


def test_a_translation_added_later_or_cut_off_does_not_read_the_pages_again(library, fake_llm, tmp_path, monkeypatch,
                                                                            pages_read, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    out = tmp_path / "out"
    ocr_only = ["batch", str(library / "Series A"), "--out", str(out)] + MODEL_ARGS
    assert main(ocr_only) == 0 and len(pages_read) == 8
    pages_read.clear()

    down = FakeLLM()
    down.close()  # the translation server is unreachable: the run writes what it has, exit 1
    assert main(ocr_only + _translate(down)) == 1
    err = capsys.readouterr().err
    assert "not completely translated" in err and pages_read == []
    assert all(b["translation"] == "" for p in read_export(out / "vol 01.json")["pages"] for b in p["blocks"])

    assert main(ocr_only + _translate(fake_llm)) == 0  # the server is back: translated, still not read again
    assert pages_read == []
    for key in VOLUMES:
        _assert_translated(read_export(out / f"{key}.json"))
    assert main(ocr_only + _translate(fake_llm)) == 0  # complete: nothing sent again
    assert len(fake_llm.chats()) == 8 and "nothing left to read" in capsys.readouterr().err
    assert [r["volume"] for r in _log(out)] == VOLUMES * 3
