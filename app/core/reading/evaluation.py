"""End-to-end evaluation of pages with known truth: are the blocks found, and is their text right?

Truth is a folder of pages, each with a JSON file beside it (what `tools/synth` writes; any tool
can write it):

    {"image": "page_0000.png",
     "blocks": [{"box": [x0, y0, x1, y1], "text": "...", "kind": "bubble" | "text"}, ...]}

The pages go through the app's own pipeline (detect -> order -> crop -> read, `app.core.reading.pipeline`),
then each page's blocks are matched one-to-one to its truth blocks, greedily by IoU, keeping
pairs with IoU >= `iou_threshold` (0.5). Figures:

- recall: matched truth blocks / truth blocks (also per truth kind); precision: matched blocks /
  blocks found;
- CER of the matched blocks after the model card's normalization (app.ocr.text), and the
  end-to-end CER that also counts every missed truth block as read as nothing.

No Qt here; `hayai-desktop eval PAGES_FOLDER` prints these figures.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from app.core.document.boxes import IOU_THRESHOLD, match_boxes
from app.errors import UserError
from app.ocr.text import score
from app.textfile import read_json_file


@dataclass(frozen=True)
class TruthBlock:
    box: tuple[float, float, float, float]
    text: str
    kind: str = "text"


@dataclass(frozen=True)
class TruthPage:
    name: str  # the page's name in its folder (the "image" of its truth file)
    blocks: tuple[TruthBlock, ...]


def read_truth_folder(folder: str | Path) -> list[TruthPage]:
    """Every `*.json` truth file of `folder` whose image is there, in name order (hidden files,
    such as the project file and its lock, are not truth files).

    UserError names the file when one is not a truth file, or when the folder has none.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise UserError(f"{folder}: not a folder of pages with truth files")
    pages = []
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith("."):  # the app's own files (project, its lock, autosave), never truth
            continue
        try:
            raw = read_json_file(path, "truth file", 'A truth file is {"image": ..., "blocks": [...]}.')
            image = str(raw["image"])
            blocks = tuple(TruthBlock(tuple(float(v) for v in b["box"]), str(b["text"]), str(b.get("kind", "text")))
                           for b in raw["blocks"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UserError(f"{path}: not a truth file ({exc.__class__.__name__}: {exc}); expected "
                            '{"image": ..., "blocks": [{"box": [x0, y0, x1, y1], "text": ...}]}') from None
        if any(len(b.box) != 4 for b in blocks):
            raise UserError(f"{path}: every block needs a box [x0, y0, x1, y1]")
        if not (folder / image).is_file():
            raise UserError(f"{path}: its image {image!r} is not in {folder}")
        pages.append(TruthPage(image, blocks))
    if not pages:
        raise UserError(f"{folder}: no truth files (*.json with \"image\" and \"blocks\") in this folder")
    return pages


@dataclass
class PagesEvaluation:
    """Totals over the evaluated pages; `errors` lists (page, message) for pages that failed."""

    pages: int = 0
    truth_blocks: int = 0
    found_blocks: int = 0
    matched: int = 0
    truth_by_kind: dict[str, int] = field(default_factory=dict)
    matched_by_kind: dict[str, int] = field(default_factory=dict)
    matched_texts: list[tuple[str, str]] = field(default_factory=list)  # (prediction, reference)
    missed_texts: list[str] = field(default_factory=list)  # references of unmatched truth blocks
    errors: list[tuple[str, str]] = field(default_factory=list)

    def add(self, truth: TruthPage, page, iou_threshold: float = IOU_THRESHOLD) -> None:
        """Score one page: `page` is the pipeline's `app.core.document.types.Page` for `truth`."""
        self.pages += 1
        if page.error:
            self.errors.append((truth.name, page.error))
        found = list(page.blocks)
        pairs = match_boxes([b.box for b in truth.blocks], [b.box for b in found], iou_threshold)
        matched_truth = {ti for ti, _ in pairs}
        self.truth_blocks += len(truth.blocks)
        self.found_blocks += len(found)
        self.matched += len(pairs)
        for ti, b in enumerate(truth.blocks):
            self.truth_by_kind[b.kind] = self.truth_by_kind.get(b.kind, 0) + 1
            if ti in matched_truth:
                self.matched_by_kind[b.kind] = self.matched_by_kind.get(b.kind, 0) + 1
            else:
                self.missed_texts.append(b.text)
        for ti, fi in pairs:
            self.matched_texts.append((found[fi].display_text, truth.blocks[ti].text))

    def figures(self) -> dict:
        """Recall, precision, CER (matched blocks), end-to-end CER, exact match, counts."""
        matched = score([p for p, _ in self.matched_texts], [r for _, r in self.matched_texts])
        missed = score([""] * len(self.missed_texts), self.missed_texts)
        chars = matched.ref_chars + missed.ref_chars
        return {
            "pages": self.pages,
            "truth_blocks": self.truth_blocks,
            "found_blocks": self.found_blocks,
            "matched_blocks": self.matched,
            "recall": self.matched / self.truth_blocks if self.truth_blocks else 0.0,
            "precision": self.matched / self.found_blocks if self.found_blocks else 0.0,
            "recall_by_kind": {k: self.matched_by_kind.get(k, 0) / n for k, n in sorted(self.truth_by_kind.items())},
            "cer": matched.cer,
            "exact_match": matched.exact_match,
            "end_to_end_cer": (matched.edits + missed.edits) / chars if chars else 0.0,
            "page_errors": len(self.errors),
        }


def evaluate_pages(pipeline, folder: str | Path, truth: Iterable[TruthPage] | None = None,
                   iou_threshold: float = IOU_THRESHOLD,
                   progress: Callable | None = None, cancel: Callable[[], bool] | None = None) -> PagesEvaluation:
    """Run `pipeline` (app.core.reading.pipeline.Pipeline) over the truth pages of `folder` and score them."""
    from app.core.sources.source import open_source

    truth = list(truth if truth is not None else read_truth_folder(folder))
    by_name = {t.name: t for t in truth}
    source = open_source(folder)
    names = [n for n in source.page_names if n in by_name]
    missing = sorted(set(by_name) - set(names))
    if missing:
        raise UserError(f"{folder}: truth files name images the folder does not list as pages: {', '.join(missing[:5])}")
    result = PagesEvaluation()
    for page in pipeline.process(source, names, progress=progress, cancel=cancel):
        result.add(by_name[page.name], page, iou_threshold)
    return result
