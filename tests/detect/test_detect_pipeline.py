"""The page pipeline end to end with real (tiny) models on a generated folder."""
from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from app.core.document.types import Block
from app.core.reading.pipeline import Pipeline, PipelineProgress, PipelineSettings, build_blocks
from app.core.sources.source import open_source
from app.detect import crop
from app.errors import Cancelled, UserError

SETTINGS = PipelineSettings(patches=64, max_new_tokens=6, imgsz=256, conf=0.0, batch_size=8, chunk_pages=4)


@pytest.fixture(scope="module")
def recognizer(tiny_models):
    from app.ocr import load_recognizer

    return load_recognizer(tiny_models["nova"], device="cpu")


@pytest.fixture(scope="module")
def volume(tmp_path_factory, make_page):
    """Six pages of mixed sizes (natural order page2 < page10) and one corrupt file."""
    folder = tmp_path_factory.mktemp("volume")
    sizes = {"page1.png": (240, 320), "page2.png": (240, 320), "page3.jpg": (300, 200),
             "page10.png": (240, 320), "page11.png": (200, 360), "page12.png": (240, 320)}
    for i, (name, (w, h)) in enumerate(sizes.items()):
        make_page(w, h, seed=i).save(folder / name)
    (folder / "page4.png").write_bytes(b"\x89PNG\r\n\x1a\n broken")
    return folder


@pytest.fixture(scope="module")
def processed(tiny_detector, recognizer, volume):
    events: list[PipelineProgress] = []
    with open_source(volume) as source:
        pages = list(Pipeline(tiny_detector, recognizer, SETTINGS).process(source, progress=events.append))
    return pages, events


def test_every_page_comes_back_in_order_and_a_bad_one_carries_its_error(processed):
    pages, _ = processed
    assert [p.name for p in pages] == ["page1.png", "page2.png", "page3.jpg", "page4.png", "page10.png",
                                       "page11.png", "page12.png"]
    bad = pages[3]
    assert bad.error and "page4.png" in bad.error and not bad.processed and bad.blocks == ()
    good = [p for p in pages if p is not bad]
    assert all(p.processed and p.error is None for p in good)
    assert [(p.width, p.height) for p in good][:3] == [(240, 320), (240, 320), (300, 200)]


def test_blocks_are_detected_ordered_and_read(processed, tiny_detector, recognizer, volume):
    pages, _ = processed
    with open_source(volume) as source:
        for page in (pages[0], pages[2]):
            image = source.load(page.name)
            (dets,) = tiny_detector.detect([image], imgsz=256, conf=0.0)
            expected = build_blocks(dets, image.size, "rtl")
            assert expected, "the tiny detector at conf 0 finds boxes"
            assert [(b.id, b.order, b.box, b.kind) for b in page.blocks] == [
                (b.id, b.order, b.box, b.kind) for b in expected]
            texts = recognizer.recognize([crop(image, b.box) for b in expected], max_num_patches=64,
                                         max_new_tokens=6)
            assert [b.ocr_text for b in page.blocks] == [t.text for t in texts]
    for block in pages[0].blocks:
        assert block.model == recognizer.name and block.patches == 64


def test_progress_counts_pages_and_blocks(processed):
    pages, events = processed
    total_blocks = sum(len(p.blocks) for p in pages)
    assert events[0] == PipelineProgress(0, 7, 0, 0)
    assert events[-1] == PipelineProgress(7, 7, total_blocks, total_blocks)
    for a, b in zip(events, events[1:], strict=False):
        assert b.pages_done >= a.pages_done and b.blocks_done >= a.blocks_done
        assert b.blocks_total >= a.blocks_total >= a.blocks_done
    # pages go through in chunks of 4: the first chunk's blocks are all known before any is read
    first_chunk = sum(len(p.blocks) for p in pages[:4])
    first_known = next(e for e in events if e.blocks_total > 0)
    assert first_known.blocks_total == first_chunk and first_known.blocks_done == 0


def test_chunking_does_not_change_results(processed, tiny_detector, recognizer, volume):
    pages, _ = processed
    one_by_one = PipelineSettings(**{**SETTINGS.__dict__, "chunk_pages": 1, "batch_size": 3})
    with open_source(volume) as source:
        again = list(Pipeline(tiny_detector, recognizer, one_by_one).process(source, ["page2.png", "page11.png"]))
    assert again == [pages[1], pages[5]]


def test_cancel_between_pages(tiny_detector, recognizer, volume):
    settings = PipelineSettings(**{**SETTINGS.__dict__, "chunk_pages": 1})
    pipeline = Pipeline(tiny_detector, recognizer, settings)
    done: list = []
    with open_source(volume) as source:
        with pytest.raises(Cancelled):
            for page in pipeline.process(source, cancel=lambda: len(done) >= 2):
                done.append(page)
        assert [p.name for p in done] == ["page1.png", "page2.png"]
        with pytest.raises(Cancelled):
            next(pipeline.process(source, cancel=lambda: True))


def test_recognize_region_and_read_blocks(processed, tiny_detector, recognizer, volume):
    pages, _ = processed
    pipeline = Pipeline(tiny_detector, recognizer, SETTINGS)
    with open_source(volume) as source:
        image = source.load("page1.png")
    block = pipeline.recognize_region(image, (200, 300, 150, 100))  # drawn from bottom-right
    assert block.kind == "manual" and block.score is None
    assert block.box == (150, 100, 200, 300) and block.vertical
    assert block.model == recognizer.name and block.patches == 64
    (expected,) = recognizer.recognize([crop(image, (150, 100, 200, 300))], max_num_patches=64, max_new_tokens=6)
    assert block.ocr_text == expected.text
    with pytest.raises(UserError, match="outside"):
        pipeline.recognize_region(image, (500, 500, 600, 600))

    detected = pipeline.detect_blocks(image)
    assert [(b.id, b.box, b.kind) for b in detected] == [(b.id, b.box, b.kind) for b in pages[0].blocks]
    assert all(b.ocr_text == "" for b in detected)

    edited = [Block(id=b.id, order=b.order, kind=b.kind, box=b.box, text="mine") for b in pages[0].blocks]
    reread = pipeline.read_blocks(image, edited)
    assert [b.ocr_text for b in reread] == [b.ocr_text for b in pages[0].blocks]
    assert all(b.text == "mine" for b in reread)
    assert pipeline.read_blocks(image, []) == []


def test_read_again_reads_the_boxes_it_is_given_and_no_detector(processed, recognizer, volume):
    """The boxes a page has (drawn by hand here, not the detector's) are read again: no detector
    (None would fail), the same blocks back with the new reading and the user's text and
    translation, a page that cannot be loaded with its error, progress over pages and blocks."""
    from app.core.document.types import Page

    drawn = (Block(id="m1", order=1, kind="manual", box=(10, 10, 90, 120), text="mine", translation="T"),
             Block(id="m2", order=2, kind="manual", box=(120, 40, 230, 300), ocr_text="old", model="before"))
    asked = [Page(name="page1.png", width=240, height=320, blocks=drawn, processed=True),
             Page(name="page4.png", width=240, height=320, blocks=drawn[:1], processed=True),
             Page(name="page3.jpg", width=300, height=200, blocks=(), processed=True),
             Page(name="page2.png", width=240, height=320, blocks=drawn[1:], processed=True)]
    events: list[PipelineProgress] = []
    settings = PipelineSettings(**{**SETTINGS.__dict__, "chunk_pages": 2})
    with open_source(volume) as source:
        got = list(Pipeline(None, recognizer, settings).read_again(source, asked, progress=events.append))
        images = {n: source.load(n) for n in ("page1.png", "page2.png")}
    assert [p.name for p in got] == ["page1.png", "page4.png", "page3.jpg", "page2.png"]
    expected = recognizer.recognize([crop(images["page1.png"], b.box) for b in drawn], max_num_patches=64,
                                    max_new_tokens=6)
    one, bad, empty, two = got
    assert [replace(b, ocr_text="", model="", patches=None) for b in one.blocks] == [
        replace(b, ocr_text="", model="", patches=None) for b in drawn]  # ids, boxes, text, translation kept
    assert [b.ocr_text for b in one.blocks] == [t.text for t in expected]
    assert all(b.model == recognizer.name and b.patches == 64 for b in one.blocks + two.blocks)
    assert "page4.png" in bad.error and bad.blocks == drawn[:1]
    assert empty == asked[2] and two.error is None
    (again,) = recognizer.recognize([crop(images["page2.png"], drawn[1].box)], max_num_patches=64, max_new_tokens=6)
    assert two.blocks[0].ocr_text == again.text
    assert events[0] == PipelineProgress(0, 4, 0, 4) and events[-1] == PipelineProgress(4, 4, 4, 4)
    with open_source(volume) as source, pytest.raises(Cancelled):
        next(Pipeline(None, recognizer, settings).read_again(source, asked, cancel=lambda: True))


class _Recorded:
    """The real detector / recognizer, calls passed through; `hook` runs before each call."""

    def __init__(self, inner, hook):
        self._inner, self._hook = inner, hook

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def detect(self, images, **kwargs):
        self._hook(images)
        return self._inner.detect(images, **kwargs)

    def recognize(self, crops, **kwargs):
        self._hook(crops)
        return self._inner.recognize(crops, **kwargs)


def test_the_next_chunk_is_detected_while_this_one_is_read(tiny_detector, recognizer, volume):
    """Overlap (the default): the detector gets the second chunk while the first is recognized
    (the first recognition waits for that call), and the pages are those of the sequential run."""
    detector_calls: list[int] = []
    second_chunk_detected = threading.Event()
    waited: list[bool] = []

    def on_detect(images):
        detector_calls.append(len(images))
        if len(detector_calls) == 2:
            second_chunk_detected.set()

    def on_recognize(_crops):
        if not waited:  # the first chunk's crops: is the second chunk being detected meanwhile?
            waited.append(second_chunk_detected.wait(timeout=30))

    pipeline = Pipeline(_Recorded(tiny_detector, on_detect),
                        _Recorded(recognizer, on_recognize), SETTINGS)
    assert SETTINGS.overlap
    with open_source(volume) as source:
        pages = list(pipeline.process(source))
        sequential = list(Pipeline(tiny_detector, recognizer, replace(SETTINGS, overlap=False)).process(source))
    assert waited == [True]
    assert detector_calls == [3, 3]  # chunks of 4 pages; page4.png of the first cannot be loaded
    assert pages == sequential
