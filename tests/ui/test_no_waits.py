"""The GUI thread never waits on background work outside exit, and exit says what did not stop.

Stalls are made real, not timed: a page that is a named pipe blocks whoever reads it until the
test writes it, and the local Hub holds a download mid-file. Each test then checks that the GUI
call returned while the work was still blocked (so it did not wait), and releases it."""
from __future__ import annotations

import logging
import os
import random
import sys
import threading

import pytest
from PySide6.QtCore import Qt

from app.models import store

REPO = "tester/held-ocr"
fifo_only = pytest.mark.skipif(sys.platform == "win32" or not hasattr(os, "mkfifo"), reason="needs named pipes")


class Pipe:
    """A page file that is a named pipe: reading it blocks until `release()` writes the page.
    A safety timer releases it after `safety_s`, so code that does wait cannot hang the suite
    (it then fails the test's "still blocked" check instead)."""

    def __init__(self, path, data: bytes, safety_s: float = 20.0):
        os.mkfifo(path)
        self.path, self.data = path, data
        self.released = threading.Event()
        self._lock = threading.Lock()
        self._timer = threading.Timer(safety_s, self.release)
        self._timer.daemon = True
        self._timer.start()

    _fd: int | None = None

    def has_reader(self) -> bool:
        """Is a reader blocked on the page now? (Opening the write end without blocking succeeds
        only then; the end is kept open, so the reader goes on waiting, now in read().)"""
        with self._lock:
            if self._fd is None and not self.released.is_set():
                try:
                    self._fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
                except OSError:  # ENXIO: nobody reads it yet
                    return False
            return self._fd is not None

    def release(self) -> None:
        with self._lock:
            if self.released.is_set():
                return
            self.released.set()
            self._timer.cancel()
            fd = self._fd if self._fd is not None else os.open(self.path, os.O_WRONLY)  # the reader waits in open()
            os.set_blocking(fd, True)
            try:
                os.write(fd, self.data)
            finally:
                os.close(fd)


def _png(folder, name) -> bytes:
    from tests.ui.conftest import write_pages

    write_pages(folder, 1)
    data = (folder / "page-001.png").read_bytes()
    (folder / "page-001.png").rename(folder / name)
    (folder / "page-001.json").unlink()
    return data


@fifo_only
def test_opening_another_source_does_not_wait_for_the_thumbnails(make_window, tmp_path, pages, qtbot):
    vol = tmp_path / "slow"
    data = _png(vol, "a-001.png")
    pipe = Pipe(vol / "a-002.png", data)  # the thumbnail job blocks on it
    w = make_window()
    with qtbot.waitSignal(w.page_list.signals.loaded, timeout=20000):  # the first thumbnail
        w.session.open_path(vol)
    qtbot.waitUntil(pipe.has_reader, timeout=20000)  # the thumbnail job is blocked reading a-002.png
    assert w.page_list.pool.activeThreadCount() == 1
    assert w.session.open_path(pages)
    assert not pipe.released.is_set(), "opening the new source waited for the old thumbnail job"
    assert w.doc.source == str(pages) and w.page_list.count() == 3
    pipe.release()
    qtbot.waitUntil(lambda: w.page_list.thumbnails_done(), timeout=20000)
    names = [w.page_list.item(i).text() for i in range(w.page_list.count())]
    assert all("page-00" in n for n in names)  # the old job's late results were dropped


@fifo_only
def test_exit_says_when_background_work_did_not_stop(make_window, tmp_path, qtbot, caplog):
    vol = tmp_path / "stuck"
    vol.mkdir()
    pipe = Pipe(vol / "p.png", _png(tmp_path / "src", "p.png"))
    w = make_window()
    w.stop_timeout_ms = 300
    with qtbot.waitSignal(w.host.worker.progressed, timeout=60000):  # models loaded, about to read p.png
        w.host.submit("pages", str(vol), {"pages": ["p.png"]}, names=("p.png",))
    qtbot.waitUntil(pipe.has_reader, timeout=20000)  # the worker is blocked reading p.png
    with caplog.at_level(logging.WARNING, logger="app.ui.common.threads"):
        assert w.shutdown() is False
    assert not pipe.released.is_set()
    assert w.host.thread.isRunning() and not w.stopped_cleanly
    assert "did not stop within 0 s at exit" in caplog.text and "hayai-worker" in caplog.text
    pipe.release()
    qtbot.waitUntil(w.host.thread.isFinished, timeout=20000)  # it stops after the blocked read


@pytest.fixture
def held_hub(local_hub):
    files = {"config.json": b'{"d_model": 64}', "model.safetensors": random.Random(5).randbytes(1_000_000),
             "tokenizer.json": b"{}", "tokenizer_config.json": b"{}"}
    server, serve = local_hub
    return server, serve("held-ocr", REPO, files), files


def test_closing_the_model_manager_mid_download_does_not_wait(qtbot, held_hub):
    from app.ui.models.manager import ModelManagerDialog

    server, entry, _files = held_hub
    release = threading.Event()
    safety = threading.Timer(20, release.set)  # a dialog that waits is released after 20 s, and fails below
    safety.start()
    server.hold["model.safetensors"] = (300_000, release)
    dlg = ModelManagerDialog()
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.start_download(entry.name)
    qtbot.waitUntil(lambda: "300.0 KB of 1.0 MB" in dlg.progress_label.text(), timeout=20000)
    dlg.reject()
    assert not release.is_set(), "closing waited for the download"
    assert not dlg.isVisible() and dlg.winding_down()  # still downloading, held by the server
    release.set()
    safety.cancel()
    qtbot.waitUntil(lambda: not dlg.winding_down(), timeout=20000)  # it saw the cancel and ended
    folder = store.models_dir() / entry.name
    assert (folder / "model.safetensors.part").stat().st_size >= 300_000  # kept for the next download
    assert not (folder / "model.safetensors").exists()


def _install(entry, files) -> None:
    folder = store.models_dir() / entry.name
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)


@pytest.mark.parametrize("task", ["verify", "import"])
def test_verify_and_import_stop_on_cancel(qtbot, local_hub, tmp_path, task):
    from app.ui.models.manager import ModelManagerDialog

    files = {"config.json": b"{}", "model.safetensors": random.Random(6).randbytes(8 << 20)}  # 8 chunks of 1 MiB
    _server, serve = local_hub
    entry = serve("big-ocr", REPO, files)
    dlg = ModelManagerDialog()
    qtbot.addWidget(dlg)
    dlg.select(entry.name)
    seen = []
    # the user presses Cancel as the first bytes are checked (set on the task's thread: deterministic)
    dlg._runner.progressed.connect(lambda f, done, total: (seen.append((f, done)), dlg._cancel.set()),
                                   Qt.ConnectionType.DirectConnection)
    with qtbot.waitSignal(dlg.task_done, timeout=30000) as blocker:
        if task == "verify":
            _install(entry, files)
            dlg._on_verify()
        else:
            src = tmp_path / "src"
            src.mkdir()
            for name, data in files.items():
                (src / name).write_bytes(data)
            dlg.import_path(entry.name, str(src))
    dlg.done(0)
    assert blocker.args[1] == "cancelled"
    assert 1 <= len(seen) <= 2  # stopped within a chunk of being asked
    if task == "import":
        assert not (store.models_dir() / entry.name).exists()  # the store is as it was
        assert not [p for p in store.models_dir().iterdir() if p.name.startswith(".import-")]


def test_settings_are_written_off_the_gui_thread_and_a_failure_is_said(make_window, tmp_path, monkeypatch, qtbot):
    import app.ui.shell.preferences as ui_settings
    from app.core.config.settings import load_settings

    threads_seen = []
    real = ui_settings.save_settings

    def recording(settings, path=None):
        threads_seen.append(threading.current_thread())
        real(settings, path)

    monkeypatch.setattr(ui_settings, "save_settings", recording)
    w = make_window()
    w.settings_path = tmp_path / "settings.json"
    w.update_settings(patches=512)
    w.update_settings(order="ltr")
    assert w.settings_writer.flush()
    assert threads_seen and threading.main_thread() not in threads_seen  # the fsynced write is not the GUI's
    saved = load_settings(w.settings_path)
    assert (saved.patches, saved.order) == (512, "ltr")  # the newest values
    w.settings_path = tmp_path / "a-folder"
    w.settings_path.mkdir()
    w.update_settings(patches=256)
    assert w.settings_writer.flush()
    qtbot.waitUntil(lambda: "Settings could not be saved" in w.notice.label.text(), timeout=5000)
