"""The window starts without heavy imports (that no layer below app.ui imports Qt is the
no-qt-below-ui import contract, checked by tests/test_architecture.py); the CLI smoke
test runs the real pipeline end to end."""
import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300, **kw)


WINDOW_IMPORTS = """
import os, sys, threading, time
os.environ["QT_QPA_PLATFORM"] = "offscreen"
os.environ["HAYAI_DESKTOP_CONFIG_DIR"] = sys.argv[1]
HEAVY = ("torch", "ultralytics", "transformers")
by = {}  # heavy module -> the thread that imported it first

class Spy:
    def find_spec(self, name, path=None, target=None):
        if name in HEAVY:
            by.setdefault(name, threading.current_thread().name)

sys.meta_path.insert(0, Spy())
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.ui.shell.main_window import MainWindow
w = MainWindow()
print("BEFORE SHOW", [m for m in HEAVY if m in sys.modules])
w.show()
app.processEvents()
end = time.monotonic() + 120
while "ultralytics" not in by and time.monotonic() < end:
    app.processEvents()
    time.sleep(0.01)
w.close()
w.shutdown()
print("IMPORTED BY", sorted(by.items()))
"""


def test_window_opens_without_torch_or_ultralytics(tmp_path):
    """The window is built and shown without the heavy imports; right after, the worker imports
    them (preloading the models) and the GUI thread never does."""
    out = subprocess.run([sys.executable, "-c", WINDOW_IMPORTS, str(tmp_path)], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "BEFORE SHOW []" in out.stdout
    imported = dict(ast.literal_eval(out.stdout.split("IMPORTED BY", 1)[1].strip()))
    assert {"torch", "ultralytics"} <= set(imported), out.stdout  # preloaded (no model installed here)
    assert "MainThread" not in imported.values(), imported  # ... by the worker, never the GUI thread




def test_cli_smoke_test_runs_the_pipeline(tiny_ocr, tiny_yolo, tmp_path):
    env = {"QT_QPA_PLATFORM": "offscreen", "HAYAI_DATA_DIR": str(tmp_path / "data"), "PATH": "/usr/bin:/bin",
           "HOME": str(tmp_path)}
    ok = subprocess.run([sys.executable, "-m", "app", "--smoke-test", "--model", str(tiny_ocr),
                         "--detector", str(tiny_yolo)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                        env=env)
    assert ok.returncode == 0, ok.stderr
    assert "smoke test: done" in ok.stderr
    bad = subprocess.run([sys.executable, "-m", "app", "--smoke-test", "--model", str(tmp_path / "missing"),
                          "--detector", str(tiny_yolo)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env=env)
    assert bad.returncode == 1
    assert "missing" in bad.stderr


def test_demo_smoke_test_reads_the_samples_and_keeps_user_settings(tmp_path):
    """`--demo` opens app/resources/samples with the demo models at the demo budget; the user's own
    settings file is neither read for the models nor overwritten."""
    import json

    config = tmp_path / "config"
    config.mkdir()
    user = {"model": "hayai-ocr-v2.5-nova", "detector": "comic-speech-bubble-detector", "patches": 512}
    (config / "settings.json").write_text(json.dumps(user), encoding="utf-8")
    env = {"QT_QPA_PLATFORM": "offscreen", "HAYAI_DATA_DIR": str(tmp_path / "data"), "PATH": "/usr/bin:/bin",
           "HOME": str(tmp_path), "HAYAI_DESKTOP_CONFIG_DIR": str(config)}
    out = subprocess.run([sys.executable, "-m", "app", "--demo", "--smoke-test"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    assert "smoke test: done; page page_0000.png:" in out.stderr
    blocks = int(out.stderr.split("page_0000.png: ")[1].split(" block")[0])
    truth = json.loads((ROOT / "app" / "resources" / "samples" / "page_0000.json").read_text(encoding="utf-8"))
    assert abs(blocks - len(truth["blocks"])) <= 2
    assert json.loads((config / "settings.json").read_text(encoding="utf-8")) == user


def test_demo_settings_are_its_own(make_window, tmp_path, monkeypatch):
    from argparse import Namespace

    from app.core.config.settings import AppSettings, load_settings, save_settings
    from app.ui.shell.startup import DEMO_PATCHES, DEMO_SETTINGS_FILE, demo_paths, startup_settings

    config = tmp_path / "config"
    monkeypatch.setenv("HAYAI_DESKTOP_CONFIG_DIR", str(config))
    user = AppSettings(patches=512, order="ltr")
    save_settings(user)
    settings, file, path = startup_settings(Namespace(demo=True, path=None, model=None, detector=None))
    samples, model, detector = demo_paths()
    assert (settings.model, settings.detector, settings.patches) == (str(model), str(detector), DEMO_PATCHES)
    assert settings.order == "ltr" and path == str(samples)
    assert file == config / DEMO_SETTINGS_FILE
    w = make_window()
    w.settings_path = file
    w.update_settings(patches=384)  # a change made in the demo is kept for the demo only
    assert w.settings_writer.flush()
    assert load_settings() == user
    again, _, _ = startup_settings(Namespace(demo=True, path=None, model=None, detector=None))
    assert again.patches == 384 and again.model == str(model)
    plain, plain_file, _ = startup_settings(Namespace(demo=False, path=None, model=None, detector=None))
    assert plain == user and plain_file is None
