"""Reading order, panels, false-block filter and text-box -> bubble on real published pages.

Reads OpenMantra-format data (Hinami et al., AAAI 2021: a list of books, each page with its
image, its panels `frame` and its text boxes `text` in the professional translators' reading
order). The annotated text boxes go in as detections of a text detector (kind "text"), through
`app.detect.build_regions` with the page, as the app builds the blocks; per book and overall:

- order: pages (with 2+ text boxes) whose blocks come exactly in the annotators' order, and the
  mean Kendall tau; also the same without the page (the page-wide rule, no panels, no filter)
  and with the annotated panels given (what a perfect panel finder would give);
- panels: `app.detect.panels.find_panels` against the annotated frames, matched one to one
  (IoU >= 0.5): precision, recall, pages with several panels found as one; how often the
  finder says it is sure;
- dropped: annotated text boxes that no block covers (the false-block filter dropped them);
- direction: the writing direction from the ink (app.detect.direction) on the annotated boxes
  whose shape says it (one line of 2+ characters, much taller than wide or wider than tall;
  the data has no direction field), also on the short lines of 2-3 characters;
- free text: blocks in no bubble, read as captions and as sound effects (app.detect.freetext;
  the data marks neither);
- bubbles: for each text box, the bubble found around it (`app.detect.bubbles`, when there):
  share of boxes with a bubble, and of those, the share whose bubble contains the box and
  stays inside the annotated panel it belongs to.

    python bench/real_pages.py [--data DIR] [--books a,b] [--json] [--draw DIR --draw-pages book:idx,...]
                               [--letter DIR]

--learned MODEL reads the order with the pairwise model of tools/order_model.py (trained on
generated pages by tools/train_order.py --order) instead of the rules, for comparing the two.

--letter writes the chosen pages (--draw-pages) lettered with the annotators' English, cleaned
by OpenCV, through the app's export (app.core.exports.translated_pages): how a page read with a text
detector comes out, each text box widened to its bubble. Only for looking at, never committed.

The data is CC BY-NC: this reads it where it lies and writes nothing of it into the repository.
About half a second a page on a shared CPU.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from app.detect import Detection, build_regions  # noqa: E402
from app.detect.blocks import gray_page, intersection, iou, read_page  # noqa: E402
from app.detect.confidence import needs_check  # noqa: E402
from app.detect.order import reading_order  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "openmantra-dev"
PANEL_IOU = 0.5
COVERED = 0.5  # a text box is kept when a block covers this share of it


def kendall_tau(ranks: list[int]) -> float:
    """Kendall tau between `ranks` (truth indices in the order found) and 0..n-1 (1.0: same)."""
    n = len(ranks)
    if n < 2:
        return 1.0
    concordant = discordant = 0
    for i in range(n):
        for j in range(i + 1, n):
            if ranks[i] < ranks[j]:
                concordant += 1
            elif ranks[i] > ranks[j]:
                discordant += 1
    return (concordant - discordant) / (n * (n - 1) / 2)


def found_order(truth: list[tuple], regions) -> tuple[list[int], list[int]]:
    """(truth indices in the order of the blocks that cover them, truth indices no block covers)."""
    placed, dropped = [], []
    for ti, t in enumerate(truth):
        a = max(1e-6, (t[2] - t[0]) * (t[3] - t[1]))
        cover = [(intersection(t, r.box) / a, -k) for k, r in enumerate(regions)]
        best = max(cover, default=(0.0, 0))
        if best[0] >= COVERED:
            placed.append((-best[1], ti))
        else:
            dropped.append(ti)
    return [ti for _, ti in sorted(placed)], dropped


def match_panels(truth: list[tuple], found: list[tuple]) -> tuple[int, int]:
    """(matched pairs, found panels covering 2+ truth panels) at IoU >= PANEL_IOU, one to one."""
    pairs = sorted(((iou(t, f), ti, fi) for ti, t in enumerate(truth) for fi, f in enumerate(found)), reverse=True)
    used_t, used_f, n = set(), set(), 0
    for v, ti, fi in pairs:
        if v < PANEL_IOU:
            break
        if ti not in used_t and fi not in used_f:
            used_t.add(ti)
            used_f.add(fi)
            n += 1
    merged = 0
    for f in found:
        inside = [t for t in truth if intersection(t, f) >= 0.7 * max(1e-6, (t[2] - t[0]) * (t[3] - t[1]))]
        merged += len(inside) >= 2
    return n, merged


def _box(d: dict) -> tuple:
    return (float(d["x"]), float(d["y"]), float(d["x"] + d["w"]), float(d["y"] + d["h"]))


class Book:
    def __init__(self, name: str):
        self.name = name
        self.f = {k: 0.0 for k in (
            "pages", "order_pages", "exact", "exact_pagewide", "exact_truth_panels", "tau", "tau_pagewide",
            "tau_truth_panels", "truth_panels", "found_panels", "matched_panels", "merged_pages", "sure_pages",
            "text_boxes", "dropped", "with_bubble", "bubble_ok", "dir_boxes", "dir_right", "dir_short",
            "dir_short_right", "captions", "sfx", "marked", "marked_wrong", "unmarked_right")}
        self.failures: list[str] = []
        self.pages: list[tuple[int, list, bool]] = []  # (page index, panels found, sure)
        self.confidences: list[tuple[float, bool]] = []  # (order confidence, in exact order) of pages with 2+ boxes
        self.checks: dict[int, str] = {}  # page index -> why it is marked "check the order"

    def add(self, key: str, v: float = 1.0) -> None:
        self.f[key] += v

    def merge(self, other: Book) -> None:
        for k, v in other.f.items():
            self.f[k] += v
        self.confidences += other.confidences

    def summary(self) -> dict:
        f = self.f
        n = max(1.0, f["order_pages"])
        return {
            "pages": int(f["pages"]), "order_pages": int(f["order_pages"]),
            "order_exact": f["exact"] / n, "order_exact_pages": int(f["exact"]),
            "kendall_tau": f["tau"] / n,
            "pagewide_exact": f["exact_pagewide"] / n, "pagewide_tau": f["tau_pagewide"] / n,
            "truth_panels_exact": f["exact_truth_panels"] / n, "truth_panels_tau": f["tau_truth_panels"] / n,
            "panel_precision": f["matched_panels"] / max(1.0, f["found_panels"]),
            "panel_recall": f["matched_panels"] / max(1.0, f["truth_panels"]),
            "panels_truth": int(f["truth_panels"]), "panels_found": int(f["found_panels"]),
            "pages_panels_merged": int(f["merged_pages"]), "pages_panels_sure": int(f["sure_pages"]),
            "text_boxes": int(f["text_boxes"]), "dropped": int(f["dropped"]),
            "with_bubble": int(f["with_bubble"]), "bubble_ok": int(f["bubble_ok"]),
            "direction": f["dir_right"] / max(1.0, f["dir_boxes"]), "direction_boxes": int(f["dir_boxes"]),
            "direction_short": f["dir_short_right"] / max(1.0, f["dir_short"]), "direction_short_boxes": int(f["dir_short"]),
            "captions": int(f["captions"]), "sfx": int(f["sfx"]),
            # the "check the order" mark (app.detect.confidence) against the annotators' order
            "marked": int(f["marked"]), "marked_share": f["marked"] / n,
            "marked_wrong": int(f["marked_wrong"]),
            "marked_precision": f["marked_wrong"] / max(1.0, f["marked"]),
            "unmarked_right": f["unmarked_right"] / max(1.0, f["order_pages"] - f["marked"]),
            "wrong_marked": f["marked_wrong"] / max(1.0, f["order_pages"] - f["exact"]),
            "wrong_pages": int(f["order_pages"] - f["exact"]),
        }


def _bubble(gray, box):
    try:
        from app.detect.bubbles import bubble_around
    except ImportError:
        return None
    return bubble_around(gray, box)


@dataclass
class PageData:
    """One annotated page, loaded once: the grayscale page, its text boxes (in the annotators'
    order) with their Japanese, and its panels (unordered)."""

    book: str
    index: int
    gray: np.ndarray
    size: tuple[int, int]
    truth: list[tuple]
    frames: list[tuple]
    texts: list[str]
    image_path: Path | None = None


def load_pages(data: Path, books: list[str] | None = None) -> dict[str, list[PageData]]:
    """The annotated pages of `data` (an OpenMantra-format folder), book by book."""
    annotation = json.loads((data / "annotation.json").read_text(encoding="utf-8"))
    out: dict[str, list[PageData]] = {}
    for entry in annotation:
        name = entry["book_title"]
        if books and name not in books:
            continue
        pages = []
        for page in entry["pages"]:
            path = data / page["image_paths"]["ja"]
            with Image.open(path) as image:
                gray = gray_page(image.convert("RGB"))
            pages.append(PageData(name, int(page["page_index"]), gray, (gray.shape[1], gray.shape[0]),
                                  [_box(t) for t in page["text"]], [_box(f) for f in page["frame"]],
                                  [t.get("text_ja", "") for t in page["text"]], path))
        out[name] = pages
    return out


def synthetic_pages(seed: int, count: int, layout: str | None = None, size: tuple[int, int] | None = None) -> list[PageData]:
    """`count` fresh pages of tools.synth (run `seed`; `layout`: None for the classic grid pages,
    a kind of tools.synth.layouts or "mixed") as annotated pages: the truth's text boxes (the
    glyphs' ink) in the truth's reading order, its panels."""
    from tools.synth import generate_page

    out = []
    for i in range(count):
        image, truth = generate_page(seed, i, layout=layout, **({"size": size} if size else {}))
        gray = gray_page(image)
        out.append(PageData("synthetic", i, gray, (gray.shape[1], gray.shape[0]),
                            [tuple(float(v) for v in b["text_box"]) for b in truth["blocks"]],
                            [tuple(float(v) for v in f) for f in truth["panels"]],
                            [b["text"] for b in truth["blocks"]]))
    return out


def measure_orders(pages: list[PageData], order: str, name: str = "") -> dict:
    """The order and panel figures of `pages` under the rules as they are now (no direction,
    bubble or free-text figures: what bench/cross_books.py tunes and measures)."""
    book = Book(name)
    for pd in pages:
        order_page(book, pd, order)
    return book.summary()


class _LayoutSpy:
    """Records the panel layout `build_regions` computes (app.detect.panels.panel_layout), so
    the panels scored are the ones the order used, computed once."""

    def __init__(self):
        from app.detect import panels as panels_mod

        self.module, self.real, self.last = panels_mod, panels_mod.panel_layout, None

    def __enter__(self):
        def spy(*args, **kwargs):
            self.last = self.real(*args, **kwargs)
            return self.last

        self.module.panel_layout = spy
        return self

    def __exit__(self, *exc):
        self.module.panel_layout = self.real


LEARNED: dict | None = None  # --learned MODEL: tools/order_model.py's model, loaded


def _learned(reading, size, order: str) -> list[int]:
    """The regions of `reading` (in the rules' order) in the learned model's order."""
    from app.detect.order import panel_of
    from tools.order_model import learned_order

    boxes = [r.box for r in reading.regions]
    wide = reading_order(boxes, order)
    ranks = [panel_of(b, reading.panels) for b in boxes] if reading.panels else [0] * len(boxes)
    return learned_order(boxes, size, order, ranks, list(range(len(boxes))), [wide.index(i) for i in range(len(boxes))],
                         LEARNED)


def order_page(book: Book, pd: PageData, order: str) -> list:
    """Score the order and the panels of one page into `book`; the regions found."""
    dets = [Detection(t, "text", 0.9, None, "text") for t in pd.truth]
    with _LayoutSpy() as spy:
        reading = read_page(dets, pd.size, order, page=pd.gray)
    regions = list(reading.regions)
    if LEARNED is not None:  # --learned: the pairwise model's order instead of the rules'
        regions = [regions[i] for i in _learned(reading, pd.size, order)]
    layout = spy.last
    found, sure = ([p for k, p in enumerate(layout.panels) if k not in getattr(layout, "loose", ())], bool(layout.sure)
                   ) if layout is not None else ([], False)
    book.add("pages")
    book.add("text_boxes", len(pd.truth))
    ranks, dropped = found_order(pd.truth, regions)
    book.add("dropped", len(dropped))
    book.add("truth_panels", len(pd.frames))
    book.add("found_panels", len(found))
    matched, merged = match_panels(pd.frames, found)
    book.add("matched_panels", matched)
    book.add("merged_pages", merged > 0)
    book.add("sure_pages", sure)
    if len(pd.truth) >= 2:
        book.add("order_pages")
        exact = ranks == sorted(ranks) and not dropped
        book.add("exact", exact)
        book.add("tau", kendall_tau(ranks))
        plain = build_regions(dets, pd.size, order)
        pw, _ = found_order(pd.truth, plain)
        book.add("exact_pagewide", pw == sorted(pw))
        book.add("tau_pagewide", kendall_tau(pw))
        tp = reading_order(pd.truth, order, _truth_panels_in_order(pd.frames, order))
        book.add("exact_truth_panels", tp == sorted(tp))
        book.add("tau_truth_panels", kendall_tau(tp))
        if not exact:
            book.failures.append(f"{pd.index}: {ranks} dropped {dropped}")
        marked = needs_check(reading.confidence)
        book.add("marked", marked)
        book.add("marked_wrong", marked and not exact)
        book.add("unmarked_right", not marked and exact)
        book.confidences.append((reading.confidence, bool(exact)))
        if marked:
            book.checks[pd.index] = reading.doubts[0] if reading.doubts else "low confidence"
    book.pages.append((pd.index, found, sure))
    return regions


def run_page(book: Book, pd: PageData, order: str, draw: Path | None) -> None:
    regions = order_page(book, pd, order)
    gray, truth, frames = pd.gray, pd.truth, pd.frames
    book.add("captions", sum(r.kind == "caption" for r in regions))
    book.add("sfx", sum(r.kind == "sfx" for r in regions))
    # writing direction, where the box's shape says it (see _shape_direction)
    from app.detect.direction import writing_direction

    for t, text in zip(truth, pd.texts, strict=True):
        want = _shape_direction(t, text)
        if want is None:
            continue
        got = writing_direction(gray, t)
        book.add("dir_boxes")
        book.add("dir_right", got is want)
        if len(_chars(text)) <= 3:
            book.add("dir_short")
            book.add("dir_short_right", got is want)
    # bubbles
    for t in truth:
        b = _bubble(gray, t)
        if b is None:
            continue
        book.add("with_bubble")
        bb = b.box
        contains = bb[0] <= t[0] + 1 and bb[1] <= t[1] + 1 and bb[2] >= t[2] - 1 and bb[3] >= t[3] - 1
        owner = max(frames, key=lambda f: intersection(f, t), default=None)
        inside = owner is None or intersection(owner, bb) >= 0.9 * max(1e-6, (bb[2] - bb[0]) * (bb[3] - bb[1]))
        book.add("bubble_ok", contains and inside)
    if draw is not None:
        _, found, sure = book.pages[-1]
        with Image.open(pd.image_path) as image:
            _draw(draw / f"{book.name}_{pd.index:03d}.png", image.convert("RGB"), regions, found, sure, frames,
                  book.checks.get(pd.index, ""))


TALL, WIDE = 1.2, 1.8  # a box this much taller than wide holds vertical text, this much wider horizontal


def _chars(text: str) -> str:
    return "".join(c for c in text if not c.isspace())


def _shape_direction(box: tuple, text: str) -> bool | None:
    """The writing direction that the annotated box's shape says, where it clearly says one
    (OpenMantra has no direction field): Japanese text of 2+ characters in a box TALL times
    taller than wide is set vertically, in a box WIDE times wider than tall horizontally (a
    proxy: checked by eye on the two dev books; squarish boxes and single characters: None)."""
    n = len(_chars(text))
    w, h = box[2] - box[0], box[3] - box[1]
    if n < 2 or w <= 0 or h <= 0:
        return None
    if h >= TALL * w:
        return True
    if w >= WIDE * h:
        return False
    return None


def _truth_panels_in_order(frames: list[tuple], order: str) -> list[tuple]:
    """The annotated panels (unordered in the data) in reading order by the page-wide rule."""
    idx = reading_order(frames, order)
    return [frames[i] for i in idx]


def _draw(path: Path, image, regions, panels, sure, frames, check: str = "") -> None:
    """The page with the annotated panels (green), the panels found (blue; orange: not sure),
    the blocks in the order read (red numbers), and `check` (the 'check the order' doubt) on top."""
    from PIL import ImageDraw, ImageFont

    out = image.copy()
    d = ImageDraw.Draw(out)
    for f in frames:
        d.rectangle(f, outline=(0, 160, 0), width=2)
    for k, p in enumerate(panels):
        d.rectangle(p, outline=(0, 90, 255) if sure else (255, 140, 0), width=4)
        d.text((p[0] + 6, p[1] + 4), f"P{k + 1}", fill=(0, 90, 255))
    font = ImageFont.load_default(size=28)
    for n, r in enumerate(regions, start=1):
        d.rectangle(r.box, outline=(220, 0, 0), width=3)
        d.text((r.box[0] + 2, r.box[1] + 2), str(n), fill=(220, 0, 0), font=font, stroke_width=2, stroke_fill=(255, 255, 255))
    if check:
        d.text((10, 10), f"check the order: {check}", fill=(200, 0, 120), font=font, stroke_width=3, stroke_fill=(255, 255, 255))
    path.parent.mkdir(parents=True, exist_ok=True)
    out.save(path)


def letter_page(out: Path, data: Path, page: dict, order: str) -> Path:
    """`page` lettered with the annotators' English (each block: the English of the text boxes it
    covers, in their order) into `out`/<book>_<index>.png; the path written."""
    import shutil
    import tempfile
    from dataclasses import replace

    from app.core.document.types import Page, Project
    from app.core.exports.translated_pages import export_translated, translated_options
    from app.core.reading.pipeline import build_blocks
    from app.render.inpaint import load_inpainter

    image = Image.open(data / page["image_paths"]["ja"]).convert("RGB")
    truth = [_box(t) for t in page["text"]]
    blocks = []
    for b in build_blocks([Detection(t, "text", 0.9) for t in truth], image.size, order, page=gray_page(image)):
        covered = [k for k, t in enumerate(truth) if intersection(t, b.box) >= COVERED * max(1e-6, (t[2] - t[0]) * (t[3] - t[1]))]
        blocks.append(replace(b, ocr_text="".join(page["text"][k].get("text_ja", "") for k in covered),
                              translation=" ".join(page["text"][k].get("text_en", "") for k in covered)))
    with tempfile.TemporaryDirectory() as tmp:
        image.save(Path(tmp) / "page.png")
        project = Project(source=tmp, pages=[Page("page.png", image.width, image.height, tuple(blocks), processed=True)])
        export_translated(project, "png", Path(tmp) / "out", load_inpainter("opencv"), translated_options("en"))
        out.mkdir(parents=True, exist_ok=True)
        target = out / f"{Path(page['image_paths']['ja']).parts[-3]}_{page['page_index']:03d}.png"
        shutil.copyfile(Path(tmp) / "out" / "page.png", target)
    return target


def run(data: Path, books: list[str] | None, order: str, draw: Path | None, draw_pages: set[str],
        letter: Path | None = None, pages: dict[str, list[PageData]] | None = None) -> dict:
    """Every figure, book by book and overall (`pages`: loaded already, else from `data`)."""
    pages = load_pages(data, books) if pages is None else pages
    annotation = json.loads((data / "annotation.json").read_text(encoding="utf-8")) if letter is not None else []
    started = time.perf_counter()
    per_book, total = {}, Book("all")
    failures = {}
    for name, book_pages in pages.items():
        book = Book(name)
        for pd in book_pages:
            key = f"{name}:{pd.index}"
            target = draw if (draw is not None and (not draw_pages or key in draw_pages)) else None
            run_page(book, pd, order, target)
        if letter is not None:
            for page in next(e["pages"] for e in annotation if e["book_title"] == name):
                if not draw_pages or f"{name}:{page['page_index']}" in draw_pages:
                    letter_page(letter, data, page, order)
        per_book[name] = book.summary()
        failures[name] = book.failures
        total.merge(book)
    return {"books": per_book, "all": total.summary(), "failures": failures,
            "seconds": round(time.perf_counter() - started, 1)}


ROWS = [
    ("order exact (pages)", lambda s: f"{100 * s['order_exact']:.1f} % ({s['order_exact_pages']}/{s['order_pages']})"),
    ("mean Kendall tau", lambda s: f"{s['kendall_tau']:.4f}"),
    ("page-wide rule: exact / tau", lambda s: f"{100 * s['pagewide_exact']:.1f} % / {s['pagewide_tau']:.4f}"),
    ("annotated panels: exact / tau", lambda s: f"{100 * s['truth_panels_exact']:.1f} % / {s['truth_panels_tau']:.4f}"),
    ("panels precision / recall", lambda s: f"{s['panel_precision']:.3f} / {s['panel_recall']:.3f} "
                                            f"({s['panels_found']} found, {s['panels_truth']} annotated)"),
    ("pages with panels merged", lambda s: f"{s['pages_panels_merged']} of {s['pages']}"),
    ("pages the finder is sure of", lambda s: f"{s['pages_panels_sure']} of {s['pages']}"),
    ("text boxes dropped", lambda s: f"{s['dropped']} of {s['text_boxes']}"),
    ("bubble found / right", lambda s: f"{s['with_bubble']} / {s['bubble_ok']} of {s['text_boxes']}"),
    ("free text: captions / SFX", lambda s: f"{s['captions']} / {s['sfx']} of {s['text_boxes']}"),
    ("'check the order': pages marked", lambda s: f"{100 * s['marked_share']:.1f} % ({s['marked']}/{s['order_pages']})"),
    ("... of those out of order, marked", lambda s: f"{100 * s['wrong_marked']:.1f} % ({s['marked_wrong']}/{s['wrong_pages']})"),
    ("... marked and out of order", lambda s: f"{100 * s['marked_precision']:.1f} %"),
    ("... not marked and right", lambda s: f"{100 * s['unmarked_right']:.1f} %"),
    ("direction right (tall/wide boxes)", lambda s: f"{100 * s['direction']:.1f} % of {s['direction_boxes']}"),
    ("... of 2-3 characters", lambda s: f"{100 * s['direction_short']:.1f} % of {s['direction_short_boxes']}"),
]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder with annotation.json and images/")
    p.add_argument("--books", default="", help="comma-separated book titles (default: all)")
    p.add_argument("--order", default="rtl")
    p.add_argument("--json", action="store_true")
    p.add_argument("--failures", action="store_true", help="list the pages out of order")
    p.add_argument("--draw", type=Path, default=None, help="write the pages with blocks and panels drawn here")
    p.add_argument("--draw-pages", default="", help="book:page_index,... (default: every page)")
    p.add_argument("--letter", type=Path, default=None,
                   help="write the chosen pages lettered with the annotators' English here")
    p.add_argument("--cross", action="store_true",
                   help="leave-one-book-out: rules and thresholds tuned on one book, measured on the other "
                        "and on fresh synthetic pages (bench/cross_books.py)")
    p.add_argument("--synthetic-seed", type=int, default=4747,
                   help="--cross: the classic synthetic pages' seed (the layouts': this + 1111)")
    p.add_argument("--synthetic-pages", type=int, default=40, help="--cross: how many synthetic pages (0: none)")
    p.add_argument("--learned", type=Path, default=None,
                   help="read the order with a pairwise model written by tools/train_order.py --order")
    p.add_argument("--knobs", default="", help="--cross: only the rules/thresholds whose name holds one of "
                                               "these comma-separated words")
    args = p.parse_args()
    if not (args.data / "annotation.json").is_file():
        print(f"{args.data}: no annotation.json here; pass --data with an OpenMantra-format folder", file=sys.stderr)
        return 2
    books = [b for b in args.books.split(",") if b] or None
    if args.learned is not None:
        from tools.order_model import load_model

        global LEARNED
        LEARNED = load_model(str(args.learned))
    if args.cross:
        return _cross(args, books)
    result = run(args.data, books, args.order, args.draw, {s for s in args.draw_pages.split(",") if s}, args.letter)
    if args.json:
        print(json.dumps(result))
        return 0
    names = [*result["books"], "all"]
    stats = [*result["books"].values(), result["all"]]
    print(f"{result['all']['pages']} pages, {result['seconds']} s")
    print(f"{'':32s}" + "".join(f"{n[:26]:>30s}" for n in names))
    for label, fmt in ROWS:
        print(f"{label:32s}" + "".join(f"{fmt(s):>30s}" for s in stats))
    if args.failures:
        for name, fails in result["failures"].items():
            for f in fails:
                print(f"  {name} {f}")
    return 0


def _cross(args, books: list[str] | None) -> int:
    from bench import cross_books

    pages = load_pages(args.data, books)
    if len(pages) < 2:
        print("--cross needs two books (one to tune on, one held out)", file=sys.stderr)
        return 2
    names = list(pages)[:2]
    sets = {n: pages[n] for n in names}
    if args.synthetic_pages > 0:
        sets["synthetic"] = synthetic_pages(args.synthetic_seed, args.synthetic_pages)
        sets["layouts"] = synthetic_pages(args.synthetic_seed + 1111, args.synthetic_pages, "mixed")
    words = [w for w in args.knobs.split(",") if w]
    all_knobs = [k for k in [*cross_books.switches(), *cross_books.knobs()]
                 if not words or any(w in k.name for w in words)]
    started = time.perf_counter()
    result = cross_books.cross(lambda n: measure_orders(sets[n], args.order, n), [*names, *sets.keys() - set(names)],
                               all_knobs, progress=lambda m: print(f"  [{time.perf_counter() - started:6.0f} s] {m}",
                                                                   file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps(result, default=str))
        return 0
    print("\n".join(cross_books.report(result, names)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
