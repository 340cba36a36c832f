"""One writer per project (app.core.project.lock): a second opener is told who holds the project
(process, host, since when) and does not write it; a lock left by a killed process is taken over.
The holders are real processes; the CLI run is `hayai-desktop translate` against the loopback
LLM server."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from app.core.project.files import load_project, save_project
from app.core.project.lock import ProjectLock, ProjectLocked, lock_project
from app.core.project.paths import find_project_file
from tests.translate_data import make_project

ROOT = Path(__file__).resolve().parents[1]
HOLD = """
import sys
from app.core.project.lock import ProjectLock
lock = ProjectLock(sys.argv[1], "Hayai Desktop")
print("held" if lock.acquire() else "refused", flush=True)
sys.stdin.read()  # until the test closes the pipe (or kills the process)
lock.release()
"""



def _holder(source: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(source)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout.readline().strip() == "held"
    return proc


def _end(proc: subprocess.Popen) -> None:
    proc.stdin.close()
    proc.wait()
    proc.stdout.close()


def test_a_second_opener_is_told_who_holds_the_project(tmp_path):
    source = tmp_path / "vol"
    source.mkdir()
    proc = _holder(source)
    try:
        lock = ProjectLock(source, "hayai-desktop translate")
        assert not lock.acquire() and not lock.held
        assert (lock.holder.pid, lock.holder.host, lock.holder.what) == (proc.pid, socket.gethostname(),
                                                                         "Hayai Desktop")
        message = lock.message()
        assert f"Hayai Desktop (process {proc.pid} on {socket.gethostname()}, since 20" in message
        assert str(source) in message
        with pytest.raises(ProjectLocked, match=f"process {proc.pid}"):
            lock_project(source, "hayai-desktop translate")
    finally:
        _end(proc)
    with lock_project(source, "hayai-desktop translate") as mine:  # released by its holder: free
        assert mine.held and mine.took_over is None
    assert not mine.info_path.exists()


def test_the_lock_of_a_killed_process_is_recognised_and_taken_over(tmp_path, caplog):
    source = tmp_path / "vol.cbz"
    source.write_bytes(b"")
    proc = _holder(source)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    proc.stdin.close()
    lock = ProjectLock(source, "Hayai Desktop")
    assert json.loads(lock.info_path.read_text())["pid"] == proc.pid  # what the dead process left
    assert lock.acquire()
    assert lock.took_over is not None and lock.took_over.pid == proc.pid
    assert any("took over the lock left by" in r.getMessage() and str(proc.pid) in r.getMessage()
               for r in caplog.records)
    assert json.loads(lock.info_path.read_text())["pid"] == os.getpid()
    lock.release()


def test_translate_does_not_save_a_project_held_by_another_process(fake_llm, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    folder = tmp_path / "vol"
    folder.mkdir()
    project = make_project(str(folder))
    for page in project.pages:
        shutil.copyfile(ROOT / "app" / "resources" / "samples" / "page_0000.png", folder / page.name)
    save_project(project)
    before = find_project_file(folder).read_bytes()
    out = tmp_path / "out.json"
    args = ["--provider", "openai", "--base-url", fake_llm.base_url, "--model", "test-model", "--to", "en",
            "--timeout", "5", "--retries", "1", "--use-env-key"]
    proc = _holder(folder)
    try:
        assert main(["translate", str(folder), "--out", str(out), *args]) == 0
    finally:
        _end(proc)
    err = capsys.readouterr().err
    assert f"is being edited by Hayai Desktop (process {proc.pid}" in err and "output only" in err
    assert find_project_file(folder).read_bytes() == before  # the holder's project is untouched
    assert all(b["translation"] for p in json.loads(out.read_text())["pages"] for b in p["blocks"])
    # free again: this time the project is saved
    assert main(["translate", str(folder), *args]) == 0
    assert all(p.translated for p in load_project(find_project_file(folder)).pages)
