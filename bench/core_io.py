"""Timings of the document layer: listing, decoding, project save/load, exports, TXT import.

    python bench/core_io.py [--pages 500] [--blocks 20]

Builds a volume in a temporary folder (real-size JPEG pages, 1654x2339) and a project with
`--blocks` blocks per page, then prints seconds per operation. No GPU, no models.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from app.core.document.types import Block, Page, Project  # noqa: E402
from app.core.exports.json_txt import export_json, export_txt, import_txt  # noqa: E402
from app.core.project.files import load_project, open_project, save_project  # noqa: E402
from app.core.sources.source import open_source  # noqa: E402


def timed(label: str, fn, repeat: int = 1):
    start = time.perf_counter()
    for _ in range(repeat):
        result = fn()
    print(f"{label:<48} {(time.perf_counter() - start) / repeat * 1000:9.1f} ms")
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--blocks", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        folder = tmp / "vol"
        folder.mkdir()
        rng = np.random.default_rng(0)
        page = Image.fromarray(rng.integers(200, 255, (2339, 1654, 3), dtype=np.uint8))
        page.save(tmp / "page.jpg", quality=85)
        data = (tmp / "page.jpg").read_bytes()
        for i in range(args.pages):
            (folder / f"{i:04d}.jpg").write_bytes(data)
        with zipfile.ZipFile(tmp / "vol.cbz", "w", zipfile.ZIP_STORED) as zf:
            for i in range(args.pages):
                zf.writestr(f"vol/{i:04d}.jpg", data)
        print(f"{args.pages} pages of {len(data) / 1e6:.1f} MB, {args.blocks} blocks per page")

        source = timed(f"open_source(folder) [{args.pages} pages]", lambda: open_source(folder))
        timed("Source.size(one page) folder", lambda: source.size("0007.jpg"), repeat=20)
        timed("Source.load(one page) folder 1654x2339", lambda: source.load("0007.jpg"), repeat=5)
        cbz = timed(f"open_source(cbz) [{args.pages} pages]", lambda: open_source(tmp / "vol.cbz"))
        timed("Source.load(one page) cbz", lambda: cbz.load("vol/0007.jpg"), repeat=5)
        cbz.close()
        timed("open_project(folder) (no saved project)", lambda: open_project(folder))

        block = Block(id="b", order=1, kind="bubble", box=(100.0, 200.0, 300.0, 500.0),
                      vertical=True, score=0.9, ocr_text="吾輩は猫である。名前はまだ無い。",
                      model="hayai-ocr-nova", patches=384)
        pages = [Page(name=f"{i:04d}.jpg", width=1654, height=2339, processed=True,
                      blocks=tuple(Block(**{**block.__dict__, "id": f"b{j}", "order": j + 1})
                                   for j in range(args.blocks)))
                 for i in range(args.pages)]
        project = Project(source=str(folder), pages=pages)
        path = timed("save_project", lambda: save_project(project))
        print(f"{'  project file size':<48} {os.path.getsize(path) / 1e6:9.2f} MB")
        timed("load_project", lambda: load_project(path))
        timed("open_project(folder) (with saved project)", lambda: open_project(folder))
        timed("export_json", lambda: export_json(project, tmp / "out.json"))
        txt = timed("export_txt", lambda: export_txt(project, tmp / "out.txt", translations=True))
        timed("import_txt into translation", lambda: import_txt(project, txt, into="translation"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
