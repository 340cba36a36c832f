"""Small projects with Japanese text for the translation tests (no images needed)."""
from __future__ import annotations

from app.core.document.types import Block, Page, Project

PAGES = [
    ["タナカさん、おはよう！", "おはよう、ユキ。", "きょうはいいてんきだね"],
    ["ユキ、まって！", "なに？"],
    ["ありがとう", "タナカさんはやさしいね", "うん"],
    ["さようなら"],
]


def make_project(source: str = "/tmp/vol", texts=PAGES, processed: bool = True) -> Project:
    pages = []
    for p, lines in enumerate(texts):
        blocks = tuple(Block(id=f"b{i + 1}", order=i + 1, kind="bubble", box=(10.0 * i, 0.0, 10.0 * i + 8, 8.0),
                             ocr_text=t) for i, t in enumerate(lines))
        pages.append(Page(name=f"{p + 1:03d}.png", width=100, height=100, blocks=blocks, processed=processed))
    return Project(source=source, pages=pages)
