"""The window starts without heavy imports; layers below app.ui never import Qt; the CLI smoke
test runs the real pipeline end to end."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300, **kw)


def test_window_opens_without_torch_or_ultralytics(tmp_path):
    code = (
        "import os, sys; os.environ['QT_QPA_PLATFORM'] = 'offscreen';"
        f"os.environ['HAYAI_DESKTOP_CONFIG_DIR'] = {str(tmp_path)!r};"
        "from PySide6.QtWidgets import QApplication; app = QApplication([]);"
        "from app.ui.main_window import MainWindow; w = MainWindow(); w.show(); app.processEvents();"
        "heavy = [m for m in ('torch', 'ultralytics', 'transformers') if m in sys.modules];"
        "w.close(); print('HEAVY', heavy)"
    )
    out = _run(code)
    assert out.returncode == 0, out.stderr
    assert "HEAVY []" in out.stdout


def test_layers_below_ui_do_not_import_qt():
    code = (
        "import sys, pkgutil, importlib, app;"
        "mods = [m.name for m in pkgutil.walk_packages(app.__path__, 'app.') if not m.name.startswith('app.ui')];"
        "[importlib.import_module(m) for m in mods if not m.endswith('__main__')];"
        "print('QT', [m for m in sys.modules if m.startswith('PySide6')])"
    )
    out = _run(code)
    assert out.returncode == 0, out.stderr
    assert "QT []" in out.stdout


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
