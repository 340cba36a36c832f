"""The consistency check of a translated volume: what a reader would notice.

Kinds of finding (one row each, in page and reading order):
- `inconsistent`: the same source line (whitespace ignored, app.core.translation.translation_memory.normalise) translated
  differently elsewhere; every block that differs from the line's most frequent translation.
- `name`: a glossary entry, or a character or term of the story memory with its target, whose
  source occurs in the block while the translation does not use the target.
- `untranslated`: the machine's answer looked untranslated (`Block.looks_untranslated`), the
  translation is the source itself, or a block with text has no translation at all.
- `degenerate`: the machine's answer looked degenerate (`Block.looks_degenerate`), or the
  translation alone cannot be one of its source: one word for a sentence, far shorter
  (app.translate.judge).
- `repeated`: one translation for two or more different source lines of some length
  (app.translate.judge), every block that has it.
- `below_min`: typeset below the style's minimum size; `clipped`: did not fit at all and is cut
  to the bubble. Both from the layout the export letters (app.render.page.PageRenderer: the same
  harmonised sizes), so they need the page images.

The GUI's Consistency panel and `hayai-desktop check` both call `check_project`. No Qt.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from app.core.document.types import Block, Page, Project
from app.core.translation.translation_memory import normalise
from app.errors import Cancelled
from app.translate.base import GlossaryEntry

KINDS = ("inconsistent", "name", "untranslated", "degenerate", "repeated", "below_min", "clipped")
LABELS = {"inconsistent": "translated differently", "name": "name not used", "untranslated": "looks untranslated",
          "degenerate": "looks degenerate", "repeated": "one translation for many lines",
          "below_min": "below minimum size", "clipped": "clipped"}


@dataclass(frozen=True)
class Finding:
    page: str  # page name
    block: str  # block id
    order: int  # the block's number on its page
    kind: str  # one of KINDS
    detail: str

    def line(self) -> str:
        return f"{self.page}\t{self.order}\t{self.kind}\t{self.detail}"


def _blocks(project: Project) -> Iterable[tuple[Page, Block]]:
    for page in project.pages:
        for b in sorted(page.blocks, key=lambda b: b.order):
            yield page, b


def _short(text: str, n: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 1] + "…"


def inconsistent(project: Project) -> list[Finding]:
    groups: dict[str, list[tuple[Page, Block]]] = {}
    for page, b in _blocks(project):
        if b.display_text.strip() and b.translation.strip():
            groups.setdefault(normalise(b.display_text), []).append((page, b))
    out = []
    for members in groups.values():
        counts = Counter(b.translation.strip() for _p, b in members)
        if len(counts) < 2:
            continue
        usual, _n = counts.most_common(1)[0]
        first = next((p, b) for p, b in members if b.translation.strip() == usual)
        for page, b in members:
            if b.translation.strip() != usual:
                out.append(Finding(page.name, b.id, b.order, "inconsistent",
                                   f"“{_short(b.display_text)}” is “{_short(b.translation)}” here, “{_short(usual)}” "
                                   f"on {first[0].name} block {first[1].order}"))
    return out


def name_entries(project: Project, glossary: Sequence[GlossaryEntry] = ()) -> list[GlossaryEntry]:
    """The names and terms whose translation is known: the glossary given, the project's, and
    the story memory's characters and terms with a target (first one wins)."""
    from app.translate.glossary import merge

    return [e for e in merge(list(glossary), project.glossary, project.memory.glossary()) if e.target.strip()]


def names_not_used(project: Project, glossary: Sequence[GlossaryEntry] = ()) -> list[Finding]:
    from app.translate.glossary import occurs

    entries = name_entries(project, glossary)
    out = []
    for page, b in _blocks(project):
        if not b.translation.strip():
            continue
        for e in entries:
            if occurs(e.source, b.display_text) and e.target.casefold() not in b.translation.casefold():
                out.append(Finding(page.name, b.id, b.order, "name",
                                   f"“{e.source}” should be “{e.target}”: “{_short(b.translation)}”"))
    return out


def untranslated(project: Project) -> list[Finding]:
    out = []
    for page, b in _blocks(project):
        if b.looks_untranslated:
            out.append(Finding(page.name, b.id, b.order, "untranslated",
                               f"the answer “{_short(b.machine_translation)}” is not a translation; translate it again"))
        elif b.translation.strip() and normalise(b.translation) == normalise(b.display_text) \
                and any(ord(c) > 0x2e7f for c in b.display_text):
            out.append(Finding(page.name, b.id, b.order, "untranslated",
                               f"the translation is the source “{_short(b.display_text)}”"))
        elif b.needs_translation and not b.looks_degenerate:
            out.append(Finding(page.name, b.id, b.order, "untranslated",
                               f"“{_short(b.display_text)}” has no translation"))
    return out


def degenerate(project: Project) -> list[Finding]:
    """Answers that looked degenerate, and translations that cannot be one of their source."""
    from app.translate.judge import one_answer

    out = []
    for page, b in _blocks(project):
        if b.looks_degenerate:
            out.append(Finding(page.name, b.id, b.order, "degenerate",
                               f"the answer “{_short(b.machine_translation)}” looks degenerate; translate it again"))
        elif b.translation.strip() and (why := one_answer(b.display_text, b.translation)):
            out.append(Finding(page.name, b.id, b.order, "degenerate",
                               f"“{_short(b.translation)}” for “{_short(b.display_text)}”: {why}"))
    return out


def repeated(project: Project) -> list[Finding]:
    """Blocks sharing one translation with many different source lines (app.translate.judge)."""
    from app.translate.judge import repeated as shared

    blocks = {(page.name, b.id): (page, b) for page, b in _blocks(project) if b.translation.strip()}
    why = shared({f"{name}\t{bid}": (b.display_text, b.translation) for (name, bid), (_p, b) in blocks.items()},
                 times=2)
    out = []
    for key, text in why.items():
        page, b = blocks[tuple(key.split("\t", 1))]
        out.append(Finding(page.name, b.id, b.order, "repeated", f"{text}; “{_short(b.display_text)}” here"))
    return out


def check_text(project: Project, glossary: Sequence[GlossaryEntry] = ()) -> list[Finding]:
    """The checks that need no page image."""
    return [*inconsistent(project), *names_not_used(project, glossary), *untranslated(project),
            *degenerate(project), *repeated(project)]


def layout_findings(page: Page, image, project: Project, options=None) -> list[Finding]:
    """Blocks of `page` lettered below their minimum size or clipped, as the export letters
    them (the translation text mode)."""
    from app.core.exports.translated_pages import RenderOptions, render_blocks
    from app.render.page import PageRenderer

    options = options or RenderOptions()
    renderer = PageRenderer(image, None, options.lang, options.target_lang)  # no cleaning: no engine
    out = []
    for b in renderer.harmonise(render_blocks(page, project.style, options, project.sizes, project.outside)):
        layer = renderer.layer(b) if b.text.strip() else None
        if layer is None or layer.layout.fits:
            continue
        if layer.layout.overflow:
            out.append(Finding(page.name, b.id, b.order, "clipped",
                               f"does not fit even at {layer.layout.size} px and is cut to the bubble; shorten the "
                               "translation or enlarge the box"))
        else:
            out.append(Finding(page.name, b.id, b.order, "below_min",
                               f"set at {layer.layout.size} px, below the minimum {b.style.min_size} px"))
    return out


FIT_STATUS = {"clipped": "overflows", "below_min": "below minimum size"}  # a layout finding's block status


def fit_key(page: Page, project: Project, options=None) -> tuple:
    """What the lettering fit of `page` depends on besides its image: the blocks as the
    renderer takes them (text, box, style, sizes) and the options. Equal keys, equal fit."""
    from app.core.exports.translated_pages import RenderOptions, render_blocks

    options = options or RenderOptions()
    return (tuple(render_blocks(page, project.style, options, project.sizes, project.outside)), options)


def fit_statuses(page: Page, image, project: Project, options=None) -> dict[str, str]:
    """block id -> "overflows" (does not fit at all, cut to the bubble) or "below minimum size",
    for the lettered blocks of `page` that do not fit as the export letters them (layout_findings)."""
    return {f.block: FIT_STATUS[f.kind] for f in layout_findings(page, image, project, options)}


def check_layout(project: Project, load_image: Callable[[str], object], options=None,
                 cancel: Callable[[], bool] | None = None,
                 progress: Callable[[int, int], None] | None = None) -> tuple[list[Finding], list[tuple[str, str]]]:
    """Layout findings of every page with a translation; `load_image(name)` gives its image
    (UserError / OSError: the page is skipped and named). Returns (findings, skipped)."""
    from app.errors import UserError

    pages = [p for p in project.pages if any(b.translation.strip() for b in p.blocks)]
    out, skipped = [], []
    for i, page in enumerate(pages):
        if cancel is not None and cancel():
            raise Cancelled()
        try:
            image = load_image(page.name)
        except (UserError, OSError) as exc:
            skipped.append((page.name, str(exc)))
            continue
        out.extend(layout_findings(page, image, project, options))
        if progress is not None:
            progress(i + 1, len(pages))
    return out, skipped


def sort_findings(project: Project, findings: Iterable[Finding]) -> list[Finding]:
    index = {p.name: i for i, p in enumerate(project.pages)}
    return sorted(findings, key=lambda f: (index.get(f.page, 1 << 30), f.order, KINDS.index(f.kind)))


def check_project(project: Project, glossary: Sequence[GlossaryEntry] = (), layout: bool = True, options=None,
                  cancel=None, progress=None, text: bool = True) -> tuple[list[Finding], list[tuple[str, str]]]:
    """Every finding of the project (the text checks unless not `text`, the layout checks
    unless not `layout`), in page and reading order, and the pages whose image could not be
    read for the layout check (name, why)."""
    findings = check_text(project, glossary) if text else []
    skipped: list[tuple[str, str]] = []
    if layout:
        from app.core.sources.source import open_source
        from app.errors import UserError

        try:
            source = open_source(project.source)
        except (UserError, OSError) as exc:
            skipped = [("*", f"{project.source}: the pages cannot be opened ({exc}); the layout was not checked")]
        else:
            try:
                more, skipped = check_layout(project, source.load, options, cancel, progress)
                findings += more
            finally:
                source.close()
    return sort_findings(project, findings), skipped
