"""The unit of batch work: a chunk of consecutive pages of one volume, as plain picklable data.

A volume of n pages is cut into chunks of `chunk_pages` pages at 0, k, 2k, ... : the same
pages that `Pipeline.process` detects and reads together when `ocr` runs on the volume, so a
chunk read anywhere (in this process or on a Ray worker) gives the pages `ocr` gives.

For Ray, a chunk travels as a `ChunkPayload`: the encoded bytes of its pages as stored (or the
error met reading them), so that a worker on another machine needs no access to the driver's
disk. `MemorySource` turns a payload back into a `Source` for `Pipeline.process`; a page that
could not be read raises the same ImageError, with the same message, as the volume's own source.
"""
from __future__ import annotations

from dataclasses import dataclass

from app.core.document.types import Page
from app.core.reading.pipeline import PAGE_ERRORS, error_text
from app.core.sources.images import decode_image
from app.errors import ImageError


def chunk_bounds(page_count: int, chunk_pages: int) -> list[tuple[int, int]]:
    """(start, stop) of each chunk of a volume: [(0, k), (k, 2k), ..., (m, page_count)]."""
    step = max(1, chunk_pages)
    return [(start, min(start + step, page_count)) for start in range(0, page_count, step)]


@dataclass(frozen=True)
class PagePayload:
    """name: the page name in its volume; describe: how messages name it (a path, or
    'archive.cbz: member'); data: its encoded bytes, or None with `error` (why it could not be read)."""

    name: str
    describe: str
    data: bytes | None = None
    error: str | None = None


@dataclass(frozen=True)
class ChunkPayload:
    """volume: the volume's index in the run; index: the chunk's index in its volume."""

    volume: int
    index: int
    pages: tuple[PagePayload, ...]

    @property
    def nbytes(self) -> int:
        return sum(len(p.data or b"") for p in self.pages)


@dataclass(frozen=True)
class ChunkResult:
    """The pages of one chunk, in page order; worker: who read them (a process id and host)."""

    volume: int
    index: int
    pages: tuple[Page, ...]
    worker: str = ""
    seconds: float = 0.0


def read_payload(source, volume: int, index: int, names) -> ChunkPayload:
    """The bytes of `names` from an open `app.core.sources.source.Source` (errors kept per page)."""
    pages = []
    for name in names:
        try:
            pages.append(PagePayload(name, source.describe(name), data=source.read_bytes(name)))
        except PAGE_ERRORS as exc:
            pages.append(PagePayload(name, source.describe(name), error=error_text(exc)))
    return ChunkPayload(volume, index, tuple(pages))


class MemorySource:
    """A `Source` over the pages of a `ChunkPayload` (what a worker reads from)."""

    kind = "memory"

    def __init__(self, payload: ChunkPayload):
        self._pages = {p.name: p for p in payload.pages}
        self.page_names = [p.name for p in payload.pages]

    def describe(self, name: str) -> str:
        return self._pages[name].describe

    def load(self, name: str):
        page = self._pages[name]
        if page.data is None:
            raise ImageError(page.error or f"{page.describe}: the page could not be read")
        return decode_image(page.data, page.describe)

    def close(self) -> None:
        self._pages.clear()


def process_chunk(pipeline, source, names) -> list[Page]:
    """Detect and read `names` of `source` with `pipeline`: one chunk, as `Pipeline.process` reads it."""
    return list(pipeline.process(source, names=list(names)))
