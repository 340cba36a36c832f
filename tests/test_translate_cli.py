"""`hayai-desktop translate` and `ocr --translate` end to end against the loopback server:
JSON export in / out, a source's project updated page by page and resumed, TXT output, exit
status, nothing sent without a chosen backend, and the key nowhere but the Authorization header."""
import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from app.cli import main
from app.core.exports.json_txt import EXPORT_SCHEMA_PATH, export_json
from app.core.project.files import load_project, save_project
from app.core.project.paths import find_project_file
from tests.llm_server import fake_translate, page_of
from tests.translate_data import PAGES, make_project

ROOT = Path(__file__).resolve().parents[1]



def args_for(server, *extra):
    return ["--provider", "openai", "--base-url", server.base_url, "--model", "test-model", "--to", "en",
            "--timeout", "3", "--retries", "1", "--use-env-key", *extra]


def schema():
    return json.loads(EXPORT_SCHEMA_PATH.read_text(encoding="utf-8"))


def test_json_export_in_json_export_out(fake_llm, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    src = tmp_path / "in.json"
    export_json(make_project(), src)
    out = tmp_path / "out.json"
    assert main(["translate", str(src), "--out", str(out), *args_for(fake_llm)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    jsonschema.validate(data, schema(), cls=jsonschema.Draft202012Validator)
    got = [[b["translation"] for b in p["blocks"]] for p in data["pages"]]
    assert got == [[fake_translate(t) for t in lines] for lines in PAGES]
    assert all(b["machine_translation"] == b["translation"] and not b["translation_edited"]
               for p in data["pages"] for b in p["blocks"])
    err = capsys.readouterr().err
    assert "9 block(s) translated" in err
    # the key: only in the Authorization header, nowhere in what was written or printed
    for seen in fake_llm.seen:
        assert seen.headers["authorization"] == f"Bearer {fake_llm.key}"
        assert fake_llm.key not in json.dumps(seen.body) + seen.path
    assert fake_llm.key not in out.read_text(encoding="utf-8") + err
    assert not any(fake_llm.key in p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())


def test_source_project_is_saved_per_page_and_resumed(fake_llm, tmp_path, monkeypatch, capsys):
    import threading
    import time

    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    folder = tmp_path / "vol"
    folder.mkdir()
    project = make_project(str(folder))
    for page in project.pages:  # the pages exist on disk so that the project reopens with them
        shutil.copyfile(ROOT / "app" / "resources" / "samples" / "page_0000.png", folder / page.name)
    save_project(project)
    # page 2 is rate-limited past the retries; page 3's answer hangs while we look at the file
    fake_llm.script = ["ok", "rate_limit", "rate_limit", "slow"]
    fake_llm.retry_after = "0.05"
    fake_llm.delay = 30.0
    out = tmp_path / "out.txt"
    codes = []
    worker = threading.Thread(target=lambda: codes.append(
        main(["translate", str(folder), "--out", str(out), *args_for(fake_llm, "--timeout", "30")])))
    worker.start()
    deadline = time.monotonic() + 20
    while len(fake_llm.chats()) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    during = load_project(find_project_file(folder))  # saved as they arrived, before the run ended
    fake_llm._stop.set()  # the hanging answer is dropped; the client's retry gets an answer
    worker.join(30)
    assert [p.translated for p in during.pages] == [True, False, False, False]
    assert codes == [1]
    err = capsys.readouterr().err
    assert "page 002.png" in err and "429" in err and "not translated" in err
    saved = load_project(find_project_file(folder))
    assert [p.translated for p in saved.pages] == [True, False, True, True]
    txt = out.read_text(encoding="utf-8")
    assert f"> {fake_translate(PAGES[0][0])}" in txt and "=== page 2: 002.png ===" in txt
    # a second run resumes: only page 2 is sent
    fake_llm.seen.clear()
    assert main(["translate", str(folder), "--format", "json", *args_for(fake_llm)]) == 0
    assert len(fake_llm.chats()) == 1 and page_of(fake_llm.chats()[0].body)["page"] == "002.png"
    data = json.loads(capsys.readouterr().out)
    assert all(b["translation"] for p in data["pages"] for b in p["blocks"])
    assert load_project(find_project_file(folder)).pages[1].translated


def test_nothing_is_sent_without_a_chosen_backend(fake_llm, tmp_path, capsys):
    src = tmp_path / "in.json"
    export_json(make_project(), src)
    assert main(["translate", str(src), "--to", "en"]) == 2
    assert "no translation backend chosen" in capsys.readouterr().err
    assert fake_llm.seen == []
    with pytest.raises(SystemExit):  # keys are never command-line arguments
        main(["translate", str(src), "--api-key", "x", *args_for(fake_llm)])


def test_server_down_exits_non_zero_with_the_file_written(tmp_path, capsys):
    from tests.llm_server import FakeLLM

    server = FakeLLM()
    server.close()
    src = tmp_path / "in.json"
    export_json(make_project(), src)
    out = tmp_path / "out.json"
    assert main(["translate", str(src), "--out", str(out), *args_for(server)]) == 1
    err = capsys.readouterr().err
    assert "cannot connect" in err and "not attempted" in err
    assert json.loads(out.read_text(encoding="utf-8"))["pages"][0]["blocks"][0]["translation"] == ""


def test_the_gui_choice_is_used_when_no_provider_is_given(fake_llm, tmp_path, monkeypatch, capsys, memory_keyring):
    from app.core.config.api_keys import store_key
    from app.core.config.settings import AppSettings, save_settings

    save_settings(AppSettings(translation_provider="openai", translation_base_url=fake_llm.base_url,
                              translation_model="test-model", translation_target="en"))
    assert store_key("openai", fake_llm.base_url, fake_llm.key) == "keyring"  # the test's own keyring
    assert list(memory_keyring.items.values()) == [fake_llm.key]
    src = tmp_path / "in.json"
    export_json(make_project(texts=[["ありがとう"]]), src)
    assert main(["translate", str(src)]) == 0
    assert json.loads(capsys.readouterr().out)["pages"][0]["blocks"][0]["translation"] == "Arigatou"
    assert fake_llm.seen[0].headers["authorization"] == f"Bearer {fake_llm.key}"


def test_ocr_then_translate_in_one_go(fake_llm, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    folder = tmp_path / "pages"
    folder.mkdir()
    shutil.copyfile(ROOT / "app" / "resources" / "samples" / "page_0000.png", folder / "page_0000.png")
    demo = ROOT / "app" / "resources" / "demo"
    out = tmp_path / "out.json"
    code = main(["ocr", str(folder), "--out", str(out), "--model", str(demo / "hayai-demo-ocr"),
                 "--detector", str(demo / "hayai-demo-detector.pt"), "--device", "cpu", "--patches", "256",
                 "--max-new-tokens", "48", "--translate", "--provider", "openai", "--base-url", fake_llm.base_url,
                 "--translation-model", "test-model", "--to", "en", "--timeout", "5", "--use-env-key"])
    assert code == 0
    blocks = json.loads(out.read_text(encoding="utf-8"))["pages"][0]["blocks"]
    assert len(blocks) >= 5
    for b in blocks:
        assert b["translation"] == (fake_translate(b["text"]) if b["text"].strip() else "")
    assert len(fake_llm.chats()) == 1


def test_pages_translates_only_that_range(fake_llm, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    src = tmp_path / "in.json"
    export_json(make_project(), src)
    out = tmp_path / "out.json"
    assert main(["translate", str(src), "--out", str(out), "--pages", "2-3", *args_for(fake_llm)]) == 0
    assert [page_of(s.body)["page"] for s in fake_llm.chats()] == ["002.png", "003.png"]
    got = [[b["translation"] for b in p["blocks"]] for p in json.loads(out.read_text(encoding="utf-8"))["pages"]]
    assert got[1:3] == [[fake_translate(t) for t in lines] for lines in PAGES[1:3]]
    assert got[0] == ["", "", ""] and got[3] == [""]
    assert main(["translate", str(src), "--pages", "3-9", *args_for(fake_llm)]) == 2
    assert "the volume has pages 1 to 4" in capsys.readouterr().err
