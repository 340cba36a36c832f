"""Logging set up once at start-up (app.logs): a rotating file in the user log folder, stderr for
the commands; run in fresh processes, as the app starts."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str, log_dir: Path, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HAYAI_LOG_DIR": str(log_dir), **env})


def test_a_command_logs_to_a_rotating_file_and_warns_on_stderr(tmp_path):
    code = (
        "import logging, threading\n"
        "from app.logs import configure_logging, log_file\n"
        "path = configure_logging(stderr=True, max_bytes=4000, backups=2)\n"
        "assert configure_logging(stderr=True) == path == log_file()  # once: a second call changes nothing\n"
        "log = logging.getLogger('app.core.reading.pipeline')\n"
        "for i in range(300):\n"
        "    log.info('line %03d of a long run', i)\n"
        "log.warning('page 004.png: not an image')\n"
        "logging.getLogger('httpx').info('third-party chatter')\n"
        "logging.getLogger('ultralytics').warning('third-party warning')\n"
        "t = threading.Thread(target=lambda: 1 / 0, name='boom'); t.start(); t.join()\n"
    )
    out = _python(code, tmp_path / "logs")
    assert out.returncode == 0, out.stderr
    files = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert files == ["hayai-desktop.log", "hayai-desktop.log.1", "hayai-desktop.log.2"]
    assert all((tmp_path / "logs" / f).stat().st_size <= 4000 for f in files)
    text = (tmp_path / "logs" / "hayai-desktop.log").read_text(encoding="utf-8")
    assert "WARNING app.core.reading.pipeline [MainThread] page 004.png: not an image" in text
    assert "third-party warning" in text and "third-party chatter" not in text
    assert "unexpected error in thread boom: ZeroDivisionError" in text and "Traceback" in text
    older = (tmp_path / "logs" / "hayai-desktop.log.1").read_text(encoding="utf-8")
    assert "of a long run" in older
    err_lines = [ln for ln in out.stderr.splitlines() if ln.startswith("hayai-desktop:")]
    assert "hayai-desktop: warning: page 004.png: not an image" in err_lines
    assert not any("long run" in ln for ln in out.stderr.splitlines())  # INFO stays in the file


def test_the_cli_configures_logging_and_an_unwritable_folder_is_said(tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the log folder should be", encoding="utf-8")
    code = "from app.cli import main; raise SystemExit(main(['models', 'list']))"
    ok = _python(code, tmp_path / "logs", HAYAI_MODELS_DIR=str(tmp_path / "models"))
    assert ok.returncode == 0, ok.stderr
    assert "started (pid" in (tmp_path / "logs" / "hayai-desktop.log").read_text(encoding="utf-8")
    bad = _python(code, blocked / "logs", HAYAI_MODELS_DIR=str(tmp_path / "models"))
    assert bad.returncode == 0, bad.stderr
    assert "cannot write a log file in" in bad.stderr and "messages go to the terminal only" in bad.stderr
