"""A small library for the batch tests: three volumes of synthetic pages (tools.synth), read
with the demo models (app/resources/demo), and what `ocr` writes for each volume.

    library/
      Series A/vol 01/         5 pages (two chunks of the pipeline's 4)
      Series A/vol 02.cbz      3 pages in a CBZ
      vol 03/                  4 pages, the second one unreadable
"""
from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]
DEMO_OCR = ROOT / "app" / "resources" / "demo" / "hayai-demo-ocr"
DEMO_DETECTOR = ROOT / "app" / "resources" / "demo" / "hayai-demo-detector.pt"
PAGE_SIZE = (384, 544)  # small pages: the demo detector reads them at its 512 px
MODEL_ARGS = ["--model", str(DEMO_OCR), "--detector", str(DEMO_DETECTOR), "--patches", "128",
              "--max-new-tokens", "16", "--device", "cpu"]
VOLUMES = {"Series A/vol 01": "Series A/vol 01", "Series A/vol 02": "Series A/vol 02.cbz", "vol 03": "vol 03"}


def _pages(folder: Path, count: int, seed: int) -> None:
    from tools.synth import write_pages

    write_pages(folder, count, seed, size=PAGE_SIZE)
    for truth in folder.glob("*.json"):
        truth.unlink()


@pytest.fixture(scope="session")
def library(tmp_path_factory) -> Path:
    lib = tmp_path_factory.mktemp("batch") / "library"
    _pages(lib / "Series A" / "vol 01", 5, 9101)
    loose = lib.parent / "cbz-pages"
    _pages(loose, 3, 9102)
    with zipfile.ZipFile(lib / "Series A" / "vol 02.cbz", "w") as archive:
        for page in sorted(loose.glob("*.png")):
            archive.write(page, f"vol02/{page.name}")
    shutil.rmtree(loose)
    _pages(lib / "vol 03", 4, 9103)
    (lib / "vol 03" / "page_0001.png").write_bytes(b"\x89PNG\r\n\x1a\n this page was cut off")
    (lib / "notes.txt").write_text("not a volume", encoding="utf-8")
    return lib


def without_time(export: dict) -> dict:
    return {k: v for k, v in export.items() if k != "exported_at"}


def read_export(path: Path) -> dict:
    return without_time(json.loads(path.read_text(encoding="utf-8")))


def ocr_exports(library: Path, out: Path) -> dict[str, dict]:
    """{volume key: what `hayai-desktop ocr VOLUME` writes}: one `ocr` run over the three
    volumes, torch on one thread (see one_torch_thread)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        sources = [str(library / rel) for rel in VOLUMES.values()]
        assert main(["ocr", *sources, "--out", str(out)] + MODEL_ARGS) == 1  # one page is unreadable
    finally:
        torch.set_num_threads(before)
    return {key: read_export(out / f"{Path(key).name}.json") for key in VOLUMES}


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """The batch tests run torch on one thread, as a Ray worker given one CPU does: CPU kernels
    sum in an order that depends on the thread count, which can move a box by 0.01 px (the export
    rounds boxes to 0.01 px), and one reference must hold for both. (One thread is also the
    faster on a busy 2-core machine: bench/batch_throughput.py.)"""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def ocr_reference(library, tmp_path_factory) -> dict[str, dict]:
    """`ocr` on each volume, in this process."""
    return ocr_exports(library, tmp_path_factory.mktemp("ocr-reference"))


@pytest.fixture
def pages_read(monkeypatch) -> list[tuple[str, str]]:
    """(source folder or archive name, page name) of every page the pipeline reads from now on."""
    from app.core.reading.pipeline import Pipeline

    seen = []
    original = Pipeline.process

    def spy(self, source, names=None, *args, **kwargs):
        for name in (source.page_names if names is None else names):
            seen.append((Path(source.path).name, name))
        return original(self, source, names, *args, **kwargs)

    monkeypatch.setattr(Pipeline, "process", spy)
    return seen
