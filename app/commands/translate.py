"""`hayai-desktop translate`: machine translation of a JSON export or of a source's project,
through the same stage the GUI runs (app.core.translation.run).

    hayai-desktop translate INPUT --to LANG [--from LANG] [--provider openai|deepl|offline]
        [--base-url URL] [--model NAME] [--glossary FILE] [--context-pages N]
        [--out FILE] [--format json|txt] [--timeout S] [--total-timeout S] [--max-tokens N]
        [--retries N] [--retranslate] [--replace-edited] [--trust-unpinned] [--series FILE]
        [--pages 3-7]

INPUT is a JSON export (as `ocr` and the GUI write it) or a folder / archive whose project file
holds its text (pages not read yet are skipped: read them in the app, or run
`hayai-desktop ocr SOURCE --out pages.json` and translate that export). The output is the
same JSON export (or TXT with translations) with every block's translation filled, to --out or
stdout; with a source, its project file is saved after every page, so a run that stops keeps
what it got, and the next run resumes (pages already translated are skipped unless
--retranslate; translations edited by hand are kept unless --replace-edited). --pages 3-7 (or
1,4,9-12, 5-) translates only those pages (numbered from 1 in the volume's order), as the GUI's
Translate > Translate pages… does.

The backend is --provider, else the one chosen in the GUI's Translation settings; with neither,
nothing is sent anywhere and the command stops. Keys come from the environment
(OPENAI_API_KEY, DEEPL_AUTH_KEY, DEEPSEEK_API_KEY, ...) or the key stored by the GUI, never from
the command line. An answer that is not a translation (the source copied back, or still in the
source's script) is reported as "looks untranslated", and one that looks degenerate (one word
for a sentence, an answer far shorter than its source, one text for many different lines) as
"looks degenerate": neither is counted, and both are asked for again by the next run. The series file (`.hayai-series.json` beside the volume or up to two folders above, or
--series FILE) gives a new volume the series' glossary, memory and style; lines the series'
translation memory has exactly are filled from it without a request, and what the volume
learned (approved translations, glossary, memory) is written back to it. Exit status: 0 when every block was translated, 1 when some were not (after writing
all that were), 2 for a usage or setup error.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from app.errors import UserError


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("translate", help="machine-translate a JSON export or a source's project",
                              description=__doc__.split("\n\n", 2)[2],
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", metavar="INPUT", help="a JSON export, or a folder / CBZ / image with its project file")
    add_translation_options(p, model_flag="--model")
    p.add_argument("--out", help="output file (default: stdout)")
    p.add_argument("--format", choices=("json", "txt"), help="output format (default: from --out's suffix, else json)")
    p.add_argument("--pages", dest="page_range", metavar="RANGE",
                   help="only these pages, numbered from 1: 3-7, 1,4,9-12, 5- (default: every page)")
    p.add_argument("--series", metavar="FILE",
                   help="the series file (default: .hayai-series.json beside the volume or up to two folders above)")
    p.set_defaults(run=run)
    return p


def add_translation_options(p, model_flag: str) -> None:
    """The backend options shared by `translate` and `ocr --translate`; `model_flag` names the
    chat / offline model option (--model for translate, --translation-model for ocr)."""
    g = p.add_argument_group("translation")
    g.add_argument("--to", dest="target", metavar="LANG", help="target language, e.g. en (default: the GUI's)")
    g.add_argument("--from", dest="source_lang", metavar="LANG", help="source language (default: detected)")
    g.add_argument("--provider", choices=("openai", "deepl", "offline"),
                   help="openai: any OpenAI-compatible server; deepl; offline: MarianMT on this machine")
    g.add_argument("--base-url", help="the server's URL, e.g. http://localhost:11434/v1 for Ollama")
    g.add_argument(model_flag, dest="translation_model", metavar="NAME",
                   help="chat model name, or the offline model (store name or folder)")
    g.add_argument("--glossary", metavar="FILE", help="glossary file (TSV, 'a -> b # note' lines, or JSON)")
    g.add_argument("--context-pages", type=int, metavar="N", help="previous pages sent as context (default 2)")
    g.add_argument("--timeout", type=float, default=None,
                   help="seconds to wait for the server's next chunk (default: the app's setting, 60)")
    g.add_argument("--total-timeout", type=float, default=None,
                   help="seconds for a whole answer (default: 600 for local servers, 180 for hosted)")
    g.add_argument("--max-tokens", type=int, default=0,
                   help="limit of each answer in tokens (default: from the page's length)")
    g.add_argument("--retries", type=int, default=2, help="retries of rate limits (429) and 502/503/504 (default 2)")
    g.add_argument("--page-image", choices=("auto", "on", "off"), default=None,
                   help="send the page image with its boxes numbered: auto = when the model takes images "
                        "(found on the first request, remembered); default: the app's setting (auto)")
    g.add_argument("--memory", choices=("on", "off"), default=None,
                   help="the story memory (characters, terms, summary) sent with each page and updated from "
                        "the answers (default: the app's setting, on)")
    g.add_argument("--retranslate", action="store_true", help="translate pages that are translated already")
    g.add_argument("--replace-edited", action="store_true", help="also replace translations edited by hand")
    g.add_argument("--trust-unpinned", action="store_true",
                   help="offline: accept the model files' hashes on first use (they are not pinned yet)")
    g.add_argument("--use-env-key", action="store_true",
                   help="send the provider's environment key (e.g. $OPENAI_API_KEY) to --base-url for this run "
                        "(by default it goes only to the provider's own servers)")
    g.add_argument("--allow-insecure-http", action="store_true",
                   help="allow sending a key over plain http:// to another machine (loopback needs no flag)")


def translator_settings(args, app=None):
    """TranslatorSettings from the flags, falling back to the GUI's saved choices."""
    from app.core.config.settings import load_settings
    from app.core.translation.run import translator_settings_from

    app = app or load_settings()
    provider = args.provider or app.translation_provider
    if not provider:
        raise UserError("no translation backend chosen: pass --provider openai|deepl|offline (or choose one in the "
                        "app's Translation settings). Nothing was sent anywhere.")
    if args.context_pages is not None and not 0 <= args.context_pages <= 20:
        raise UserError(f"--context-pages must be between 0 and 20, got {args.context_pages}")
    if (args.timeout is not None and args.timeout <= 0) or args.retries < 0:
        raise UserError("--timeout must be positive and --retries at least 0")
    if (args.total_timeout is not None and args.total_timeout <= 0) or args.max_tokens < 0:
        raise UserError("--total-timeout must be positive and --max-tokens at least 0")
    same = provider == app.translation_provider
    chosen = replace(
        app, translation_provider=provider,
        translation_preset=app.translation_preset if same and not args.base_url else "",
        translation_base_url=args.base_url or (app.translation_base_url if same else ""),
        translation_model=args.translation_model or (app.translation_model if same else ""),
        translation_source=args.source_lang or app.translation_source,
        translation_target=args.target or app.translation_target,
        translation_context_pages=app.translation_context_pages if args.context_pages is None else args.context_pages,
        translation_page_image=getattr(args, "page_image", None) or app.translation_page_image,
        translation_memory=(app.translation_memory if getattr(args, "memory", None) is None
                            else args.memory == "on"))
    return translator_settings_from(chosen, timeout=args.timeout, max_retries=args.retries,
                                    total_timeout=args.total_timeout, max_tokens=args.max_tokens)


def make_translator_for(settings, trust_unpinned: bool = False, use_env_key: bool = False,
                        allow_insecure_http: bool = False):
    from app.core.config import api_keys
    from app.translate import make_translator

    key = None
    if settings.provider != "offline":
        found = api_keys.find_key(settings.provider, settings.base_url, use_env=use_env_key)
        if found.withheld:
            print(f"hayai-desktop: {api_keys.withheld_message(found, settings.provider, settings.base_url)}",
                  file=sys.stderr)
        key = found.key
        api_keys.check_transport(settings.provider, settings.base_url, key, allow_insecure_http)
    return make_translator(settings, key, trust_unpinned=trust_unpinned)


def key_flags(args) -> dict:
    return {"use_env_key": bool(getattr(args, "use_env_key", False)),
            "allow_insecure_http": bool(getattr(args, "allow_insecure_http", False))}


def glossary_for(project, path: str | None) -> list:
    from app.translate.glossary import load_glossary, merge

    return merge(project.glossary, load_glossary(path) if path else [])


def translate_project(project, args, save=None, stream=None, translator=None, tm=None, cancel=None,
                      progress=None, names=None):
    """Run the stage over `project` (modified in place, page by page); `save(project)` after
    each page. `translator`: one made by the caller and kept open for more projects (the
    `batch` command's volumes); by default one is made for this project and closed.
    `cancel()` -> True stops between pages and mid-request (app.errors.Cancelled);
    `progress(TranslateProgress)` is called besides the terminal's bar; `names`: only these
    pages (else --pages, else every page). The local API's jobs use the three.
    Returns (blocks translated, blocks not translated)."""
    from app.core.translation.run import PageImages, TranslateOptions, parse_page_range, translate_pages

    stream = stream or sys.stderr
    settings = translator_settings(args)
    if names is None and getattr(args, "page_range", None):  # `translate --pages` (eval-translation's --pages is a count)
        names = [project.pages[n - 1].name for n in parse_page_range(args.page_range, len(project.pages))]
    glossary = glossary_for(project, args.glossary)
    own = translator is None
    if own:
        translator = make_translator_for(settings, args.trust_unpinned, **key_flags(args))
    options = TranslateOptions(context_pages=settings.context_pages, retranslate=args.retranslate,
                               replace_edited=args.replace_edited, memory=settings.memory)
    images = PageImages(project.source) if settings.page_image != "off" else None
    done = left = degenerate = 0
    index = {p.name: i for i, p in enumerate(project.pages)}
    bar = _Progress(stream)

    def report(p) -> None:
        bar.update(p)
        if progress is not None:
            progress(p)

    try:
        for outcome in translate_pages(project, translator, names, glossary=glossary, options=options,
                                       progress=report, cancel=cancel,
                                       page_image=images, tm=tm):
            project.pages[index[outcome.name]] = outcome.page
            if outcome.memory is not None:
                project.memory = outcome.memory
            done += len(outcome.texts)
            degenerate += len(outcome.degenerate)
            if (outcome.texts or outcome.degenerate) and save is not None:
                save(project)
            if outcome.problem:
                left += sum(1 for b in outcome.page.blocks if b.needs_translation)
                bar.write(f"hayai-desktop: page {outcome.name}: {outcome.summary()}")
            elif outcome.skipped:
                bar.write(f"hayai-desktop: page {outcome.name}: skipped, {outcome.skipped}")
    finally:
        bar.close()
        if images is not None:
            images.close()
        if own:
            translator.close()
    print(f"hayai-desktop: {done} block(s) translated with {translator.name}"
          + (f"; {left} block(s) not translated (run again to resume)" if left else ""), file=stream)
    if degenerate:
        print(f"hayai-desktop: {degenerate} answer(s) looked degenerate (one word for a sentence, far shorter than "
              "the source, or one text for many different lines): not used nor counted. The model is not translating "
              "these lines; try a larger model, or check the server's settings (see the pages above)", file=stream)
    return done, left


class _Progress:
    """Pages done and the tokens of the page being translated, on a terminal (tqdm); nothing
    when the output is not one."""

    def __init__(self, stream):
        from tqdm import tqdm

        from app.commands.common import tqdm_size

        self.stream = stream
        self.bar = tqdm(total=0, unit="page", file=stream, disable=None, leave=False,
                        **tqdm_size(self.stream))

    def update(self, p) -> None:
        if self.bar.disable:
            return
        self.bar.total = p.pages_total
        self.bar.n = p.pages_done
        self.bar.set_postfix_str(f"{p.current}: {p.tokens} tokens" if p.current and p.tokens else p.current,
                                 refresh=False)
        self.bar.refresh()

    def write(self, line: str) -> None:
        if self.bar.disable:
            print(line, file=self.stream)
        else:
            self.bar.write(line, file=self.stream)

    def close(self) -> None:
        self.bar.close()


def _is_export(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() == ".json"


def run(args) -> int:
    from app.core.exports import json_txt
    from app.core.exports.json_read import read_json_export
    from app.core.project.files import open_project, save_project

    path = Path(args.input)
    if not path.exists():
        raise UserError(f"{path}: no such JSON export, folder, archive or image")
    translator_settings(args)  # usage errors before any work
    lock = None
    if _is_export(path):
        project, save = read_json_export(path), None
    else:
        from app.core.project.lock import ProjectLock

        lock = ProjectLock(path, "hayai-desktop translate")
        project = open_project(path)
        if not any(p.blocks for p in project.pages):
            raise UserError(f"{path}: no text to translate in its project (no page has been read). Read the "
                            f"pages in the app first, or run `hayai-desktop ocr {path} --out pages.json` and then "
                            f"`hayai-desktop translate pages.json --out translated.json` (or `hayai-desktop ocr "
                            f"{path} --translate --to LANG`).")
        save = save_project
        if project.read_only:
            print(f"hayai-desktop: {project.read_only}", file=sys.stderr)
            save = None
        elif not lock.acquire():  # one writer per project: the translations go to the output only
            print(f"hayai-desktop: {lock.message()} The translations are written to the output only.",
                  file=sys.stderr)
            save = None
    series_file, tm = _series(project, path, args, save)
    out = Path(args.out) if args.out else None
    fmt = args.format or ("txt" if out is not None and out.suffix.lower() == ".txt" else "json")

    def write() -> None:
        if out is not None:
            (json_txt.export_json if fmt == "json" else
             lambda p, o: json_txt.export_txt(p, o, translations=True))(project, out)
        elif fmt == "json":
            import json

            sys.stdout.write(json.dumps(json_txt.export_json_data(project), ensure_ascii=False, indent=2) + "\n")
        else:
            sys.stdout.write(json_txt.export_txt_text(project, translations=True))
        sys.stdout.flush()

    try:
        _done, left = translate_project(project, args, save=save, tm=tm)
    except KeyboardInterrupt:
        write()  # what arrived before the interruption is kept
        raise
    finally:
        if lock is not None:
            lock.release()
        if series_file is not None:
            from app.core.translation.series import learn_from

            learn_from(series_file, project)
    write()
    return 1 if left else 0


def _series(project, path: Path, args, save):
    """The series file (--series, else found beside the volume) and the translation memory of
    the run; a new volume takes the series' glossary, memory and style (saved at once)."""
    from app.core.translation import series as series_files
    from app.core.translation.translation_memory import memory_of

    found = Path(args.series) if getattr(args, "series", None) else series_files.find_series_file(path)
    if found is None:
        return None, memory_of(project)
    series = series_files.load_series(found)
    if series_files.start_volume(project, series):
        print(f"hayai-desktop: a new volume of the series {series.path}: took its glossary ({len(project.glossary)}), "
              f"memory and style", file=sys.stderr)
        if save is not None:
            save(project)
    return series.path, memory_of(project, series.tm)
