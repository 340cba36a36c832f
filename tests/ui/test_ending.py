"""Ending on a signal (app.ui.shell.ending): SIGTERM, SIGHUP or Ctrl+C close the window as a close
would, without questions: the text being typed and every unsaved edit are kept in the autosave
(the next start offers them), the project's lock is released (the next start does not warn of a
lock left behind)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from PySide6.QtTest import QTest

from app.core.project.files import recoverable_autosave
from app.core.project.paths import project_path_for
from tests.ui.conftest import DEMO_DETECTOR, DEMO_OCR
from tests.ui.test_editing import add_blocks

ROOT = Path(__file__).resolve().parents[2]


def _holder(source) -> Path:
    return Path(f"{project_path_for(source)}.lock.holder")


def test_sigterm_keeps_the_text_being_typed_and_releases_the_lock(make_window, pages, qtbot):
    from app.ui.shell.ending import end_on_signals

    w = make_window()
    assert w.session.open_path(pages)
    w.autosave_timer.setInterval(3_600_000)  # only the signal autosaves in this test
    add_blocks(w, "page-001.png", 2)
    w.view.select_block("b1")
    w.view._on_selection_changed()
    w.panel.text_edit.setFocus()
    w.panel.text_edit.moveCursor(w.panel.text_edit.textCursor().MoveOperation.End)
    QTest.keyClicks(w.panel.text_edit, "typed")  # in the editor, not committed yet
    assert _holder(pages).exists()
    quits = []
    put_back = end_on_signals(w, lambda: quits.append(1))
    try:
        os.kill(os.getpid(), signal.SIGTERM)  # a real signal, carried into Qt's loop
        qtbot.waitUntil(lambda: bool(quits), timeout=10000)
    finally:
        put_back()
    assert quits == [1] and w.isHidden() and w.closing
    assert not _holder(pages).exists()  # the lock released: no "took over the lock" next time
    assert recoverable_autosave(pages) is not None

    again = make_window(recent_sources=(str(pages),))
    again.questions.answers["restore_autosave"] = True
    assert again.session.reopen_after_crash()  # the next start offers the edits, as after a crash
    assert again.doc.page("page-001.png").block("b1").text == "テキスト1typed"


def test_the_app_ends_cleanly_on_sigterm(pages):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    app = subprocess.Popen([sys.executable, "-m", "app", "--model", str(DEMO_OCR), "--detector", str(DEMO_DETECTOR),
                            str(pages)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while not _holder(pages).exists() and app.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _holder(pages).exists(), "the app did not open the volume"
        time.sleep(1.0)  # the window's loop running
        app.send_signal(signal.SIGTERM)
        out, _ = app.communicate(timeout=120)
    finally:
        if app.poll() is None:
            app.kill()
    assert app.returncode == 0, out  # not killed by the signal (-15)
    assert not _holder(pages).exists()
