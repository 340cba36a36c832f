"""Translated pages from a project: the blocks to clean and letter, and the exports.

The GUI's views and the `render` command both go through `render_blocks` and
`app.render.page.PageRenderer`, so the preview is the exported pixels.

Text modes (`--text`):
- translation: blocks with a translation are cleaned and lettered with it; the others stay as
  they are;
- source: blocks are cleaned and lettered with their (edited) transcription;
- none: every block is cleaned, nothing is lettered.

Text outside bubbles (captions, sound effects: app.core.document.types.OUTSIDE_KINDS) follows the
project's policy for its kind (`Project.outside`), in every text mode: "translate" as above;
"keep": never cleaned nor lettered; "beside": never cleaned, its text (the translation, or the
transcription in the source mode) lettered as a small note beside it (app.render.page).

Formats: png / jpg / webp / psd write one file per page into a folder, named after the page
(`001.png` -> `001.psd`); cbz and pdf write one file. A CBZ's pages are named by their place in
the reading order, zero-padded (`001.png`, `002.png`, ... `010.png`), since comic readers sort
the entries by name and `1.png, 10.png, 2.png` would put them out of order. PSD layers, top down: a group per
lettered block ("block N": an editable type layer and its rendered pixels, hidden), the
inpainting patches, the cleaned page, the original page (hidden); the merged image is the PNG
export's pixels. A CBZ holds a ComicInfo.xml.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from app.core.document.types import Page, Project, outside_group
from app.errors import Cancelled, UserError
from app.render.page import TEXT_MODES, PageRenderer, RenderBlock
from app.render.style import TextStyle, resolve

FOLDER_FORMATS = ("png", "jpg", "webp", "psd")
FILE_FORMATS = ("cbz", "pdf")
FORMATS = FOLDER_FORMATS + FILE_FORMATS


def cbz_entry_name(number: int, total: int, ext: str = "png") -> str:
    """The name of the `number`-th page (1-based, reading order) of a CBZ of `total` pages:
    zero-padded to three digits or more (`007.png`), so a sort by name is the reading order."""
    return f"{number:0{max(3, len(str(total)))}d}.{ext}"


@dataclass(frozen=True)
class RenderOptions:
    """text: one of TEXT_MODES; font: a font for every block (None: the styles' own);
    lang: hyphenation language; target_lang: the translation's language when known (ja / zh
    set vertically under direction "auto")."""

    text: str = "translation"
    font: str | None = None
    lang: str | None = "en"
    target_lang: str | None = None

    def __post_init__(self) -> None:
        if self.text not in TEXT_MODES:
            raise UserError(f"--text must be one of {', '.join(TEXT_MODES)}, not {self.text!r}")


def translated_options(target_lang: str | None) -> RenderOptions:
    """The options of the GUI's translated view (and of the lettering fit the Script view shows):
    the translation lettered, hyphenated for its language (ja / zh set vertically)."""
    target = (target_lang or "en").strip() or "en"
    return RenderOptions(text="translation", lang=target, target_lang=target)


def block_style(project_style: TextStyle, block, options: RenderOptions) -> TextStyle:
    style = resolve(project_style, block.style)
    return replace(style, font=options.font) if options.font else style


def render_blocks(page: Page, project_style: TextStyle, options: RenderOptions,
                  project_sizes: str = "each", outside: Mapping[str, str] | None = None) -> list[RenderBlock]:
    """The page's blocks as the renderer takes them, in reading order (see the text modes); the
    page's size harmonisation is its own, else `project_sizes` (the project's); `outside`: the
    project's policies for text outside bubbles (`Project.outside`; None: all translated)."""
    sizes = page.sizes or project_sizes
    out = []
    for b in sorted(page.blocks, key=lambda b: b.order):
        if options.text == "translation":
            text = b.translation
            clean = bool(text.strip())
        elif options.text == "source":
            text = b.display_text
            clean = bool(text.strip())
        else:
            text, clean = "", True
        group = outside_group(b.kind)
        policy = (outside or {}).get(group, "translate") if group else "translate"
        place = "in"
        if policy == "keep":
            text, clean = "", False
        elif policy == "beside":
            place, clean = "beside", False
        out.append(RenderBlock(id=b.id, order=b.order, kind=b.kind, box=tuple(b.box), polygon=b.polygon,
                               text=text, clean=clean, style=block_style(project_style, b, options),
                               strokes=b.mask_edits, page_sizes=sizes, place=place))
    return out


@dataclass
class ExportReport:
    """What an export wrote: files, pages skipped (name, why), and lettering figures."""

    written: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    blocks: int = 0  # blocks lettered
    below_min: int = 0  # lettered below the style's minimum size
    overflow: int = 0  # did not fit at all (clipped)
    below_min_blocks: list[tuple[str, int]] = field(default_factory=list)  # (page name, block number)

    def below_min_text(self, limit: int = 8) -> str:
        """"001.png: 3, 7; 002.png: 1" (the first `limit` blocks), "" when none."""
        by_page: dict[str, list[int]] = {}
        for name, order in self.below_min_blocks[:limit]:
            by_page.setdefault(name, []).append(order)
        text = "; ".join(f"{name}: {', '.join(str(n) for n in orders)}" for name, orders in by_page.items())
        more = len(self.below_min_blocks) - limit
        return text + (f" and {more} more" if more > 0 else "")


def comic_info(project: Project, options: RenderOptions):
    """The ComicInfo.xml of a CBZ export: series / volume / number from the source's name, the
    lettered language, the reading order, the app and its version."""
    from app import __version__
    from app.render.writers import ComicInfo

    language = options.target_lang or (options.lang if options.text == "translation" else None)
    language = language.split("_")[0].split("-")[0].lower() if language else None
    return ComicInfo.from_name(Path(project.source).name, language=language, rtl=project.order == "rtl",
                               tool=f"Hayai Desktop {__version__}")


def plan_output(fmt: str, out: str | os.PathLike) -> Path:
    """Check the output of a format: a folder for per-page formats, a file for cbz / pdf."""
    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    out = Path(out)
    if fmt in FOLDER_FORMATS:
        if out.exists() and not out.is_dir():
            raise UserError(f"{out} is a file; {fmt} pages are written into a folder (one file per page)")
    elif out.is_dir():
        raise UserError(f"{out} is a folder; a {fmt} export is one file: give a file name such as {out / ('pages.' + fmt)}")
    return out


def export_translated(project: Project, fmt: str, out: str | os.PathLike, engine,
                      options: RenderOptions | None = None, pages: Sequence[str] | None = None,
                      progress: Callable[[int, int, str], None] | None = None,
                      cancel: Callable[[], bool] | None = None) -> ExportReport:
    """Render the chosen pages (all by default, in project order) and write them as `fmt`.

    Pages whose image cannot be read are skipped and reported; the others are written.
    progress(done, total, page name) after each page; cancel() -> True raises Cancelled (a file
    being written is removed, files already written stay).
    """
    from app.core.sources.source import open_source
    from app.render.writers import CbzWriter, PdfWriter, output_name, psd_text, write_image, write_psd

    options = options or RenderOptions()
    out = plan_output(fmt, out)
    chosen = [p for p in project.pages if pages is None or p.name in set(pages)]
    report = ExportReport()
    try:
        source = open_source(project.source)
    except (UserError, OSError) as exc:
        raise UserError(f"{project.source}: the pages of this project cannot be opened ({exc}). Put the folder or "
                        "archive back where it was.") from exc
    sink = CbzWriter(out, info=comic_info(project, options)) if fmt == "cbz" else \
        PdfWriter(out) if fmt == "pdf" else None
    in_cbz = 0  # pages written into the CBZ so far (a skipped page leaves no gap in the numbers)
    try:
        if sink is not None:
            sink.__enter__()
        for done, page in enumerate(chosen, start=1):
            if cancel is not None and cancel():
                raise Cancelled()
            try:
                image = source.load(page.name)
            except UserError as exc:
                report.skipped.append((page.name, str(exc)))
                continue
            renderer = PageRenderer(image, engine, options.lang, options.target_lang)
            blocks = render_blocks(page, project.style, options, project.sizes, project.outside)
            result = renderer.render(blocks, cancel)
            for b, layer in result.layers:
                report.blocks += 1
                report.below_min += not layer.layout.fits
                report.overflow += layer.layout.overflow
                if not layer.layout.fits:
                    report.below_min_blocks.append((page.name, b.order))
            if fmt == "psd":
                types = [psd_text(b.order, layer, b.style) for b, layer in result.layers]
                report.written.append(write_psd(out / output_name(page.name, "psd"), result.original, result.cleaned,
                                                renderer.patched(blocks), types, result.final))
            elif sink is None:
                report.written.append(write_image(result.final, out / output_name(page.name, fmt)))
            elif fmt == "cbz":
                in_cbz += 1
                sink.add(cbz_entry_name(in_cbz, len(chosen)), result.final)
            else:
                sink.add(result.final)
            if progress is not None:
                progress(done, len(chosen), page.name)
    except BaseException as exc:
        if sink is not None:
            sink.__exit__(type(exc), exc, exc.__traceback__)
            sink = None
        raise
    finally:
        source.close()
    if sink is not None:
        sink.__exit__(None, None, None)
        report.written.append(out)
    return report
