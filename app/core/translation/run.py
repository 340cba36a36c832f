"""The translation stage: pages of a project -> machine translations, page by page.

One code path for the GUI's translation worker and the `translate` / `ocr --translate`
commands. For each page: the blocks that need a translation become segments (reading order),
the previous `context_pages` pages' (source, translation) pairs go along as context (nearest
last, trimmed to the token budget by the backend), and the glossary entries whose source term
occurs on the page or in that context go with it. The result of each page is yielded at once
(the caller saves it), so nothing already received is lost when a later page fails or the run
is cancelled.

Resume: pages already translated (every block with text has a translation) are skipped unless
`retranslate`; on a page that is translated again, the user's own translations
(`Block.translation_edited`) are kept unless `replace_edited`. A page that fails is reported
with its error and the run goes on; an error that every later page would hit too (a refused
key, an unknown model, a server that cannot be reached) ends the run, each remaining page
reported as not attempted.

A selection (`TranslateOptions.blocks`: (page name, block id) pairs) sends only those blocks,
translated already or not (the user's own translations are still kept unless
`replace_edited`); the other blocks of their pages are not touched and go along as context
(the page's translated blocks, as the nearest context page), with the previous pages and the
glossary as for a whole page.

The run judges its answers as a whole (app.translate.judge): one text for many different
sources, an answer far shorter than its source, one word for a sentence "looks degenerate". Such
an answer is treated as one that looks untranslated: not used nor counted, its blocks asked for
once more, then reported (`PageOutcome.degenerate`, the page and block numbers in the summary)
and flagged on the block; the story memory the model proposed with such a page is not used.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from app.core.document.edits import apply_machine_translations
from app.core.document.types import Page, Project
from app.errors import Cancelled
from app.translate import glossary as glossaries
from app.translate.base import (
    ContextPage,
    GlossaryEntry,
    Segment,
    TranslationError,
    Translator,
    TranslatorSettings,
)
from app.translate.judge import RunJudge
from app.translate.memory import StoryMemory

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TranslateOptions:
    context_pages: int = 2
    retranslate: bool = False  # translate pages that are translated already
    replace_edited: bool = False  # replace the user's own translations too
    memory: bool = True  # send the project's story memory and merge what the model proposes
    # only these (page name, block id) are sent (None: every block that needs one); see the module doc
    blocks: frozenset[tuple[str, str]] | None = None


@dataclass(frozen=True)
class PageOutcome:
    """What happened to one page. `page` is the page with the translations applied (the input
    page when nothing was applied); `texts` the block id -> machine translation received;
    `missing` the block ids left untranslated; `error` why the page failed (None = it did not);
    `skipped` why it was not attempted."""

    name: str
    page: Page
    texts: Mapping[str, str] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    error: str | None = None
    skipped: str | None = None
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    notes: tuple[str, ...] = ()
    translator: str = ""
    fatal: bool = False  # the error ends the run (see the module doc)
    untranslated: Mapping[str, str] = field(default_factory=dict)  # block id -> an answer that is not one
    reasons: Mapping[str, str] = field(default_factory=dict)  # block id -> why it is missing
    cached_tokens: int = 0
    first_token_s: float = 0.0
    memory: StoryMemory | None = None  # the project's story memory after this page, when it changed
    image_sent: bool = False  # the page image went with the request
    # block id -> an answer that looks degenerate (app.translate.judge): never in `texts`, its id
    # is in `missing` and its reason in `reasons`
    degenerate: Mapping[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.missing

    @property
    def problem(self) -> bool:
        """Something on the page was not translated (an error, missing or untranslated blocks,
        or not attempted for a reason other than not being read yet)."""
        return bool(self.error or self.missing or (self.skipped and not self.skipped.startswith("not read")))

    def summary(self) -> str:
        """One line for the user: what went wrong on this page ("" when nothing did)."""
        parts = []
        if self.texts and (self.error or self.missing):
            parts.append(f"{len(self.texts)} block(s) translated")
        if self.error:
            parts.append(self.error)
        if self.untranslated:
            parts.append(f"looks untranslated: block(s) {', '.join(sorted(self.untranslated, key=_natural))}")
        if self.degenerate:
            why = sorted({self.reasons.get(b, "") for b in self.degenerate} - {""})
            parts.append(f"looks degenerate: block(s) {self.numbers(self.degenerate)}"
                         + (f" ({'; '.join(w.removeprefix('looks degenerate: ') for w in why)})" if why else ""))
        other = [b for b in self.missing if b not in self.untranslated and b not in self.degenerate]
        if other and not self.error:
            why = sorted({self.reasons.get(b, "no translation in the answer") for b in other})
            parts.append(f"no translation for block(s) {', '.join(other)} ({'; '.join(why)})")
        if self.skipped and not parts:
            parts.append(self.skipped)
        return "; ".join(parts)


    def numbers(self, ids) -> str:
        """The blocks' numbers on the page (reading order) with their ids: "3 (b3), 5 (m2)"."""
        order = {b.id: b.order for b in self.page.blocks}
        return ", ".join(f"{order[i]} ({i})" if i in order else i
                         for i in sorted(ids, key=lambda i: (order.get(i, 1 << 30), _natural(i))))


@dataclass(frozen=True)
class TranslateProgress:
    pages_done: int
    pages_total: int
    failed: int
    current: str = ""
    tokens: int = 0  # tokens of the current page's answer so far (streaming servers)


def _natural(text: str):
    import re

    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def capabilities_file() -> str:
    """Where what each server + model accepts is remembered (beside settings.json)."""
    from app.core.config.settings import config_dir

    return str(config_dir() / "llm-capabilities.json")


def translator_settings_from(app, timeout: float | None = None, max_retries: int = 2,
                             total_timeout: float | None = None, max_tokens: int = 0) -> TranslatorSettings:
    """The backend settings of AppSettings' translation fields (the GUI's choices; the CLI fills
    the same fields from its flags). An OpenAI-compatible server without a URL or model gets the
    preset's (api.openai.com by default)."""
    from app.translate.presets import PRESETS_BY_NAME, preset_for_url

    base_url, model = app.translation_base_url, app.translation_model
    if app.translation_provider == "openai":
        preset = PRESETS_BY_NAME.get(app.translation_preset) or preset_for_url(base_url)
        base_url = base_url or preset.base_url or PRESETS_BY_NAME["openai"].base_url
        model = model or preset_for_url(base_url).model
    timeout = float(timeout if timeout is not None else getattr(app, "translation_timeout", 60.0) or 60.0)
    page_image = getattr(app, "translation_page_image", "auto") or "auto"
    if total_timeout is None:
        total_timeout = float(getattr(app, "translation_total_timeout", 0.0) or 0.0)
    return TranslatorSettings(provider=app.translation_provider, base_url=base_url, model=model,
                              source_lang=app.translation_source, target_lang=app.translation_target or "en",
                              context_pages=app.translation_context_pages, timeout=timeout, max_retries=max_retries,
                              total_timeout=total_timeout, max_tokens=max_tokens,
                              capabilities_file=capabilities_file(), page_image=page_image,
                              memory=bool(getattr(app, "translation_memory", True)))


class PageImages:
    """page name -> the page's image, read from the project's source when a backend asks for it
    (None when the source cannot be opened: the request then goes as text only)."""

    def __init__(self, source: str):
        self.source_path = source
        self._source = None
        self._failed = False

    def __call__(self, name: str):
        if self._failed or not self.source_path:
            return None
        if self._source is None:
            from app.core.sources.source import open_source

            try:
                self._source = open_source(self.source_path)
            except Exception as exc:  # noqa: BLE001 - no image: text only, said once
                self._failed = True
                log.info("%s: page images not available for translation (%s)", self.source_path, exc)
                return None
        return self._source.load(name)

    def close(self) -> None:
        if self._source is not None:
            self._source.close()
            self._source = None


def pages_to_translate(project: Project, names: Sequence[str] | None = None, retranslate: bool = False,
                       blocks: frozenset[tuple[str, str]] | None = None) -> list[str]:
    """The pages a run would work on: `names` (default all) minus those translated already; with
    `blocks`, the pages (of `names`) that hold one of them, translated or not."""
    wanted = list(names) if names is not None else [p.name for p in project.pages]
    by_name = {p.name: p for p in project.pages}
    if blocks is not None:
        chosen = {name for name, _bid in blocks}
        return [n for n in wanted if n in by_name and n in chosen]
    return [n for n in wanted if n in by_name and (retranslate or not by_name[n].translated)]


def parse_page_range(text: str, count: int) -> list[int]:
    """1-based page numbers of "3-7", "1,4,9-12", "5-" (to the end) or "-3" (from the first),
    within 1..`count`, in order, each once. Raises UserError naming what is wrong."""
    from app.errors import UserError

    out: list[int] = []
    parts = [p.strip() for p in text.replace(" ", "").split(",") if p.strip()]
    if not parts:
        raise UserError(f"no pages in {text!r}: give page numbers such as 3-7 or 1,4,9-12")
    for part in parts:
        first, dash, last = part.partition("-")
        try:
            a = int(first) if first else 1
            b = (int(last) if last else count) if dash else a
        except ValueError:
            raise UserError(f"{part!r} is not a page number or range (such as 3-7, 5- or -3)") from None
        if a < 1 or b < a or b > count:
            raise UserError(f"pages {part!r}: the volume has pages 1 to {count}" if count else
                            "the volume has no pages")
        out += [n for n in range(a, b + 1) if n not in out]
    return out


def segments_of(page: Page, options: TranslateOptions) -> list[Segment]:
    """The page's blocks to translate, in reading order."""
    out = []
    chosen = options.blocks
    for b in sorted(page.blocks, key=lambda b: b.order):
        if not b.display_text.strip():
            continue
        if chosen is not None:
            if (page.name, b.id) not in chosen:
                continue
        elif not options.retranslate and not b.needs_translation:
            continue
        if b.translation_edited and not options.replace_edited:
            continue
        out.append(Segment(b.id, b.display_text, tuple(b.box)))
    return out


def context_for(pages: Sequence[Page], index: int, count: int) -> list[ContextPage]:
    """Up to `count` pages before `index` that have translated text, oldest first (the stage
    offers the backend several times the pages it sends, so that a backend keeping its requests'
    start the same from page to page, for the server's prompt cache, can keep earlier ones)."""
    out: list[ContextPage] = []
    i = index - 1
    while i >= 0 and len(out) < count:
        page = pages[i]
        pairs = tuple((b.display_text, b.translation) for b in sorted(page.blocks, key=lambda b: b.order)
                      if b.display_text.strip() and b.translation.strip())
        if pairs:
            out.insert(0, ContextPage(page.name, pairs))
        i -= 1
    return out


def translate_pages(project: Project, translator: Translator, names: Sequence[str] | None = None,
                    glossary: Sequence[GlossaryEntry] = (), options: TranslateOptions | None = None,
                    progress: Callable[[TranslateProgress], None] | None = None,
                    cancel: Callable[[], bool] | None = None,
                    page_image: Callable[[str], object] | None = None, tm=None) -> Iterator[PageOutcome]:
    """Translate `names` of `project` (default: those not translated yet), yielding each page's
    outcome as soon as it is known. `project` is not modified; context comes from it plus the
    pages translated earlier in this run, and the story memory from the project's, updated with
    what the model proposes page after page (each outcome that changed it carries it).
    `page_image(name)`: the page's image (PIL) for backends that send it, None when there is
    none. Raises Cancelled when `cancel()` turns True.

    `tm`: a translation memory (app.core.translation.translation_memory.TranslationMemory): blocks whose source it has
    exactly are filled from it without a request (translator "translation memory"; not when
    `replace_edited`), and its close matches go to the backend as examples when the backend
    takes them."""
    options = options or TranslateOptions()
    todo = pages_to_translate(project, names, options.retranslate, options.blocks)
    pages = list(project.pages)
    index_of = {p.name: i for i, p in enumerate(pages)}
    failed = 0
    fatal: str | None = None
    memory = [project.memory if options.memory else None]
    judge = RunJudge()

    def report(done: int, current: str = "") -> None:
        if progress is not None:
            progress(TranslateProgress(done, len(todo), failed, current))

    report(0)
    for done, name in enumerate(todo):
        if cancel is not None and cancel():
            raise Cancelled("cancelled")
        i = index_of[name]
        page = pages[i]
        report(done, name)
        if fatal is not None:
            outcome = PageOutcome(name, page, skipped=f"not attempted: {fatal}")
        elif not page.processed or page.error:
            outcome = PageOutcome(name, page, skipped="not read yet (run detection + OCR first)" if not page.error
                                  else f"page error: {page.error}")
        else:
            def tokens(n: int, done=done, name=name, failed=failed) -> None:
                if progress is not None:
                    progress(TranslateProgress(done, len(todo), failed, name, n))

            if tm is not None:
                outcome = _with_memory(page, pages, i, translator, glossary, options, cancel, tokens, tm, memory,
                                       page_image, judge)
            else:
                outcome = _translate_one(page, pages, i, translator, glossary, options, cancel, tokens, memory,
                                         page_image, judge=judge)
            if outcome.fatal:
                fatal = outcome.error
        if outcome.problem:
            failed += 1
        pages[i] = outcome.page
        yield outcome
    report(len(todo))


def _with_memory(page: Page, pages: list[Page], index: int, translator: Translator,
                 glossary: Sequence[GlossaryEntry], options: TranslateOptions, cancel, on_tokens, tm,
                 memory: list | None = None, page_image=None, judge: RunJudge | None = None) -> PageOutcome:
    """The translation memory's exact matches filled in first, the rest requested (with the
    memory's close matches as examples, when the backend takes them)."""
    import inspect

    from app.core.translation import translation_memory as memories

    segments = segments_of(page, options)
    # asked to replace the user's own translations: the memory (which holds them) fills nothing
    filled = {} if options.replace_edited else memories.fill_page(page, tm, [s.id for s in segments])
    if filled:
        page = apply_machine_translations(page, filled, memories.LABEL, options.replace_edited)
    rest = [s for s in segments if s.id not in filled]
    extra = {}
    if rest and "examples" in inspect.signature(translator.translate_page).parameters:
        extra["examples"] = memories.examples_for(tm, [s.text for s in rest])
    outcome = _translate_one(page, pages, index, translator, glossary, options, cancel, on_tokens, memory,
                             page_image, segments=rest, judge=judge, **extra)
    if not filled:
        return outcome
    from dataclasses import replace as _replace

    return _replace(outcome, texts={**filled, **outcome.texts},
                    translator=outcome.translator if rest else memories.LABEL)


def _translate_one(page: Page, pages: list[Page], index: int, translator: Translator,
                   glossary: Sequence[GlossaryEntry], options: TranslateOptions, cancel, on_tokens=None,
                   memory: list | None = None, page_image=None, segments=None, judge: RunJudge | None = None,
                   **extra) -> PageOutcome:
    segments = segments_of(page, options) if segments is None else segments
    if not segments:
        return PageOutcome(page.name, page, translator=translator.name)
    offered = context_for(pages, index, options.context_pages * 4) if options.context_pages > 0 else []
    near = offered[-options.context_pages:] if options.context_pages > 0 else []
    if options.blocks is not None:  # a selection: the page's other translated blocks are its nearest context
        sent = {s.id for s in segments}
        pairs = tuple((b.display_text, b.translation) for b in sorted(page.blocks, key=lambda b: b.order)
                      if b.id not in sent and b.display_text.strip() and b.translation.strip())
        if pairs:
            offered, near = [*offered, ContextPage(page.name, pairs)], [*near, ContextPage(page.name, pairs)]
    texts = [s.text for s in segments] + [src for c in near for src, _t in c.pairs]
    terms = glossaries.relevant(glossary, texts)
    start = time.monotonic()
    story = memory[0] if memory else None
    image = None
    if page_image is not None and getattr(translator, "takes_images", lambda: False)():
        try:
            image = page_image(page.name)
        except Exception as exc:  # noqa: BLE001 - a page image that cannot be read: text only
            log.info("page %s: no page image for the translation (%s)", page.name, exc)
    try:
        result = translator.translate_page(segments, offered, terms, cancel=cancel, page_name=page.name,
                                           on_tokens=on_tokens, memory=story, page_image=image, **extra)
    except TranslationError as exc:
        log.info("page %s: %s", page.name, exc)  # the caller reports it (once)
        return PageOutcome(page.name, page, error=str(exc), seconds=time.monotonic() - start,
                           translator=translator.name, fatal=exc.fatal)
    except Cancelled:
        raise
    label = result.translator or translator.name
    texts, missing, reasons = dict(result.texts), list(result.missing), dict(result.reasons)
    notes, requests = list(result.notes), result.requests
    prompt, completion = result.prompt_tokens, result.completion_tokens
    degenerate: dict[str, str] = {}
    if judge is not None:
        sources = {s.id: s.text for s in segments}
        pairs = {k: (sources[k], v) for k, v in texts.items() if k in sources}
        bad = judge.degenerate(pairs)
        judge.accept({k: v for k, v in pairs.items() if k not in bad})
        if bad:  # asked again, once, for those blocks alone
            notes.append(f"{len(bad)} answer(s) look degenerate ({'; '.join(sorted(set(bad.values())))}); asked again")
            again = None
            try:
                again = translator.translate_page([s for s in segments if s.id in bad], offered, terms, cancel=cancel,
                                                  page_name=page.name, on_tokens=on_tokens, memory=None,
                                                  page_image=image, **extra)
            except TranslationError as exc:
                notes.append(f"asking again failed: {exc}")
            answers = {k: texts.pop(k) for k in bad}
            if again is not None:
                requests += again.requests
                prompt, completion = prompt + again.prompt_tokens, completion + again.completion_tokens
                retry = {k: (sources[k], v) for k, v in again.texts.items() if k in bad}
                still = judge.degenerate(retry)
                good = {k: v for k, v in retry.items() if k not in still}
                judge.accept(good)
                texts.update({k: answer for k, (_src, answer) in good.items()})
                answers.update({k: answer for k, (_src, answer) in retry.items() if k in still})
                bad = {k: still.get(k, why) for k, why in bad.items() if k not in good}
            degenerate = {k: answers[k] for k in bad}
            missing = [k for k in missing if k not in texts] + [k for k in bad if k not in missing]
            reasons.update({k: f"looks degenerate: {why}" for k, why in bad.items()})
            for k in texts:
                reasons.pop(k, None)
    untranslated = {k: v for k, v in result.untranslated.items() if k not in texts}
    new_page = apply_machine_translations(page, texts, label, options.replace_edited,
                                          untranslated=untranslated, degenerate=degenerate)
    for note in notes:
        log.info("page %s: %s", page.name, note)
    if result.error:
        log.info("page %s: %s (kept %d block(s) already received)", page.name, result.error, len(result.texts))
    changed = None
    if degenerate and result.memory is not None:  # what a degenerate answer proposed is not the story
        notes.append("the story memory proposed with this page's answers was not used (answers look degenerate)")
    elif story is not None and result.memory is not None:
        merged = story.merged(result.memory)
        if merged != story:
            memory[0] = changed = merged
    return PageOutcome(page.name, new_page, texts, tuple(missing), result.error or None, None,
                       requests, prompt, completion, time.monotonic() - start,
                       tuple(notes), label, result.fatal, untranslated, reasons,
                       result.cached_tokens, result.first_token_s, changed, result.image_sent, degenerate=degenerate)
