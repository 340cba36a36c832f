"""Measurements of the translated-page stage on synthetic pages, where the truth is known.

Used by bench/render_quality.py (prints the figures) and tests/render/test_measurements.py
(asserts them with margins). Pages come from tools.synth with their clean truth and text mask
(`generate_page_layers`); translations are stand-in English sentences about 1.7 times as long
(in letters) as the Japanese they replace, about what English translations of manga run to.

Figures:
- cleaning error inside bubbles: over the truth's glyph pixels (mask > 0) of bubble blocks,
  the mean absolute grey-level difference between the cleaned page and the clean truth, and
  the share of those pixels off by more than 48 grey levels;
- pixels changed outside the blocks (cleaned vs original, outside every block's box): must be 0;
- text on screentone: the same errors for Japanese drawn straight onto screentone (no halo),
  with the automatic mask and with the true mask (the engine alone);
- typesetting: share of lettered blocks that fit at or above the minimum size, pixels drawn
  outside the bubble's shape (spill, must be 0), mean font size chosen.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from PIL import Image

from app.core.document.types import Block, Page
from app.render.masks import auto_mask, dilate
from app.render.page import PageRenderer, RenderBlock
from app.render.style import TextStyle
from tools.synth.pages import generate_page_layers, page_rng

WORDS = ("the of and to you it is that was he for on are with as his they be at one have this from "
         "or had by hot word but what some we can out other were all there when up use your how said an "
         "each she which do their time if will way about many then them write would like so these her "
         "long make thing see him two has look more day could go come did number sound no most people my "
         "over know water than call first who may down side been now find really never again stop wait "
         "please sorry together tomorrow everything nothing somebody understand remember").split()
OFF = 48  # grey levels: a cleaned pixel further than this from the truth counts as wrong


def fake_translation(source: str, rng: np.random.Generator) -> str:
    """English-looking words, about 1.7 letters per source character, with end punctuation."""
    target = max(3, round(len(source) * 1.7))
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < target:
        words.append(WORDS[int(rng.integers(len(WORDS)))])
    text = " ".join(words)
    return text[0].upper() + text[1:] + str(rng.choice([".", "!", "?", "...", "!?"]))


@dataclass(eq=False)
class Case:
    """One synthetic page: RGB page, RGB clean truth, glyph mask (H, W) uint8, truth, Page."""

    page: np.ndarray
    clean: np.ndarray
    mask: np.ndarray
    truth: dict
    doc: Page


def make_case(seed: int, index: int, size=(1024, 1448), noise: bool = True) -> Case:
    page, clean, mask, truth = generate_page_layers(seed, index, size=size, noise=noise)
    rng = page_rng(seed, index, stream=7)
    blocks = tuple(Block(id=b["id"], order=b["order"], kind=b["kind"], box=tuple(float(v) for v in b["box"]),
                         vertical=b["vertical"], ocr_text=b["text"], translation=fake_translation(b["text"], rng))
                   for b in truth["blocks"])
    doc = Page(name=f"page_{index:04d}.png", width=size[0], height=size[1], blocks=blocks, processed=True)
    rgb = lambda im: np.asarray(im.convert("RGB"))  # noqa: E731
    return Case(rgb(page), rgb(clean), np.asarray(mask), truth, doc)


def render_case(case: Case, engine, style: TextStyle | None = None, text: str = "translation"):
    """The page through PageRenderer: (RenderedPage, blocks)."""
    from app.core.exports.translated_pages import RenderOptions, render_blocks

    blocks = render_blocks(case.doc, style or TextStyle(), RenderOptions(text=text))
    return PageRenderer(case.page, engine).render(blocks), blocks


def _boxes_mask(shape, boxes) -> np.ndarray:
    out = np.zeros(shape, bool)
    for x0, y0, x1, y1 in boxes:
        out[max(0, int(y0)):int(np.ceil(y1)), max(0, int(x0)):int(np.ceil(x1))] = True
    return out


@dataclass
class CleanFigures:
    pixels: int = 0  # glyph pixels measured
    abs_error: float = 0.0  # sum of |cleaned - truth| over them (grey levels)
    off: int = 0  # how many of them are off by more than OFF
    changed_outside: int = 0  # pixels changed outside every block's box
    methods: dict = field(default_factory=dict)

    @property
    def mae(self) -> float:
        return self.abs_error / max(1, self.pixels)

    @property
    def off_share(self) -> float:
        return self.off / max(1, self.pixels)

    def add(self, other: CleanFigures) -> None:
        self.pixels += other.pixels
        self.abs_error += other.abs_error
        self.off += other.off
        self.changed_outside += other.changed_outside
        for k, v in other.methods.items():
            self.methods[k] = self.methods.get(k, 0) + v


def clean_figures(case: Case, cleaned: np.ndarray, kinds=("bubble",), methods=None) -> CleanFigures:
    gray = lambda a: a.astype(np.int16).mean(axis=2)  # noqa: E731
    blocks = [b for b in case.truth["blocks"] if b["kind"] in kinds]
    where = (case.mask > 0) & _boxes_mask(case.mask.shape, [b["box"] for b in blocks])
    diff = np.abs(gray(cleaned) - gray(case.clean))[where]
    outside = ~_boxes_mask(case.mask.shape, [b["box"] for b in case.truth["blocks"]])
    changed = (cleaned != case.page).any(axis=2) & outside
    counts: dict = {}
    for m in (methods or {}).values():
        counts[m] = counts.get(m, 0) + 1
    return CleanFigures(int(where.sum()), float(diff.sum()), int((diff > OFF).sum()), int(changed.sum()), counts)


@dataclass
class TypesetFigures:
    blocks: int = 0
    fit: int = 0  # at or above the minimum size
    spill: int = 0  # pixels outside the bubble's shape
    size_sum: float = 0.0
    overflow: int = 0

    @property
    def fit_share(self) -> float:
        return self.fit / max(1, self.blocks)

    @property
    def mean_size(self) -> float:
        return self.size_sum / max(1, self.blocks)

    def add_layers(self, layers) -> None:
        for _b, layer in layers:
            self.blocks += 1
            self.fit += layer.layout.fits
            self.overflow += layer.layout.overflow
            self.spill += layer.spill
            self.size_sum += layer.layout.size


def measure_pages(engine, seed: int, pages: int, size=(1024, 1448)) -> tuple[CleanFigures, CleanFigures, TypesetFigures]:
    """(bubbles, free text, typesetting) figures of pages 0..pages-1 of run `seed`."""
    bubbles, free, typeset = CleanFigures(), CleanFigures(), TypesetFigures()
    for i in range(pages):
        case = make_case(seed, i, size=size)
        result, _blocks = render_case(case, engine)
        bubbles.add(clean_figures(case, result.cleaned, methods=result.methods))
        free.add(clean_figures(case, result.cleaned, kinds=("text",)))
        typeset.add_layers(result.layers)
    return bubbles, free, typeset


def tone_case(seed: int, index: int, size=(360, 300)):
    """Japanese drawn straight onto screentone, no halo: (page RGB, clean RGB, mask, box)."""
    from tools.synth.art import screentone
    from tools.synth.fonts import find_faces
    from tools.synth.text import TextStyle as SynthStyle
    from tools.synth.text import random_text, render, split_lines

    rng = page_rng(seed, index, stream=9)
    w, h = size
    tone = screentone(rng, w, h)
    text = random_text(rng, min_len=6, max_len=14)
    vertical = bool(rng.random() < 0.5)
    style = SynthStyle(find_faces()[0], int(rng.integers(22, 34)))
    glyphs = render(split_lines(text, 3, 6), style, vertical)
    page = Image.fromarray(tone, "L")
    tx, ty = (w - glyphs.width) // 2, (h - glyphs.height) // 2
    page.paste(0, (tx, ty), glyphs)
    mask = Image.new("L", (w, h), 0)
    mask.paste(glyphs, (tx, ty))
    x0, y0, x1, y1 = glyphs.getbbox()
    box = (tx + x0 - 6, ty + y0 - 6, tx + x1 + 6, ty + y1 + 6)
    rgb = lambda im: np.asarray(im.convert("RGB"))  # noqa: E731
    return rgb(page), rgb(Image.fromarray(tone, "L")), np.asarray(mask), box


def tone_figures(seeds, engine) -> tuple[CleanFigures, CleanFigures]:
    """(with the automatic mask, with the true glyph mask dilated by 1) over screentone cases."""
    from app.render.inpaint import clean_block
    from app.render.masks import BlockMask

    auto_fig, true_fig = CleanFigures(), CleanFigures()
    for i in seeds:
        page, clean, mask, box = tone_case(0, i)
        truth = {"blocks": [{"kind": "text", "box": list(box)}]}
        case = Case(page, clean, mask, truth, Page(name="tone"))
        bm = auto_mask(page[..., 0], box, kind="text")
        for fig, block_mask in ((auto_fig, bm), (true_fig, None)):
            if block_mask is None:
                h, w = mask.shape
                full = np.ones((h, w), bool)
                block_mask = BlockMask(0, 0, dilate(mask > 0, 1), full)
            out = page.copy()
            patch = clean_block(page, block_mask, engine)
            patch.apply(out)
            fig.add(clean_figures(case, out, kinds=("text",), methods={"b": patch.method}))
    return auto_fig, true_fig


__all__ = ["Case", "CleanFigures", "RenderBlock", "TypesetFigures", "clean_figures", "fake_translation",
           "make_case", "measure_pages", "render_case", "tone_case", "tone_figures"]
