"""The page pipeline: detect -> order -> crop (full resolution) -> recognize, page by page.

One code path for the GUI worker and the `ocr` command. Pages go through in chunks of
`PipelineSettings.chunk_pages`: the chunk's pages are detected in one detector call and all
their crops go through the recognizer together (better batches than one page at a time), then
the chunk's pages are yielded in order. A page that cannot be loaded, detected or read is
yielded with `error` set and the run goes on. Cancel is cooperative: `cancel()` is polled
between pages, before each stage and (inside the recognizer) between crops and decode steps;
when it returns True, `app.errors.Cancelled` is raised (pages already yielded stay valid).
"""
from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from app.core.document.types import Block, Page
from app.detect.blocks import block_is_vertical, crop, finds_bubbles, gray_page, pad_box, read_page
from app.detect.confidence import needs_check
from app.errors import Cancelled, UserError

log = logging.getLogger(__name__)

# What a single bad page may raise without stopping the volume: unreadable images (ImageError is
# a UserError), decoder and tensor failures (OSError, ValueError, RuntimeError such as out of memory).
PAGE_ERRORS = (UserError, OSError, ValueError, RuntimeError)


@dataclass(frozen=True)
class PipelineSettings:
    """patches: recognizer patch budget (256 / 384 / 512); max_new_tokens: decode limit per crop;
    order: "rtl" | "ltr"; batch_size: crops per recognizer batch (None: the recognizer's own
    policy for its device, `Recognizer.default_batch_size`, for the GUI and the CLI alike);
    imgsz / conf / iou: detector
    input size (pixels, long side; None = the size the detector was trained at), minimum score,
    NMS IoU; chunk_pages: pages per detect+read
    round; detect_batch: pages per detector call; overlap: load and detect the next chunk while
    this one is read (bench/pipeline.py measures both)."""

    patches: int = 384
    max_new_tokens: int = 128
    order: str = "rtl"
    batch_size: int | None = None
    imgsz: int | None = None
    conf: float = 0.25
    iou: float = 0.5
    chunk_pages: int = 4
    detect_batch: int = 4
    overlap: bool = True


@dataclass(frozen=True)
class PipelineProgress:
    """pages_done / pages_total; blocks_done / blocks_total (the total grows as pages are detected)."""

    pages_done: int
    pages_total: int
    blocks_done: int
    blocks_total: int


def build_blocks(detections, image_size: tuple[int, int], order: str = "rtl", page=None,
                 widen_text: bool | None = None) -> list[Block]:
    """The document's blocks for one page's detections: app.detect's regions in reading order,
    numbered: ids "b1".."bn", order 1..n, empty text. `page`: the page as a grayscale array
    (`gray_page`) for the layout rules that read it (ink direction, panels, lines dropped, text
    boxes widened to their bubble: `widen_text`, see app.detect.build_regions)."""
    return read_blocks(detections, image_size, order, page, widen_text)[0]


def read_blocks(detections, image_size: tuple[int, int], order: str = "rtl", page=None,
                widen_text: bool | None = None) -> tuple[list[Block], str | None]:
    """(`build_blocks`' blocks, the page's "check the order" mark: why its order may be wrong,
    None when the layout rules were sure enough of it; app.detect.confidence)."""
    reading = read_page(detections, image_size, order, page=page, widen_text=widen_text)
    blocks = [Block(id=f"b{n}", order=n, kind=r.kind, box=r.box, polygon=r.polygon, vertical=r.vertical,
                    score=r.score)
              for n, r in enumerate(reading.regions, start=1)]
    check = (reading.doubts[0] if reading.doubts else "the order is a guess") if needs_check(reading.confidence) else None
    return blocks, check


def _widen_text(detector) -> bool | None:
    """Widen text boxes to their bubbles for a detector that finds no bubbles (None: unknown)."""
    class_map = getattr(detector, "class_map", None)
    return None if class_map is None else not finds_bubbles(class_map)


def error_text(exc: BaseException) -> str:
    """How a page's error reads in its Page.error: the message of a UserError, else type: message."""
    return str(exc) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}"


def _reporters(progress, cancel, counts: dict, total: int):
    """(report, check) of a run over `total` pages: report sends `counts` (pages, blocks,
    blocks_total) to `progress`; check raises Cancelled once `cancel` says so."""
    def report():
        if progress is not None:
            progress(PipelineProgress(counts["pages"], total, counts["blocks"], counts["blocks_total"]))

    def check():
        if cancel is not None and cancel():
            raise Cancelled("cancelled")

    return report, check


class Pipeline:
    """detector: `app.detect.Detector` (or anything with the same `detect`); recognizer:
    `app.ocr.Recognizer` (`recognize`, `name`)."""

    def __init__(self, detector, recognizer, settings: PipelineSettings | None = None):
        self.detector = detector
        self.recognizer = recognizer
        self.settings = settings or PipelineSettings()

    # -- whole pages -------------------------------------------------------------------------

    def process(self, source, names: Sequence[str] | None = None,
                progress: Callable[[PipelineProgress], None] | None = None,
                cancel: Callable[[], bool] | None = None) -> Iterator[Page]:
        """Detect and read `names` (default: every page of `source`), yielding each finished Page.

        source: an `app.core.sources.source.Source` (`page_names`, `load(name) -> PIL RGB`).
        """
        names = list(source.page_names if names is None else names)
        total = len(names)
        counts = {"pages": 0, "blocks": 0, "blocks_total": 0}

        report, check = _reporters(progress, cancel, counts, total)

        report()
        step = max(1, self.settings.chunk_pages)
        chunks = [names[start:start + step] for start in range(0, total, step)]
        if not self.settings.overlap or len(chunks) < 2:
            for chunk in chunks:
                check()
                for page in self._read_chunk(self._detect_chunk(self._load_chunk(source, chunk, check), check),
                                             counts, report, cancel):
                    counts["pages"] += 1
                    report()
                    yield page
            return
        # the next chunk is detected on a helper thread while this one is read (torch releases the
        # interpreter lock in its kernels); pages are loaded and progress is reported on this thread
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="hayai-detect") as pool:
            check()
            ahead = pool.submit(self._detect_chunk, self._load_chunk(source, chunks[0], check), check)
            try:
                for i in range(len(chunks)):
                    detected = ahead.result()
                    ahead = None
                    if i + 1 < len(chunks):
                        check()
                        ahead = pool.submit(self._detect_chunk, self._load_chunk(source, chunks[i + 1], check), check)
                    for page in self._read_chunk(detected, counts, report, cancel):
                        counts["pages"] += 1
                        report()
                        yield page
            finally:
                if ahead is not None:  # cancelled, failed or closed early: let the helper finish
                    ahead.cancel()
                    with contextlib.suppress(BaseException):
                        ahead.result()

    def _load_chunk(self, source, names, check) -> tuple:
        """(names, images, pages): the chunk's images, and a Page with its error for each that
        could not be loaded."""
        pages: dict[str, Page] = {}
        images = {}
        for name in names:
            check()
            try:
                images[name] = source.load(name)
            except PAGE_ERRORS as exc:
                log.warning("page %s: %s", name, exc)
                pages[name] = Page(name=name, error=error_text(exc))
        return names, images, pages

    def _detect_chunk(self, loaded_chunk, check) -> tuple:
        """Detect a loaded chunk's pages: (names, images, pages), each page with its blocks (empty
        text) or its error. Touches no shared state (it may run on a helper thread)."""
        s = self.settings
        names, images, pages = loaded_chunk
        check()
        loaded = [n for n in names if n in images]
        for name, dets in self._detect_each(loaded, images, pages):
            image = images[name]
            blocks, check = read_blocks(dets, image.size, s.order, page=gray_page(image),
                                        widen_text=_widen_text(self.detector))
            pages[name] = Page(name=name, width=image.width, height=image.height, blocks=tuple(blocks),
                               order_check=check)
        return names, images, pages

    def _read_chunk(self, detected, counts, report, cancel) -> list[Page]:
        """Read the detected chunk's blocks; its pages in order."""
        names, images, pages = detected
        counts["blocks_total"] += sum(len(p.blocks) for p in pages.values() if p.error is None)
        report()
        if cancel is not None and cancel():
            raise Cancelled("cancelled")
        ready = [n for n in names if n in images and pages[n].error is None]
        self._read_pages(ready, images, pages, counts, report, cancel)
        return [pages[n] for n in names]

    def _detect_each(self, loaded, images, pages):
        """(name, detections) for each page that could be detected; failures go into `pages`."""
        s = self.settings
        kwargs = dict(imgsz=s.imgsz, conf=s.conf, iou=s.iou, batch=s.detect_batch)
        try:
            return list(zip(loaded, self.detector.detect([images[n] for n in loaded], **kwargs), strict=True))
        except PAGE_ERRORS as exc:
            if len(loaded) <= 1:
                for n in loaded:
                    pages[n] = Page(name=n, width=images[n].width, height=images[n].height, error=error_text(exc))
                return []
        out = []
        for n in loaded:  # isolate the failing page(s)
            out.extend(self._detect_each([n], images, pages))
        return out

    def _read_pages(self, ready, images, pages, counts, report, cancel):
        crops, owners = [], []
        for n in ready:
            for b in pages[n].blocks:
                crops.append(crop(images[n], b.box))
                owners.append(n)
        if not crops:
            for n in ready:
                pages[n] = replace(pages[n], processed=True)
            return
        base = counts["blocks"]

        def on_progress(done, _total):
            counts["blocks"] = base + done
            report()

        try:
            texts = self._recognize(crops, on_progress, cancel)
        except PAGE_ERRORS as exc:
            if len(ready) <= 1:
                for n in ready:
                    pages[n] = replace(pages[n], error=error_text(exc))
                counts["blocks"] = base + len(crops)
                return
            counts["blocks"] = base
            for n in ready:  # isolate the failing page(s)
                self._read_pages([n], images, pages, counts, report, cancel)
            return
        counts["blocks"] = base + len(crops)
        for n in ready:
            mine = [t for t, owner in zip(texts, owners, strict=True) if owner == n]
            blocks = [self._filled(b, t) for b, t in zip(pages[n].blocks, mine, strict=True)]
            pages[n] = replace(pages[n], blocks=tuple(blocks), processed=True)

    def read_again(self, source, pages: Sequence[Page],
                   progress: Callable[[PipelineProgress], None] | None = None,
                   cancel: Callable[[], bool] | None = None) -> Iterator[Page]:
        """Read the blocks of `pages` (as they are: their boxes, ids and order) again with this
        pipeline's recognizer, the detector left out (a new OCR, such as one adapted to the
        series, reads the boxes the user already has). Yields each page with the same blocks,
        new `ocr_text`, model and patches (the user's `text` kept), or with its error when its
        image cannot be loaded or read. Crops are read `chunk_pages` pages at a time."""
        pages = list(pages)
        total = len(pages)
        counts = {"pages": 0, "blocks": 0, "blocks_total": sum(len(p.blocks) for p in pages)}

        report, check = _reporters(progress, cancel, counts, total)

        report()
        step = max(1, self.settings.chunk_pages)
        for start in range(0, total, step):
            chunk = pages[start:start + step]
            names, images, failed = self._load_chunk(source, [p.name for p in chunk], check)
            done = {p.name: p for p in chunk}
            for name, bad in failed.items():
                done[name] = replace(done[name], error=bad.error)
                counts["blocks"] += len(done[name].blocks)
            check()
            self._read_pages([n for n in names if n in images], images, done, counts, report, cancel)
            for name in names:
                counts["pages"] += 1
                report()
                yield done[name]

    # -- single pages and regions ------------------------------------------------------------

    def detect_blocks(self, image) -> list[Block]:
        """Detection and reading order only (no OCR) for one full-resolution page image: blocks
        with empty text, as `process` would read them."""
        s = self.settings
        (dets,) = self.detector.detect([image], imgsz=s.imgsz, conf=s.conf, iou=s.iou, batch=1)
        return build_blocks(dets, image.size, s.order, page=gray_page(image), widen_text=_widen_text(self.detector))

    def _recognize(self, crops, progress=None, cancel=None) -> list[str]:
        s = self.settings
        results = self.recognizer.recognize(crops, max_num_patches=s.patches, max_new_tokens=s.max_new_tokens,
                                            batch_size=s.batch_size, progress=progress, cancel=cancel)
        return [r.text for r in results]

    def _filled(self, block: Block, text: str) -> Block:
        return replace(block, ocr_text=text, model=self.recognizer.name, patches=self.settings.patches)

    def recognize_region(self, image, box, block_id: str | None = None, order: int = 0) -> Block:
        """OCR of a user-drawn `box` ((x0, y0, x1, y1) pixels of the full-resolution `image`), with
        the same crop rule as detected blocks. Returns a Block of kind "manual" (score None);
        its id defaults to one derived from the box, its order to 0 (not placed yet)."""
        pad_box(box, image.size, pad=0)  # raises UserError when the box misses the page
        x0, y0, x1, y1 = (float(v) for v in box)
        norm = (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
        bid = block_id or "m{}_{}_{}_{}".format(*(round(v) for v in norm))
        block = Block(id=bid, order=order, kind="manual", box=norm, vertical=block_is_vertical(norm, gray_page(image)))
        (text,) = self._recognize([crop(image, norm)])
        return self._filled(block, text)

    def panels(self, image, ignore: Sequence = ()) -> list[tuple[float, float, float, float]]:
        """The panels of a full-resolution page `image` in this pipeline's reading order
        (`ignore`: boxes that count as paper, e.g. bubbles that straddle a gutter)."""
        from app.detect.panels import find_panels

        return find_panels(gray_page(image), self.settings.order, ignore=list(ignore))

    def read_blocks(self, image, blocks: Sequence[Block], progress=None, cancel=None) -> list[Block]:
        """Re-read `blocks` of one page (`image` at full resolution); returns them with new
        `ocr_text`, model and patches (user edits in `text` are kept)."""
        if not blocks:
            return []
        texts = self._recognize([crop(image, b.box) for b in blocks], progress, cancel)
        return [self._filled(b, t) for b, t in zip(blocks, texts, strict=True)]
