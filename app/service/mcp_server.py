"""The MCP server (`hayai-desktop mcp`): the service's operations as tools an agent can call,
page images and block crops as resources, on the official `mcp` SDK (FastMCP). Over stdio (a
desktop agent starts it as a subprocess) or streamable HTTP behind the same bearer token as
the HTTP API. The tools wait for their job and report its progress; the work is `Service`'s.
"""
from __future__ import annotations

import asyncio

from mcp.server.fastmcp import Context, FastMCP, Image

from app.service.volumes import Service

INSTRUCTIONS = """Hayai Desktop reads, corrects, translates and letters manga volumes.
Start with open_volume(path) (a folder, CBZ, image or .mokuro under the server's roots); it
returns the volume's id. list_pages shows which pages are read; read_pages detects and reads
them. get_blocks gives a page's blocks (id, text, translation, kind, box); look at a block with
get_crop before correcting it; set_text and set_translation change one block (saved at once).
translate_pages machine-translates; check_volume finds untranslated, inconsistent and
overflowing blocks; export writes a CBZ (or pdf, json, ...) under a root."""


def create_mcp(service: Service, **settings) -> FastMCP:
    mcp = FastMCP("hayai-desktop", instructions=INSTRUCTIONS, **settings)

    async def _run(fn, *args, **kwargs):
        return await asyncio.to_thread(fn, *args, **kwargs)

    async def _wait(job, ctx: Context | None) -> dict:
        seen = -1
        while job.state == "running":
            if ctx is not None and job.changed != seen and job.total:
                seen = job.changed
                await ctx.report_progress(job.done, job.total, job.detail or job.kind)
            await asyncio.sleep(0.1)
        return job.as_dict()

    @mcp.tool()
    async def open_volume(path: str) -> dict:
        """Open a volume: a folder of pages, a CBZ/ZIP archive, an image or a .mokuro file, under one of
        the server's roots (relative paths are taken under the first root). Returns its id (used by every
        other tool), its page count and whether it is read-only (held by the app or another program)."""
        return await _run(service.open_volume, path)

    @mcp.tool()
    async def list_pages(volume: str) -> list[dict]:
        """The volume's pages in order: name, whether read, blocks, translated and untranslated counts, error."""
        return await _run(service.list_pages, volume)

    @mcp.tool()
    async def read_pages(volume: str, ctx: Context, pages: list[str] | None = None) -> dict:
        """Detect the text blocks of pages and read them (OCR); every page by default. Waits for the job
        (progress is reported) and returns it; each page is saved as it is read."""
        job = await _run(service.start_read, volume, pages)
        return await _wait(job, ctx)

    @mcp.tool()
    async def get_blocks(volume: str, page: str) -> list[dict]:
        """A page's blocks in reading order: id, order, kind, box (x0, y0, x1, y1 in pixels), text (as
        corrected), ocr_text, translation, looks_untranslated."""
        return await _run(service.get_blocks, volume, page)

    @mcp.tool()
    async def get_crop(volume: str, page: str, block: str) -> Image:
        """The block's crop of the page image (PNG): look at it to check or correct the text."""
        return Image(data=await _run(service.crop_png, volume, page, block), format="png")

    @mcp.tool()
    async def set_text(volume: str, page: str, block: str, text: str) -> dict:
        """Correct a block's text (the transcription of the original). Saved at once."""
        return await _run(service.edit_block, volume, page, block, text=text)

    @mcp.tool()
    async def set_translation(volume: str, page: str, block: str, translation: str) -> dict:
        """Set a block's translation (kept by later translation runs). Saved at once."""
        return await _run(service.edit_block, volume, page, block, translation=translation)

    @mcp.tool()
    async def translate_pages(volume: str, ctx: Context, pages: list[str] | None = None, to: str | None = None,
                              retranslate: bool = False) -> dict:
        """Machine-translate pages (every read page by default) with the server's translation backend;
        translations typed by hand are kept. Waits for the job and returns it."""
        job = await _run(service.start_translate, volume, pages, to, retranslate)
        return await _wait(job, ctx)

    @mcp.tool()
    async def check_volume(volume: str, layout: bool = True) -> dict:
        """The consistency and fit report: findings (page, block id, kind, detail) of kinds untranslated,
        inconsistent, name, below_min and clipped (the translation overflows its bubble)."""
        return await _run(service.check, volume, layout)

    @mcp.tool()
    async def export(volume: str, out: str, ctx: Context, format: str = "cbz") -> dict:  # noqa: A002 - the tool's word
        """Write the volume: cbz or pdf (lettered pages), png/jpg/webp (a folder), json, txt, csv, tsv or
        reader (HTML), to `out` under a root. Waits for the job and returns it."""
        job = await _run(service.start_export, volume, format, out)
        return await _wait(job, ctx)

    @mcp.resource("hayai://{volume}/pages/{page}/image", mime_type="image/png")
    def page_image(volume: str, page: str) -> bytes:
        """A page's image (PNG)."""
        return service.page_png(volume, page)

    @mcp.resource("hayai://{volume}/pages/{page}/blocks/{block}/crop", mime_type="image/png")
    def block_crop(volume: str, page: str, block: str) -> bytes:
        """A block's crop (PNG)."""
        return service.crop_png(volume, page, block)

    return mcp


def http_app(mcp: FastMCP, token: str, max_body: int):
    """The streamable-HTTP app (at /mcp) behind the bearer token and the body limit."""
    from app.service.http_api import Guard

    return Guard(mcp.streamable_http_app(), token=token, max_body=max_body)
