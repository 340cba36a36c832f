"""Translation against the real llama.cpp server: prompt tokens per page, the share served from
the server's prompt cache, seconds per page and time to the first token.

    python bench/translation_real.py [--pages 8] [--context-pages 1 2] [--ctx 4096]

The server and model come from `make llama-server` (tools/llama_server.py). The text is the
Japanese of the first pages of the OpenMantra development books (../shared/openmantra-dev, read
here only; CC BY-NC 4.0, never copied into the repository); without it, the tests' small pages.
Each run starts a fresh server (an empty cache), then translates the pages one request each
through the app's own stage (app.core.translation.run) and backend, as `hayai-desktop translate`
does. Figures per page come from the server's own timings (prompt_n / cache_n) as the backend
reads them, and the cached share is cache_n / (prompt_n + cache_n).
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.document.types import Block, Page, Project  # noqa: E402
from app.core.translation.run import TranslateOptions, translate_pages  # noqa: E402
from app.translate import TranslatorSettings  # noqa: E402
from app.translate.capabilities import CapabilityStore  # noqa: E402
from app.translate.openai_backend import OpenAITranslator  # noqa: E402
from tests.llama import ALIAS, HOW, LlamaServer, found  # noqa: E402

SHARED = ROOT.parent / "shared" / "openmantra-dev" / "annotation.json"


def volume(pages: int) -> tuple[Project, str]:
    if SHARED.is_file():
        books = json.loads(SHARED.read_text(encoding="utf-8"))
        out, book = [], books[0]
        for p in book["pages"][:pages]:
            blocks = tuple(Block(id=f"b{i + 1}", order=i + 1, kind="bubble", box=(0.0, 0.0, 1.0, 1.0),
                                 ocr_text=t["text_ja"]) for i, t in enumerate(p["text"]) if t["text_ja"].strip())
            out.append(Page(name=f"{p['page_index']:03d}.jpg", width=1, height=1, blocks=blocks, processed=True))
        return Project(source="/bench/openmantra", pages=out), f"OpenMantra {book['book_title']}, first {pages} pages"
    from tests.translate_data import PAGES, make_project

    return make_project(texts=(PAGES * 4)[:pages]), f"the tests' pages x{pages}"



def run(context_pages: int, pages: int, ctx: int) -> dict:
    project, label = volume(pages)
    server = LlamaServer(ctx=ctx)
    tr = OpenAITranslator(TranslatorSettings(base_url=server.base_url, model=ALIAS, timeout=120.0, max_retries=0,
                                             source_lang="ja", target_lang="en", temperature=0.0,
                                             context_pages=context_pages), None, store=CapabilityStore(None))
    rows = []
    try:
        start = time.monotonic()
        for o in translate_pages(project, tr, options=TranslateOptions(context_pages=context_pages)):
            prompt = o.prompt_tokens
            rows.append({"page": o.name, "blocks": len(o.texts) + len(o.missing), "translated": len(o.texts),
                         "untranslated": len(o.untranslated), "requests": o.requests, "prompt_tokens": prompt,
                         "cached_tokens": o.cached_tokens, "evaluated": max(0, prompt - o.cached_tokens),
                         "cached_share": round(o.cached_tokens / prompt, 3) if prompt else 0.0,
                         "seconds": round(o.seconds, 2), "first_token_s": round(o.first_token_s, 2),
                         "completion_tokens": o.completion_tokens, "error": o.error})
        wall = time.monotonic() - start
    finally:
        tr.close()
        server.stop()
    later = rows[2:] or rows
    return {"context_pages": context_pages, "text": label, "pages": rows, "wall_s": round(wall, 1),
            "mean_cached_share_from_page_3": round(sum(r["cached_share"] for r in later) / len(later), 3),
            "min_cached_share_from_page_3": min((r["cached_share"] for r in later), default=0.0),
            "mean_seconds_per_page": round(sum(r["seconds"] for r in rows) / len(rows), 2),
            "mean_first_token_s": round(sum(r["first_token_s"] for r in rows) / len(rows), 2),
            "blocks": sum(r["blocks"] for r in rows), "translated": sum(r["translated"] for r in rows),
            "looks_untranslated": sum(r["untranslated"] for r in rows)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=8)
    ap.add_argument("--context-pages", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--ctx", type=int, default=4096)
    ap.add_argument("--json", help="write the figures here too")
    ns = ap.parse_args()
    if found() is None:
        print(HOW, file=sys.stderr)
        return 2
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    results = {"cpu": cpu, "runs": [run(c, ns.pages, ns.ctx) for c in ns.context_pages]}
    for r in results["runs"]:
        print(f"\ncontext pages {r['context_pages']} ({r['text']}; CPU {cpu}):")
        print(f"{'page':>8} {'blocks':>6} {'ok':>4} {'echo':>4} {'req':>4} {'prompt':>7} {'cached':>7} {'share':>6} "
              f"{'s/page':>7} {'1st tok':>7}")
        for row in r["pages"]:
            print(f"{row['page']:>8} {row['blocks']:>6} {row['translated']:>4} {row['untranslated']:>4} "
                  f"{row['requests']:>4} {row['prompt_tokens']:>7} {row['cached_tokens']:>7} "
                  f"{row['cached_share']:>6.0%} {row['seconds']:>7.2f} {row['first_token_s']:>7.2f}"
                  + (f"  {row['error']}" if row["error"] else ""))
        print(f"cached share from page 3: mean {r['mean_cached_share_from_page_3']:.0%}, "
              f"min {r['min_cached_share_from_page_3']:.0%}; {r['mean_seconds_per_page']:.2f} s/page, first token "
              f"{r['mean_first_token_s']:.2f} s; {r['translated']}/{r['blocks']} blocks translated, "
              f"{r['looks_untranslated']} looked untranslated")
    if ns.json:
        Path(ns.json).write_text(json.dumps(results, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
