"""The demo volume (app/resources/samples: four synthetic pages with their truth) as a project, for
the mokuro export and reader-page tests: the truth's boxes, directions and text, a stand-in
translation per block, and a corrected text on one block."""
from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

from app.core.document.types import Block, Page, Project

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "app" / "resources" / "samples"


def truth_pages() -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(SAMPLES.glob("page_*.json"))]


def copy_demo_pages(folder: Path) -> Path:
    """The four sample images in `folder` (created): a source the tests may write beside."""
    folder.mkdir(parents=True, exist_ok=True)
    for t in truth_pages():
        shutil.copyfile(SAMPLES / t["image"], folder / t["image"])
    return folder


def demo_project(source: Path | str = SAMPLES) -> Project:
    pages = []
    for t in truth_pages():
        blocks = []
        for b in t["blocks"]:
            blocks.append(Block(id=b["id"], order=b["order"], kind=b["kind"], box=tuple(float(v) for v in b["box"]),
                                vertical=b["vertical"], score=0.9, ocr_text=b["text"], model="hayai-demo-ocr",
                                patches=256, translation=f"Line {b['order']} of page {t['index'] + 1}, in English."))
        pages.append(Page(name=t["image"], width=t["width"], height=t["height"], blocks=tuple(blocks), processed=True))
    # a corrected block: the export carries the user's text, not the model's
    first = pages[0].blocks[1]
    pages[0] = replace(pages[0], blocks=(pages[0].blocks[0], replace(first, text="「理谷意外」だ"), *pages[0].blocks[2:]))
    return Project(source=str(Path(source).resolve()), pages=pages, order="rtl")
