"""`hayai-desktop serve` end to end: a real uvicorn on a free loopback port, httpx as the client.

The flow of a script: open the demo volume, read its pages (the job's progress seen, by polling
and as server-sent events), correct a block's text, translate against the loopback LLM server,
export a CBZ; the project file is then the one the CLI writes for the same steps (`ocr
--save-project`, `import-script`, `translate`, `render`). And the guards: the token, the roots,
the body limit, one writer per project, a cancelled job leaving the project whole.
"""
from __future__ import annotations

import csv
import json
import os
import zipfile

import httpx
import pytest

from app.cli import main
from app.core.project.files import load_project
from app.core.project.lock import lock_project
from app.core.project.paths import find_project_file
from app.service.http_api import create_app
from app.service.options import make_service
from tests.llm_server import fake_translate
from tests.service_helpers import TOKEN, Running, demo_volume, llm_flags, model_flags, serve_args
from tests.translate_data import make_project

AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def served(tmp_path, request):
    """(url, root, service): a server over tmp_path/root with the demo models and, when the test
    uses fake_llm, the loopback LLM server as its translation backend."""
    root = tmp_path / "root"
    root.mkdir()
    flags = ["--root", str(root), *model_flags()]
    if "fake_llm" in request.fixturenames:
        llm = request.getfixturevalue("fake_llm")
        flags += [*llm_flags(llm), "--memory", "off"]
    service = make_service(serve_args(*flags))
    running = Running(create_app(service, TOKEN))
    yield running.url, root, service
    running.stop()
    service.close()


def _wait(client, job: dict, timeout: float = 300) -> tuple[dict, list[dict]]:
    """Follow a job's server-sent events to its end: (the last state, every event)."""
    events = []
    with client.stream("GET", f"/jobs/{job['id']}/events", timeout=timeout) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
    return events[-1], events


def _project_pages(source) -> list[dict]:
    data = json.loads(find_project_file(source).read_text(encoding="utf-8"))
    return data["pages"]


def test_a_script_reads_corrects_translates_and_exports_as_the_cli_does(served, fake_llm, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    url, root, _service = served
    vol = demo_volume(root / "vol")
    with httpx.Client(base_url=url, headers=AUTH, timeout=60) as client:
        opened = client.post("/volumes", json={"path": "vol"}).json()
        assert opened["pages"] == 2 and opened["read_only"] is None, opened
        vid = opened["id"]
        assert [p["read"] for p in client.get(f"/volumes/{vid}/pages").json()] == [False, False]

        job = client.post(f"/volumes/{vid}/read", json={}).json()
        assert job["state"] == "running" and job["kind"] == "read"
        assert client.post(f"/volumes/{vid}/read", json={}).status_code == 409  # one job per volume
        assert any(j["id"] == job["id"] for j in client.get("/jobs").json())  # another client sees it
        last, events = _wait(client, job)
        assert last["state"] == "done", last
        assert last["result"] == {"pages": 2, "failed": 0}
        assert any(0 < e["done"] < e["total"] or e["detail"].endswith("blocks") for e in events), events

        pages = client.get(f"/volumes/{vid}/pages").json()
        assert all(p["read"] and p["blocks"] >= 3 for p in pages), pages
        first = pages[0]["name"]
        blocks = client.get(f"/volumes/{vid}/pages/{first}/blocks").json()
        block = blocks[0]
        crop = client.get(f"/volumes/{vid}/pages/{first}/blocks/{block['id']}/crop")
        assert crop.headers["content-type"] == "image/png" and crop.content.startswith(b"\x89PNG")
        changed = client.patch(f"/volumes/{vid}/pages/{first}/blocks/{block['id']}", json={"text": "ありがとう"})
        assert changed.status_code == 200 and changed.json()["text"] == "ありがとう", changed.text
        assert _project_pages(vol)[0]["blocks"][0]["text"] == "ありがとう"  # saved at once

        job = client.post(f"/volumes/{vid}/translate", json={}).json()
        last, _ = _wait(client, job)
        assert last["state"] == "done" and last["result"]["not_translated"] == 0, last
        blocks = client.get(f"/volumes/{vid}/pages/{first}/blocks").json()
        assert blocks[0]["translation"] == fake_translate("ありがとう") == "Arigatou"

        job = client.post(f"/volumes/{vid}/export", json={"format": "cbz", "out": "out/api.cbz"}).json()
        last, _ = _wait(client, job)
        assert last["state"] == "done" and not last["result"]["skipped"], last
        report = client.get(f"/volumes/{vid}/check", params={"layout": "false"}).json()
        assert "findings" in report

    # the same steps through the CLI, on a copy of the pages
    cli = demo_volume(tmp_path / "cli")
    assert main(["ocr", str(cli), "--save-project", "--out", str(tmp_path / "read.json"), *model_flags()]) == 0
    script = tmp_path / "script.csv"
    assert main(["export", str(cli), "--out", str(script)]) == 0
    rows = list(csv.DictReader(script.open(encoding="utf-8")))
    assert rows[0]["block_id"] == block["id"]
    rows[0]["source"] = "ありがとう"
    with script.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert main(["import-script", str(cli), str(script)]) == 0
    flags = [f.replace("--translation-model", "--model") for f in llm_flags(fake_llm)]
    assert main(["translate", str(cli), "--out", str(tmp_path / "t.json"), "--memory", "off", *flags]) == 0
    assert main(["render", str(cli), "--out", str(tmp_path / "cli.cbz")]) == 0

    assert _project_pages(vol) == _project_pages(cli)
    api_cbz, cli_cbz = zipfile.ZipFile(root / "out" / "api.cbz"), zipfile.ZipFile(tmp_path / "cli.cbz")
    images = [n for n in api_cbz.namelist() if n.endswith(".png")]
    assert api_cbz.namelist() == cli_cbz.namelist() and len(images) == 2
    assert [api_cbz.read(n) for n in images] == [cli_cbz.read(n) for n in images]  # the same lettered pages


@pytest.mark.parametrize("path", ["/docs", "/openapi.json", "/volumes", "/jobs"])
def test_no_token_or_a_wrong_one_is_401(served, path):
    url, _root, _service = served
    assert httpx.get(url + path).status_code == 401
    assert httpx.get(url + path, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert httpx.get(url + path, headers={"Authorization": TOKEN}).status_code == 401  # no scheme
    assert httpx.get(url + path, headers=AUTH).status_code == 200


def test_paths_outside_the_roots_are_403(served, tmp_path):
    url, root, _service = served
    outside = demo_volume(tmp_path / "outside", pages=1)
    (root / "link").symlink_to(outside, target_is_directory=True)
    demo_volume(root / "vol", pages=1)
    with httpx.Client(base_url=url, headers=AUTH) as client:
        for path in (str(outside), "../outside", str(root / ".." / "outside"), "link", "vol/../../outside",
                     "C:\\Windows\\System32", "\\\\server\\share\\vol", "/etc"):
            answer = client.post("/volumes", json={"path": path})
            assert answer.status_code == 403, (path, answer.text)
        vid = client.post("/volumes", json={"path": "vol"}).json()["id"]
        for out in (str(tmp_path / "x.cbz"), "../x.cbz", "link/x.cbz"):
            answer = client.post(f"/volumes/{vid}/export", json={"format": "cbz", "out": out})
            assert answer.status_code == 403, (out, answer.text)
    assert not (tmp_path / "x.cbz").exists() and not (outside / "x.cbz").exists()
    assert find_project_file(outside) is None


def test_a_huge_body_is_413(served):
    url, root, _service = served
    demo_volume(root / "vol", pages=1)
    with httpx.Client(base_url=url, headers=AUTH) as client:
        huge = json.dumps({"path": "vol" + "x" * (2 << 20)})
        assert client.post("/volumes", content=huge, headers={"content-type": "application/json"}).status_code == 413

        def chunks():  # no Content-Length: counted as it arrives
            yield b'{"path": "'
            for _ in range(40):
                yield b"x" * 65536
            yield b'"}'
        assert client.post("/volumes", content=chunks(), headers={"content-type": "application/json"}).status_code == 413
        assert client.post("/volumes", json={"path": "vol"}).status_code == 200


def test_a_project_held_elsewhere_is_served_read_only_saying_who(served):
    url, root, _service = served
    vol = demo_volume(root / "vol", pages=1)
    from app.core.project.files import save_project

    save_project(make_project(str(vol.resolve()), texts=[["ありがとう"]]))
    with lock_project(vol, "Hayai Desktop"), httpx.Client(base_url=url, headers=AUTH) as client:
        opened = client.post("/volumes", json={"path": "vol"}).json()
        assert "Hayai Desktop (process" in opened["read_only"], opened
        answer = client.patch(f"/volumes/{opened['id']}/pages/001.png/blocks/b1", json={"text": "x"})
        assert answer.status_code == 423 and "Hayai Desktop" in answer.json()["detail"]
        assert client.post(f"/volumes/{opened['id']}/read", json={}).status_code == 423
    assert load_project(find_project_file(vol)).pages[0].blocks[0].text is None


def test_the_server_holds_the_lock_against_the_cli(served, tmp_path, capsys):
    url, root, _service = served
    vol = demo_volume(root / "vol", pages=1)
    from app.core.project.files import save_project

    save_project(make_project(str(vol.resolve()), texts=[["ありがとう"]]))
    with httpx.Client(base_url=url, headers=AUTH) as client:
        vid = client.post("/volumes", json={"path": "vol"}).json()["id"]
        script = tmp_path / "s.csv"
        assert main(["export", str(vol), "--out", str(script)]) == 0
        assert main(["import-script", str(vol), str(script)]) == 2
        assert "hayai-desktop serve (process" in capsys.readouterr().err
        assert client.patch(f"/volumes/{vid}/pages/001.png/blocks/b1", json={"text": "x"}).status_code == 200


def test_a_cancelled_translation_leaves_the_project_whole(served, fake_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    url, root, service = served
    vol = demo_volume(root / "vol", pages=0)
    for name in ("001.png", "002.png", "003.png", "004.png"):
        (vol / name).write_bytes(b"")  # not decoded: the pages go without their image
    from app.core.project.files import save_project

    save_project(make_project(str(vol.resolve())))
    fake_llm.script = ["ok", "slow"]
    fake_llm.delay = 60
    service.args.page_image = "off"
    with httpx.Client(base_url=url, headers=AUTH, timeout=30) as client:
        vid = client.post("/volumes", json={"path": "vol"}).json()["id"]
        job = client.post(f"/volumes/{vid}/translate", json={}).json()
        while fake_llm.holding == 0:  # the second page's request is held by the server
            assert client.get(f"/jobs/{job['id']}").json()["state"] == "running"
        assert client.patch(f"/volumes/{vid}/pages/001.png/blocks/b1", json={"text": "x"}).status_code == 409
        assert client.post(f"/jobs/{job['id']}/cancel").status_code == 200
        last, _ = _wait(client, job, timeout=30)
        assert last["state"] == "cancelled", last
    project = load_project(find_project_file(vol))
    translated = [[bool(b.translation) for b in p.blocks] for p in project.pages]
    assert translated[0] and all(translated[0]), translated  # the page that landed is saved whole
    assert not any(any(t) for t in translated[1:]), translated  # the others untouched
    assert os.path.getsize(find_project_file(vol)) > 0


def test_a_public_address_needs_listen_public(tmp_path, capsys):
    assert main(["serve", "--root", str(tmp_path), "--host", "0.0.0.0", "--port", "0"]) == 2
    assert "--listen-public" in capsys.readouterr().err


def test_the_token_is_made_once_readable_by_the_user_only(tmp_path):
    from app.service.security import load_or_make_token

    token, made = load_or_make_token(tmp_path / "t")
    assert made and len(token) >= 40 and (tmp_path / "t").stat().st_mode & 0o077 == 0
    assert load_or_make_token(tmp_path / "t") == (token, False)


def test_edits_a_crashed_session_left_in_the_journal_are_restored_on_open(served):
    from dataclasses import replace

    from app.core.project.files import save_project
    from app.core.project.journal import EditJournal, has_edits

    url, root, _service = served
    vol = demo_volume(root / "vol", pages=0)
    (vol / "001.png").write_bytes(b"")
    project = make_project(str(vol.resolve()), texts=[["ありがとう", "うん"]])
    save_project(project)
    journal = EditJournal(vol.resolve())  # the window's journal, then a crash before its autosave
    page = project.pages[0]
    journal.record_page(replace(page, blocks=(replace(page.blocks[0], text="ありがとう！"), *page.blocks[1:])))
    journal.close()
    with httpx.Client(base_url=url, headers=AUTH) as client:
        opened = client.post("/volumes", json={"path": "vol"}).json()
        assert opened["restored_edits"] == 1, opened
        assert client.get(f"/volumes/{opened['id']}/pages/001.png/blocks").json()[0]["text"] == "ありがとう！"
    assert load_project(find_project_file(vol)).pages[0].blocks[0].text == "ありがとう！"
    assert not has_edits(vol.resolve())  # folded into the saved project
