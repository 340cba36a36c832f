"""The wheel a user installs runs the app with no repository on the path.

The project is built as a distributor does (PEP 517 hooks: sdist, then the wheel from the
unpacked sdist), installed with pip into a fresh virtual environment, and run from an empty
folder with a bare environment: `hayai-desktop --version`, `recognize` on the demo model the
wheel carries, and the GUI `--demo --smoke-test` offscreen (the sample pages and both demo models,
all read from the installed package). The fresh environment gets the dependencies (torch and the
rest, gigabytes) from this environment's site-packages through a .pth line; a .pth line adds a
folder without running the .pth files in it, so the editable install of the checkout living
there stays off, and `import app` can only find the wheel's copy.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "packaging"))
import spec_data as sd  # noqa: E402

BUILD = """
import sys
from setuptools import build_meta
kind, out = sys.argv[1], sys.argv[2]
print((build_meta.build_sdist if kind == "sdist" else build_meta.build_wheel)(out))
"""


def _build(kind: str, src: Path, out: Path) -> Path:
    """One PEP 517 hook of setuptools (the backend pyproject.toml names), run in `src`, offline."""
    done = subprocess.run([sys.executable, "-c", BUILD, kind, str(out)], cwd=src, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return out / done.stdout.strip().splitlines()[-1]


def _bare_env(home: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "QT_QPA_PLATFORM": "offscreen", "YOLO_OFFLINE": "1",
            "HF_HUB_OFFLINE": "1", "HAYAI_LOG_DIR": str(home / "logs")}


def _build_and_install(tmp: Path) -> tuple[Path, Path, Path]:
    src = tmp / "src"
    src.mkdir()
    # what a source release holds: the project description, the licence and the package
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "app", src / "app", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    sdist = _build("sdist", src, tmp / "dist")
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp / "unpacked", filter="data")
    wheel = _build("wheel", next((tmp / "unpacked").iterdir()), tmp / "dist")

    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                          "-q", str(wheel)], capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr
    fresh = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                capture_output=True, text=True, check=True).stdout.strip())
    shared = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (fresh / "zz-shared-dependencies.pth").write_text("".join(f"{p}\n" for p in shared), encoding="utf-8")
    return python, venv / "bin" / "hayai-desktop", wheel


@pytest.fixture(scope="session")
def installed(tmp_path_factory):
    """(the fresh environment's python, its hayai-desktop script, the wheel, the folder holding
    them), built once per run: under pytest-xdist the workers share one build (a file lock)."""
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, above each worker's own
    tmp = base / "wheel-install"
    with FileLock(str(tmp) + ".lock"):
        done = tmp / "installed.json"
        if not done.is_file():
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir()
            done.write_text(json.dumps([str(p) for p in _build_and_install(tmp)]), encoding="utf-8")
        python, script, wheel = map(Path, json.loads(done.read_text(encoding="utf-8")))
    return python, script, wheel, tmp


@pytest.fixture
def bare(tmp_path):
    """A scratch folder: an empty working directory and a fresh HOME for one run."""
    (tmp_path / "cwd").mkdir()
    (tmp_path / "home").mkdir()
    return tmp_path


def _run(installed, bare, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(installed[1]), *args], cwd=bare / "cwd", env=_bare_env(bare / "home"),
                          capture_output=True, text=True, timeout=timeout)


def test_wheel_holds_the_licence_and_every_file_the_app_reads(installed):
    """Every non-Python file of the app package the bundle ships (resources, the schema) is in the
    wheel, beside the licence and the metadata's SPDX expression."""
    names = set(zipfile.ZipFile(installed[2]).namelist())
    shipped = {src for src, _ in sd.package_datas(ROOT)}
    assert shipped and {s for s in shipped if s.startswith("app/resources/fonts/")}
    assert not shipped - names, f"missing from the wheel: {sorted(shipped - names)}"
    meta = zipfile.ZipFile(installed[2]).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: AGPL-3.0-or-later" in meta
    licence = next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
    assert zipfile.ZipFile(installed[2]).read(licence) == (ROOT / "LICENSE").read_bytes()


def test_installed_app_is_the_wheels_not_the_checkouts(installed, bare):
    python, _, _, tmp = installed
    out = subprocess.run([str(python), "-c", "import app, app.paths, sys; print(app.__file__); "
                          "print(app.paths.resource_path('demo')); print('\\n'.join(sys.path))"],
                         cwd=bare / "cwd", env=_bare_env(bare / "home"), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    app_file, demo, *path = out.stdout.splitlines()
    assert Path(app_file).is_relative_to(tmp / "venv"), app_file
    assert Path(demo).is_relative_to(tmp / "venv") and Path(demo).is_dir()
    assert str(ROOT) not in path and "" not in path[1:]


def test_version(installed, bare):
    from app import __version__

    out = _run(installed, bare, "--version", timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"hayai-desktop {__version__}"


def test_recognize_with_the_demo_model_the_wheel_carries(installed, bare):
    """The installed demo model reads two bubbles of a sample page as the checkout reads them."""
    tmp = bare
    truth = json.loads((ROOT / "app" / "resources" / "samples" / "page_0000.json").read_text(encoding="utf-8"))
    page = Image.open(ROOT / "app" / "resources" / "samples" / "page_0000.png").convert("RGB")
    crops = []
    for i, block in enumerate(sorted(truth["blocks"], key=lambda b: -len(b["text"]))[:2]):
        crops.append(tmp / f"crop{i}.png")
        page.crop(tuple(block["box"])).save(crops[-1])
    demo_model = subprocess.run([str(installed[0]), "-c", "from app.paths import resource_path; "
                                 "print(resource_path('demo', 'hayai-demo-ocr'))"], env=_bare_env(tmp / "home"),
                                cwd=tmp / "cwd", capture_output=True, text=True, check=True).stdout.strip()
    args = ["recognize", "--model", demo_model, "--device", "cpu", "--precision", "fp32", "--patches", "128",
            "--json", *map(str, crops)]
    out = _run(installed, bare, *args)
    assert out.returncode == 0, out.stderr
    source = subprocess.run([sys.executable, "-m", "app", *args[:2], str(ROOT / "app/resources/demo/hayai-demo-ocr"),
                             *args[3:]], cwd=ROOT, env={**_bare_env(tmp / "home"), "PYTHONPATH": str(ROOT)},
                            capture_output=True, text=True, timeout=600)
    assert source.returncode == 0, source.stderr
    wheel_texts = [r["text"] for r in json.loads(out.stdout)]
    assert wheel_texts == [r["text"] for r in json.loads(source.stdout)]
    assert len(wheel_texts) == 2 and all(wheel_texts)


def test_gui_demo_smoke_test(installed, bare):
    """The window opens offscreen on the installed sample pages with the installed demo models,
    runs the pipeline on a page and exits 0; the shipped CJK font draws every glyph."""
    out = _run(installed, bare, "--demo", "--smoke-test")
    assert out.returncode == 0, out.stderr
    assert "smoke test: done; page page_0000.png:" in out.stderr
    assert "smoke test: font Noto Sans CJK JP: every glyph" in out.stderr
    # Help > About's licence is the wheel's own copy (its dist-info), the notices from the metadata
    line = next(line for line in out.stderr.splitlines() if line.startswith("smoke test: licence "))
    assert ".dist-info/licenses/LICENSE" in line and str(installed[3] / "venv") in line, line
    assert "from the installed metadata" in line
    assert not os.listdir(bare / "cwd")
